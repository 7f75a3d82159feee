// <torch/optim/adamw.h> for ember: torch::optim::AdamW and AdamWOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
