// <torch/optim/schedulers/reduce_on_plateau_scheduler.h> for ember:
// torch::optim::ReduceLROnPlateauScheduler. All of ember's API comes with it, as ember has one
// public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
