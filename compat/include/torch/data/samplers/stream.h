// <torch/data/samplers/stream.h> for ember: torch::data::samplers::StreamSampler, BatchSize.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
