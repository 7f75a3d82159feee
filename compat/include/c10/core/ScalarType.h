// <c10/core/ScalarType.h> for ember: c10::ScalarType and its constants are ember's; the c10
// spellings of ember's dtype helpers (toString, elementSize) are added here.
#pragma once

#include <cstddef>

#include <ember/compat/namespaces.h>
#include <ember/core/dtype.h>

namespace ember {

/// c10::toString(ScalarType): "Float", "Long", ... (ember::scalar_type_name).
inline const char* toString(ScalarType t) { return scalar_type_name(t); }
/// c10::elementSize(ScalarType): bytes per element (ember::element_size).
inline size_t elementSize(ScalarType t) { return element_size(t); }

}  // namespace ember
