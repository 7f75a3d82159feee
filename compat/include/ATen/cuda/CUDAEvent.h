// <ATen/cuda/CUDAEvent.h> for ember: at::cuda::CUDAEvent is ember::cuda::CUDAEvent
// (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/cuda/cuda.h>
