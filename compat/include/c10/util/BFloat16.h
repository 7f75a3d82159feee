// <c10/util/BFloat16.h> for ember: c10::BFloat16 is ember::BFloat16
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/half.h>
