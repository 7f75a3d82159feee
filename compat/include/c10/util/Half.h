// <c10/util/Half.h> for ember: c10::Half is ember::Half
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/half.h>
