// <torch/data/dataloader/stateless.h> for ember: torch::data::StatelessDataLoader.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
