// <torch/data/transforms/lambda.h> for ember: torch::data::transforms (ember::data).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
