// <torch/data/datasets/stateful.h> for ember: torch::data::datasets::StatefulDataset.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
