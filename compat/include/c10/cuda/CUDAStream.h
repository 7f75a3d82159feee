// <c10/cuda/CUDAStream.h> for ember: c10::cuda::CUDAStream, getCurrentCUDAStream() and
// getStreamFromPool() are ember::cuda's (the libtorch drop-in headers: compat/namespaces.h).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/cuda/cuda.h>
