// <c10/core/TensorOptions.h> for ember: c10::TensorOptions is ember::TensorOptions
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/tensor_options.h>
