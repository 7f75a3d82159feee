// <torch/serialize/input-archive.h> for ember: torch::serialize::InputArchive (safetensors files).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
