// <torch/data/datasets/shared.h> for ember: torch::data::datasets::SharedBatchDataset, make_shared_dataset.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
