// <torch/data/transforms.h> for ember: torch::data::transforms (Stack, Normalize, Lambda, ...).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
