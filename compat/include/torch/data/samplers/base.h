// <torch/data/samplers/base.h> for ember: the torch::data::samplers libtorch declares here are ember::data's.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
