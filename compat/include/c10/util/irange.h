// <c10/util/irange.h> for ember: c10::irange is ember::irange (core/irange.h)
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/irange.h>
