// <torch/utils.h> for ember: torch::NoGradGuard, torch::manual_seed, torch::set_num_threads, ...
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
