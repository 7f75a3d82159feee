// <c10/util/ArrayRef.h> for ember: c10::ArrayRef and c10::IntArrayRef are ember's
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/array_ref.h>
