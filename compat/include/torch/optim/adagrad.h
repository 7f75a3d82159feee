// <torch/optim/adagrad.h> for ember: torch::optim::Adagrad and AdagradOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
