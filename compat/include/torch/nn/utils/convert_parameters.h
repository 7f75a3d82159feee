// <torch/nn/utils/convert_parameters.h> for ember: parameters_to_vector, vector_to_parameters.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
