// EMBER_HOST_DEVICE: marks an inline function of a device-free header that the CUDA kernels
// call too (launch plans, index maps, per-element arithmetic): nvcc compiles it for host and
// device, a plain C++ compiler sees an ordinary inline function, so CPU tests run the very code
// the kernels run. No CUDA header is needed, so core/ and cuda/ plan headers may include it.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif
