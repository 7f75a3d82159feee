// cpu::gemm's Eigen kernel for any CPU, compiled with the library's own flags (see
// gemm_isa.h; the body is gemm_eigen.inc).
#include "ember/core/cpu/gemm_isa.h"

#define EMBER_EIGEN_NAMESPACE ember_eigen_generic
#define EMBER_GEMM_KERNELS generic_kernels
#include "ember/core/cpu/gemm_eigen.inc"
