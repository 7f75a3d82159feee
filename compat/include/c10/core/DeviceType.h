// <c10/core/DeviceType.h> for ember: c10::DeviceType, c10::kCPU and c10::kCUDA are ember's
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/device.h>
