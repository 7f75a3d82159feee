// <torch/optim.h> for ember: torch::optim (optimizers, LR schedulers) is ember::optim.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
