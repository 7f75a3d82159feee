// <torch/data/samplers/custom_batch_request.h> for ember: torch::data::samplers::CustomBatchRequest.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
