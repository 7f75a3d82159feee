// <torch/data/dataloader_options.h> for ember: torch::data::DataLoaderOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
