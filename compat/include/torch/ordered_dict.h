// <torch/ordered_dict.h> for ember: torch::OrderedDict is ember::OrderedDict.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
