// The CUDA entry points of a build without CUDA: no device is available, and everything that
// would need one says "ember was built without CUDA". One section per cuda/ header, in the
// order of the files that define them in a CUDA build.
#include "ember/core/error.h"
#include "ember/cuda/binary.h"
#include "ember/cuda/copy.h"
#include "ember/cuda/creation.h"
#include "ember/cuda/cuda.h"
#include "ember/cuda/gemm.h"
#include "ember/cuda/index.h"
#include "ember/cuda/normalization.h"
#include "ember/cuda/optim.h"
#include "ember/cuda/runtime/pinned_allocator.h"
#include "ember/cuda/random.h"
#include "ember/cuda/reduce.h"
#include "ember/cuda/softmax.h"
#include "ember/cuda/tril.h"
#include "ember/cuda/unary.h"
#include "ember/cuda/runtime/versions.h"

namespace ember::cuda {
namespace {
[[noreturn]] void no_cuda() { detail::throw_error("ember was built without CUDA"); }
}  // namespace

// ---- device.h, stream.h (device.cpp) ----
bool is_available() { return false; }
int device_count() { return 0; }
int current_device() { no_cuda(); }
void set_device(int) { no_cuda(); }
void synchronize(int) { no_cuda(); }
DeviceGuard::DeviceGuard(int device) {
  if (device >= 0) no_cuda();
}
DeviceGuard::~DeviceGuard() = default;
bool CUDAStream::query() const { no_cuda(); }
void CUDAStream::synchronize() const { no_cuda(); }
std::ostream& operator<<(std::ostream& os, const CUDAStream&) { return os << "stream (no CUDA)"; }
CUDAStream getDefaultCUDAStream(int) { no_cuda(); }
CUDAStream getCurrentCUDAStream(int) { no_cuda(); }
void setCurrentCUDAStream(CUDAStream) { no_cuda(); }
CUDAStream getStreamFromPool(bool, int) { no_cuda(); }
CUDAStreamGuard::CUDAStreamGuard(CUDAStream s) : original_stream_(s), original_device_(-1) { no_cuda(); }
CUDAStreamGuard::~CUDAStreamGuard() = default;

// ---- cuda.h, caching_allocator.h: the caching allocator (caching_allocator.cpp) ----
// Statistics are zero and empty_cache does nothing, as torch.cuda's before CUDA is initialised.
Allocator* allocator(int) { no_cuda(); }
size_t memory_allocated(int) { return 0; }
size_t max_memory_allocated(int) { return 0; }
size_t memory_reserved(int) { return 0; }
size_t max_memory_reserved(int) { return 0; }
void reset_peak_memory_stats(int) {}
MemoryStats memory_stats(int) { return {}; }
void empty_cache() {}
void record_stream(const Tensor&, CUDAStream) { no_cuda(); }

// ---- copy.h (copy.cu) ----
void copy(const Tensor&, const Tensor&, bool) { no_cuda(); }
void fill(const Tensor&, const Scalar&) { no_cuda(); }

// ---- event.h (event.cpp) ----
// Creating an event needs no device (it is made on first record); using one does.
CUDAEvent::~CUDAEvent() = default;
void CUDAEvent::record() { no_cuda(); }
void CUDAEvent::record(const CUDAStream&) { no_cuda(); }
void CUDAEvent::recordOnce(const CUDAStream&) { no_cuda(); }
void CUDAEvent::block(const CUDAStream&) { no_cuda(); }
bool CUDAEvent::query() const { return true; }  // never recorded: nothing pending
void CUDAEvent::synchronize() const {}
float CUDAEvent::elapsed_time(const CUDAEvent&) const { no_cuda(); }

// ---- pinned_allocator.h (pinned_allocator.cpp) ----
// PyTorch's words when pinned memory is asked for without an accelerator.
Allocator* pinned_allocator() { detail::throw_error("Cannot access accelerator device when none is available."); }
bool is_pinned_ptr(const void*) { return false; }
void record_host_use(const void*, CUDAStream) { no_cuda(); }
HostMemoryStats host_memory_stats() { return {}; }
void host_empty_cache() {}

// ---- gemm.h (gemm.cpp) ----
void gemm(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&) { no_cuda(); }

// ---- creation.h (creation.cu) ----
void arange(const Tensor&, int64_t, int64_t, double, double) { no_cuda(); }
void linspace(const Tensor&, double, double, double) { no_cuda(); }

// ---- random.h (random.cu) ----
void sample(Distribution, const Tensor&, PhiloxDraw, double, double) { no_cuda(); }
void random_int(const Tensor&, PhiloxDraw, int64_t, uint64_t) { no_cuda(); }
void bernoulli_tensor(const Tensor&, const Tensor&, PhiloxDraw) { no_cuda(); }

// ---- tril.h (tril.cu) ----
void zero_outside_triangle(const Tensor&, int64_t, bool) { no_cuda(); }

// ---- index.h (index.cu, scatter.cu, nonzero.cu) ----
void indexed_gather(const TensorIter&, ScalarType, int64_t) { no_cuda(); }
void indexed_scatter(const TensorIter&, const Tensor&, int64_t, ScatterFn, const Scalar&) { no_cuda(); }
bool add_index_offsets(const Tensor&, const TensorList&, IntArrayRef, IntArrayRef) { no_cuda(); }
bool any_out_of_range(const Tensor&, int64_t, int64_t) { no_cuda(); }
Tensor nonzero(const Tensor&) { no_cuda(); }

// ---- binary.h (binary.cu, division.cu, pow.cu, compare.cu, ternary.cu) ----
template <class Fn>
void binary_map(const Tensor&, const Tensor&, const Tensor&, const Fn&) {
  no_cuda();
}
template <class Fn>
void compare_map(const Tensor&, const Tensor&, const Tensor&, const Fn&) {
  no_cuda();
}
template <class Fn>
void ternary_map(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Fn&) {
  no_cuda();
}
}  // namespace ember::cuda
#define EMBER_NO_CUDA_BINARY_MAP(Fn)                                                           \
  template void ember::cuda::binary_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, \
                                                   const ember::Tensor&, const ember::Fn&);
#define EMBER_NO_CUDA_COMPARE_MAP(Fn)                                                           \
  template void ember::cuda::compare_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, \
                                                    const ember::Tensor&, const ember::Fn&);
#define EMBER_NO_CUDA_TERNARY_MAP(Fn)                                                           \
  template void ember::cuda::ternary_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, \
                                                    const ember::Tensor&, const ember::Tensor&, \
                                                    const ember::Fn&);
EMBER_CUDA_BINARY_ARITH_MAPS(EMBER_NO_CUDA_BINARY_MAP)
EMBER_CUDA_BINARY_DIVISION_MAPS(EMBER_NO_CUDA_BINARY_MAP)
EMBER_CUDA_BINARY_POW_MAPS(EMBER_NO_CUDA_BINARY_MAP)
EMBER_CUDA_COMPARE_MAPS(EMBER_NO_CUDA_COMPARE_MAP)
EMBER_CUDA_TERNARY_MAPS(EMBER_NO_CUDA_TERNARY_MAP)
namespace ember::cuda {
void isclose(const Tensor&, const Tensor&, const Tensor&, double, double, bool) { no_cuda(); }
void where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda(); }
void masked_fill(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda(); }

// ---- unary.h (unary_math.cu, unary_numeric.cu, activation.cu) ----
template <class Fn>
void unary_map(const Tensor&, const Tensor&, const Fn&) {
  no_cuda();
}
}  // namespace ember::cuda
#define EMBER_NO_CUDA_UNARY_MAP(Fn) \
  template void ember::cuda::unary_map<ember::Fn>(const ember::Tensor&, const ember::Tensor&, const ember::Fn&);
EMBER_CUDA_UNARY_MATH_MAPS(EMBER_NO_CUDA_UNARY_MAP)
EMBER_CUDA_UNARY_NUMERIC_MAPS(EMBER_NO_CUDA_UNARY_MAP)
EMBER_CUDA_ACTIVATION_MAPS(EMBER_NO_CUDA_UNARY_MAP)
EMBER_CUDA_SCALAR_OPERAND_MAPS(EMBER_NO_CUDA_UNARY_MAP)  // binary.h: compiled in pow.cu with CUDA
namespace ember::cuda {
void logical_not(const Tensor&, const Tensor&) { no_cuda(); }
void clamp(const Tensor&, const Scalar&, const Scalar&, const Tensor&) { no_cuda(); }
void clamp(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda(); }
void value_test(const ValueTest&, const Tensor&, const Tensor&) { no_cuda(); }
void value_select(const ValueTest&, double, double, const Tensor&, const Tensor&) { no_cuda(); }
void masked(const Tensor&, const Tensor&, const Tensor&) { no_cuda(); }
void clamp_grad_mask(ClampGradMask, const Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda(); }

// ---- reduce.h (reduce.cu, reduce_stats.cu, minmax.cu, scan.cu, sort.cu) ----
void reduce(ReduceFn, const Tensor&, const Tensor&, uint64_t, double) { no_cuda(); }
void arg_reduce(bool, const Tensor&, const Tensor*, const Tensor&, uint64_t) { no_cuda(); }
void scan(ScanFn, const Tensor&, const Tensor&, int64_t, bool) { no_cuda(); }
void sort(const Tensor&, const Tensor&, const Tensor&, int64_t, bool) { no_cuda(); }

// ---- softmax.h (softmax.cu), normalization.h (normalization.cu) ----
void softmax(const Tensor&, const Tensor&, int64_t, bool) { no_cuda(); }
void softmax_backward(const Tensor&, const Tensor&, const Tensor&, int64_t, bool) { no_cuda(); }
void batch_norm_stats(const Tensor&, const cpu::ChannelGeom&, const Tensor&, const Tensor&) { no_cuda(); }
void batch_norm_apply(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                      const cpu::ChannelGeom&, const Tensor&) {
  no_cuda();
}
void batch_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool,
                         const cpu::ChannelGeom&, const Tensor&, const Tensor&, const Tensor&) {
  no_cuda();
}
void row_norm_stats(const Tensor&, const cpu::RowGeom&, double, const Tensor&, const Tensor&) { no_cuda(); }
void row_norm_forward(const Tensor&, double, const Tensor&, const Tensor&, const cpu::RowGeom&, const Tensor&,
                      const Tensor&, const Tensor&) {
  no_cuda();
}
void row_norm_apply(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::RowGeom&,
                    const Tensor&) {
  no_cuda();
}
void row_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::RowGeom&,
                       const Tensor&, const Tensor&, const Tensor&) {
  no_cuda();
}

// ---- gemm.h (gemm.cpp): the cuBLASLt bias epilogue ----
bool try_gemm_bias(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&) {
  no_cuda();
}

// ---- optim.h (optim.cu) ----
void sgd_step(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
              const std::vector<uint8_t>&, const SGDStepArgs&) {
  no_cuda();
}
void adam_step(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
               const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<double>&,
               const std::vector<double>&, const AdamStepArgs&) {
  no_cuda();
}

}  // namespace ember::cuda

// ---- conv.h (conv.cpp: cuDNN) ----
// Self-contained section (its own include) so it merges without touching the list above.
#include "ember/cuda/conv.h"

namespace ember::cuda {
void conv_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const ConvArgs2d&) { no_cuda(); }
void conv_transpose(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const ConvArgs2d&) { no_cuda(); }
void conv_backward_weight(const Tensor&, const Tensor&, const Tensor&, const ConvArgs2d&) { no_cuda(); }
}  // namespace ember::cuda

// ---- loss.h, embedding.h, separable_map.h, pooling.h (loss.cu, embedding.cu,
// separable_map.cu, pooling.cu): the nn kernels ----
#include "ember/cuda/embedding.h"
#include "ember/cuda/loss.h"
#include "ember/cuda/pooling.h"
#include "ember/cuda/separable_map.h"

namespace ember::cuda {
namespace {
[[noreturn]] void no_cuda_nn() { detail::throw_error("ember was built without CUDA"); }
}  // namespace

NllStats nll_target_stats(const Tensor&, const Tensor&, int64_t, int64_t) { no_cuda_nn(); }
void nll_loss_forward(const Tensor&, const Tensor&, const Tensor&, NllShape, int64_t, int64_t, double, const Tensor&) {
  no_cuda_nn();
}
void nll_loss_backward(const Tensor&, const Tensor&, const Tensor&, NllShape, int64_t, int64_t, double,
                       const Tensor&) {
  no_cuda_nn();
}
void binary_cross_entropy(const Tensor&, const Tensor&, const Tensor&) { no_cuda_nn(); }
void embedding_rows(const Tensor&, const Tensor&, const Tensor&) { no_cuda_nn(); }
DeviceTables upload_tables(const resample::AxisMap&, const resample::AxisMap&, Device) { no_cuda_nn(); }
void separable_gather(const Tensor&, const Tensor&, const resample::AxisMap&, const resample::AxisMap&) {
  no_cuda_nn();
}
void separable_map(const Tensor&, const Tensor&, const resample::AxisMap&, const resample::AxisMap&) { no_cuda_nn(); }
void separable_map_adjoint(const Tensor&, const Tensor&, const resample::AxisMap&, const resample::AxisMap&) {
  no_cuda_nn();
}
void max_pool(const Tensor&, const Tensor&, const Tensor&, const resample::AxisMap&, const resample::AxisMap&) {
  no_cuda_nn();
}
void max_pool_scatter(const Tensor&, const Tensor&, const Tensor&, const resample::AxisMap&,
                      const resample::AxisMap&) {
  no_cuda_nn();
}

}  // namespace ember::cuda

// ---- amp.h (amp.cu): gradient scaling ----
// Self-contained section (its own include) so it merges without touching the list above.
#include "ember/cuda/amp.h"

namespace ember::cuda {

void amp_non_finite_check_and_unscale(const std::vector<Tensor>&, const Tensor&, const Tensor&) { no_cuda(); }
void amp_update_scale(const Tensor&, const Tensor&, const Tensor&, double, double, int64_t) { no_cuda(); }

}  // namespace ember::cuda

// ---- attention.h (attention.cu): fused scaled-dot-product attention ----
// Self-contained section (its own include) so it merges without touching the list above. No
// fused kernels without CUDA: the op takes its plain composition (and has no CUDA tensors).
#include "ember/cuda/attention.h"

namespace ember::cuda {

bool sdpa_fused_supported(int64_t, int64_t, int) { return false; }
void sdpa_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, double,
                  const AttnDropout&, const Tensor&, const Tensor&) {
  no_cuda();
}
void sdpa_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, double,
                   const AttnDropout&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                   const Tensor&) {
  no_cuda();
}

}  // namespace ember::cuda

// ---- rnn.h (rnn.cpp: cuDNN's RNN) ----
// Self-contained section (its own include) so it merges without touching the list above. The
// recurrent layers take their composed path (no CUDA tensors exist here).
#include "ember/cuda/rnn.h"

namespace ember::cuda {

bool cudnn_rnn_available() { return false; }
RnnSpaces rnn_spaces(const RnnShape&, ScalarType, int64_t, int64_t, bool) { no_cuda(); }
void rnn_forward(const RnnShape&, const Tensor&, const Tensor&, const Tensor&, const TensorList&, const Tensor&,
                 const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  no_cuda();
}
void rnn_backward(const RnnShape&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&) {
  no_cuda();
}
std::vector<RnnCopy> rnn_weight_copies(const RnnShape&, ScalarType) { no_cuda(); }

// ---- versions.h (versions.cpp) ----
InfoList build_info() { return {{"CUDA backend", "not built"}}; }
InfoList runtime_info(int) { no_cuda(); }

}  // namespace ember::cuda
