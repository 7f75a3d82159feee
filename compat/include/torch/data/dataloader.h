// <torch/data/dataloader.h> for ember: torch::data::make_data_loader and DataLoaderOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
