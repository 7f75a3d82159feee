// <c10/core/Device.h> for ember: c10::Device is ember::Device
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/core/device.h>
