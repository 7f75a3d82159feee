// <c10/core/Scalar.h> for ember: c10::Scalar is ember::Scalar
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/scalar.h>
