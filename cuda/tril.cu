// tril/triu's mask (cuda/tril.h): one thread per element of the (possibly strided) tensor, which
// writes a zero when the element lies outside the kept triangle. Zero has the same bits in every
// dtype, so the kernel is instantiated per element size, not per dtype.
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/tril.h"

namespace ember::cuda {
namespace {

/// Where each matrix of the batch starts: sizes and strides (elements) of the leading dims,
/// and the matrices' own geometry.
struct MatrixBatch {
  int nbatch = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
  int64_t rows, cols, row_stride, col_stride;
};

/// Word: an unsigned integer of the element's size (its zero is every dtype's zero).
template <class Word>
__global__ void zero_outside_triangle_kernel(Word* base, int64_t n, MatrixBatch g, int64_t k, bool lower) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < n; l += stride) {
    int64_t j = l % g.cols, r = l / g.cols;
    int64_t i = r % g.rows, b = r / g.rows;
    bool keep = lower ? j - i <= k : j - i >= k;
    if (keep) continue;
    int64_t off = i * g.row_stride + j * g.col_stride;
    for (int d = g.nbatch - 1; d >= 0; --d) {
      off += (b % g.sizes[d]) * g.strides[d];
      b /= g.sizes[d];
    }
    base[off] = Word{0};
  }
}

}  // namespace

void zero_outside_triangle(const Tensor& t, int64_t k, bool lower) {
  const int64_t n = t.numel();
  if (n == 0) return;
  DeviceGuard guard(t.device());
  const int nd = static_cast<int>(t.dim());
  EMBER_CHECK(nd <= kMaxDims, "tril/triu on CUDA supports tensors of at most ", kMaxDims, " dimensions, got ", nd);
  MatrixBatch g;
  g.nbatch = nd - 2;
  for (int d = 0; d < g.nbatch; ++d) {
    g.sizes[d] = t.size(d);
    g.strides[d] = t.stride(d);
  }
  g.rows = t.size(nd - 2);
  g.cols = t.size(nd - 1);
  g.row_stride = t.stride(nd - 2);
  g.col_stride = t.stride(nd - 1);
  auto launch = [&]<class Word>() {
    zero_outside_triangle_kernel<Word><<<blocks_for(n), kThreads, 0, current_raw_stream()>>>(
        static_cast<Word*>(t.data_ptr()), n, g, k, lower);
    EMBER_CUDA_CHECK_LAUNCH();
  };
  switch (t.element_size()) {
    case 1: launch.template operator()<uint8_t>(); break;
    case 2: launch.template operator()<uint16_t>(); break;
    case 4: launch.template operator()<uint32_t>(); break;
    case 8: launch.template operator()<uint64_t>(); break;
    default: ember::detail::throw_error(ember::detail::str_cat("internal error: tril/triu on ", t.element_size(), "-byte elements"));
  }
}

}  // namespace ember::cuda
