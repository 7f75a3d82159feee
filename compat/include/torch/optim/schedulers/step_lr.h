// <torch/optim/schedulers/step_lr.h> for ember: torch::optim::StepLR.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
