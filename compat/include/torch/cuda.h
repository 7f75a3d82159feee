// <torch/cuda.h> for ember: torch::cuda::is_available(), device_count(), synchronize(), ...
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
