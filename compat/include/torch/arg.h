// <torch/arg.h> for ember: TORCH_ARG (ember's EMBER_ARG).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
