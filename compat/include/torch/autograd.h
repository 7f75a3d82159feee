// <torch/autograd.h> for ember: torch::autograd (grad, Function, AutogradContext, anomaly mode).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
