// <ATen/Functions.h> for ember: at::Tensor and the tensor functions; the same as <ATen/ATen.h>
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ATen/ATen.h>
