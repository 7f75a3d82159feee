// <c10/util/Optional.h> for ember: c10::optional, c10::nullopt and c10::make_optional, which are std's
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/optional.h>
