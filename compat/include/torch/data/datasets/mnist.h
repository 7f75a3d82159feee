// <torch/data/datasets/mnist.h> for ember: torch::data::datasets::MNIST.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
