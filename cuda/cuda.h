// The CUDA backend as users and core/ see it: devices, streams and the allocator, all plain
// C++ declarations (no CUDA headers). A build with CUDA links cuda/*.cpp and cuda/*.cu; a
// CPU-only build links cuda/no_cuda.cpp, where is_available() is false and the rest says
// "ember was built without CUDA".
#pragma once

#include "ember/core/allocator.h"
#include "ember/cuda/runtime/caching_allocator.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/runtime/event.h"
#include "ember/cuda/runtime/stream.h"

namespace ember::cuda {
/// The CUDA caching allocator of a device.
Allocator* allocator(int device);
}  // namespace ember::cuda
