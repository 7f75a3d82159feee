// <torch/serialize.h> for ember: torch::save / torch::load (safetensors files whatever the name).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
