// ember::optim: optimizers, LR schedulers and training checkpoints — libtorch's torch/optim.h
// plus the Python-only schedulers (OneCycleLR, SequentialLR, ...) and ember::amp::GradScaler.
#pragma once

#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/adamw.h"
#include "ember/optim/checkpoint.h"
#include "ember/optim/grad_scaler.h"
#include "ember/optim/lbfgs.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/one_cycle_lr.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sequential_lr.h"
#include "ember/optim/sgd.h"
