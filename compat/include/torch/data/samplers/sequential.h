// <torch/data/samplers/sequential.h> for ember: torch::data::samplers (ember::data).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
