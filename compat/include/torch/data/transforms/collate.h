// <torch/data/transforms/collate.h> for ember: torch::data::transforms::Collation, Collate.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
