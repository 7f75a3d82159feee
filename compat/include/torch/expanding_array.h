// <torch/expanding_array.h> for ember: torch::ExpandingArray is ember::ExpandingArray.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
