// <ATen/cuda/CUDAContext.h> for ember: at::cuda::getCurrentCUDAStream() and the device queries
// are ember::cuda's; cuBLAS/cuSPARSE handles are not offered (ember keeps its handles private).
// (The libtorch drop-in headers: compat/namespaces.h.)
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/cuda/cuda.h>
