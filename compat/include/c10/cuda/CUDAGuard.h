// <c10/cuda/CUDAGuard.h> for ember: c10::cuda::CUDAGuard and CUDAStreamGuard are ember::cuda's
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/cuda/cuda.h>
