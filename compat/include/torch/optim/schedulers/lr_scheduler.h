// <torch/optim/schedulers/lr_scheduler.h> for ember: torch::optim::LRScheduler.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
