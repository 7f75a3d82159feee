// cuda/rnn.h through cuDNN's v8 RNN API, the route PyTorch's _cudnn_rnn takes: one RNN
// descriptor per call (CUDNN_RNN_ALGO_STANDARD, double bias, linear input, no dropout),
// sequence-major unpadded data descriptors, and PyTorch's math choices: float16 computes in
// float on tensor cores, float32 may use TF32 only under ember::backends::cudnn::allow_tf32
// (PyTorch's default, true), float64 stays double.
//
// The weights are copied into a fresh weight space on every forward (PyTorch does the same
// when the module's parameters are not views of one flat buffer, which ember's never are), and
// the weight gradient comes back in that layout; both follow Note [cuDNN RNN weight layout]
// (cuda/rnn_plan.h), with the offsets asked of cuDNN once per shape and cached.
#include "ember/cuda/rnn.h"

#include <climits>
#include <map>
#include <mutex>
#include <tuple>

#include "ember/core/backends.h"
#include "ember/core/ops/creation.h"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/cudnn_handle.cuh"
#include "ember/cuda/runtime/device.h"

namespace ember::cuda {
namespace {

// ---- cuDNN's names for ember's types and sizes ----------------------------------------------

cudnnDataType_t rnn_data_type(ScalarType t) {
  switch (t) {
    case kFloat: return CUDNN_DATA_FLOAT;
    case kDouble: return CUDNN_DATA_DOUBLE;
    case kHalf: return CUDNN_DATA_HALF;
    default:
      ember::detail::throw_error(
          ember::detail::str_cat("_cudnn_rnn: cuDNN's RNN does not take ", scalar_type_name(t), " tensors"));
  }
}

/// What the products accumulate in: float for float16 (PyTorch's promote_rnn_math_type).
cudnnDataType_t rnn_math_precision(ScalarType t) { return t == kDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

/// Tensor cores for float16; float32 keeps full precision (FMA) unless TF32 is allowed.
cudnnMathType_t rnn_math_type(ScalarType t) {
  if (t == kHalf) return CUDNN_TENSOR_OP_MATH;
  if (t == kFloat && !backends::cudnn::allow_tf32) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

int to_int(int64_t v) {
  EMBER_CHECK(v >= 0 && v <= INT_MAX, "_cudnn_rnn: size ", v, " is too large for cuDNN");
  return static_cast<int>(v);
}

/// `bytes` of device memory from the caching allocator, on the current device and stream.
Tensor device_bytes(int64_t bytes) {
  return empty({bytes}, TensorOptions().dtype(kUInt8).device(Device(kCUDA, static_cast<int8_t>(current_device()))));
}

// ---- Descriptors ---------------------------------------------------------------------------

using DropoutDescriptor =
    Descriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;
using RnnDescriptor = Descriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor =
    Descriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;

/// A fully packed 3-d state descriptor [layers * directions, N, size].
void set_state(const TensorDescriptor& d, cudnnDataType_t t, int64_t layers, int64_t n, int64_t size) {
  const int dims[3] = {to_int(layers), to_int(n), to_int(size)};
  const int strides[3] = {to_int(n * size), to_int(size), 1};
  EMBER_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d.get(), t, 3, dims, strides));
}

/// A [T, N, vector] sequence of N sequences of the full length T.
void set_sequence(const RnnDataDescriptor& d, cudnnDataType_t t, int64_t T, int64_t n, int64_t vector) {
  std::vector<int> lengths(static_cast<size_t>(n), to_int(T));
  EMBER_CUDNN_CHECK(cudnnSetRNNDataDescriptor(d.get(), t, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, to_int(T),
                                              to_int(n), to_int(vector), lengths.data(), nullptr));
}

/// Every descriptor of one call. The dropout descriptor is one without dropout (ember takes
/// the composed path for dropout between layers, so cuDNN never draws).
struct RnnDescriptors {
  DropoutDescriptor dropout;
  RnnDescriptor rnn;
  RnnDataDescriptor x, y;
  TensorDescriptor h, c;
  bool has_cell = false;

  RnnDescriptors(cudnnHandle_t handle, const RnnShape& s, ScalarType dtype, int64_t T, int64_t n) {
    const cudnnDataType_t t = rnn_data_type(dtype);
    EMBER_CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout.get(), handle, 0.0f, nullptr, 0, 0));
    EMBER_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
        rnn.get(), CUDNN_RNN_ALGO_STANDARD, static_cast<cudnnRNNMode_t>(static_cast<int>(s.cell)),
        CUDNN_RNN_DOUBLE_BIAS, s.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, t,
        rnn_math_precision(dtype), rnn_math_type(dtype), to_int(s.input_size), to_int(s.hidden_size),
        to_int(s.out_size()), to_int(s.num_layers), dropout.get(), CUDNN_RNN_PADDED_IO_ENABLED));
    set_sequence(x, t, T, n, s.input_size);
    set_sequence(y, t, T, n, s.directions() * s.out_size());
    const int64_t layers = s.num_layers * s.directions();
    set_state(h, t, layers, n, s.out_size());
    has_cell = s.cell == RnnCell::kLstm;
    if (has_cell) set_state(c, t, layers, n, s.hidden_size);
  }
  cudnnTensorDescriptor_t cell() const { return has_cell ? c.get() : nullptr; }
};

/// cuDNN's workspace and reserve sizes for the call.
std::pair<size_t, size_t> temp_sizes(cudnnHandle_t handle, const RnnDescriptors& d, bool training) {
  size_t work = 0, reserve = 0;
  EMBER_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle, d.rnn.get(),
                                              training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                                              d.x.get(), &work, &reserve));
  return {work, training ? reserve : 0};
}

size_t weight_space_bytes(cudnnHandle_t handle, const RnnDescriptors& d) {
  size_t bytes = 0;
  EMBER_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle, d.rnn.get(), &bytes));
  return bytes;
}

// ---- Where the weights go ------------------------------------------------------------------

/// The element offset cuDNN gives `piece` in `space` (a weight space of `bytes`), after
/// checking its size against the piece's.
int64_t piece_offset(cudnnHandle_t handle, const RnnDescriptors& d, const RnnWeightPiece& p, void* space,
                     size_t bytes, int64_t element_size) {
  TensorDescriptor desc;
  void* addr = nullptr;
  EMBER_CUDNN_CHECK(cudnnGetRNNWeightParams(handle, d.rnn.get(), static_cast<int32_t>(p.pseudo_layer), bytes, space,
                                            static_cast<int32_t>(p.lin_layer_id), p.is_bias ? nullptr : desc.get(),
                                            p.is_bias ? nullptr : &addr, p.is_bias ? desc.get() : nullptr,
                                            p.is_bias ? &addr : nullptr));
  EMBER_CHECK(addr != nullptr, "cuDNN RNN weight layout: no ", (p.is_bias ? "bias" : "matrix"), " for linear layer ",
              p.lin_layer_id, " of pseudo-layer ", p.pseudo_layer);
  cudnnDataType_t t;
  int nb_dims = 0, dims[3] = {0, 0, 0}, strides[3] = {0, 0, 0};
  EMBER_CUDNN_CHECK(cudnnGetTensorNdDescriptor(desc.get(), 3, &t, &nb_dims, dims, strides));
  int64_t numel = 1;
  for (int i = 0; i < std::min(nb_dims, 3); ++i) numel *= dims[i];
  check_rnn_piece(p, numel);
  const std::ptrdiff_t offset = static_cast<char*>(addr) - static_cast<char*>(space);
  EMBER_CHECK(offset >= 0 && offset % element_size == 0, "cuDNN RNN weight layout: misaligned block at byte ",
              offset);
  return offset / element_size;
}

struct CopiesKey {
  int device;
  RnnShape shape;
  ScalarType dtype;
  auto tie() const {
    return std::tuple(device, static_cast<int>(shape.cell), shape.input_size, shape.hidden_size, shape.proj_size,
                      shape.num_layers, shape.bidirectional, shape.bias, static_cast<int>(dtype));
  }
  bool operator<(const CopiesKey& o) const { return tie() < o.tie(); }
};

std::vector<RnnCopy> find_copies(cudnnHandle_t handle, const RnnShape& s, ScalarType dtype) {
  const RnnDescriptors d(handle, s, dtype, 1, 1);
  const size_t bytes = weight_space_bytes(handle, d);
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  Tensor space = device_bytes(static_cast<int64_t>(bytes));  // cuDNN hands out addresses inside it
  std::vector<RnnCopy> copies;
  for (const RnnWeightPiece& p : rnn_weight_pieces(s))
    copies.push_back({p.param, p.param_offset, piece_offset(handle, d, p, space.data_ptr(), bytes, es), p.numel()});
  std::vector<RnnCopy> merged = merge_rnn_copies(std::move(copies));
  check_rnn_copies(s, merged, static_cast<int64_t>(bytes) / es);
  return merged;
}

// ---- The calls -------------------------------------------------------------------------------

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

/// Zeroes the weight space (the biases stay zero without bias) and copies each parameter in.
void pack_weights(const RnnShape& s, const TensorList& weights, const Tensor& space) {
  cudaStream_t stream = current_raw_stream();
  EMBER_CUDA_CHECK(cudaMemsetAsync(space.data_ptr(), 0, space.nbytes(), stream));
  const ScalarType dtype = weights.at(0).dtype();
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  for (const RnnCopy& c : rnn_weight_copies(s, dtype)) {
    const Tensor& w = weights.at(static_cast<size_t>(c.param));
    EMBER_CHECK(w.is_contiguous() && w.dtype() == dtype, "_cudnn_rnn: weight ", c.param,
                " must be contiguous and of the input's dtype");
    EMBER_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(space.data_ptr()) + c.space_offset * es,
                                     static_cast<const char*>(w.data_ptr()) + c.param_offset * es,
                                     static_cast<size_t>(c.numel * es), cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace

bool cudnn_rnn_available() { return true; }

RnnSpaces rnn_spaces(const RnnShape& s, ScalarType dtype, int64_t T, int64_t N, bool training) {
  cudnnHandle_t handle = cudnn_handle();
  const RnnDescriptors d(handle, s, dtype, T, N);
  return {static_cast<int64_t>(weight_space_bytes(handle, d)),
          static_cast<int64_t>(temp_sizes(handle, d, training).second)};
}

std::vector<RnnCopy> rnn_weight_copies(const RnnShape& s, ScalarType dtype) {
  static std::mutex mutex;
  static auto* cache = new std::map<CopiesKey, std::vector<RnnCopy>>;  // never destroyed: used until exit
  const CopiesKey key{current_device(), s, dtype};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  std::vector<RnnCopy> copies = find_copies(cudnn_handle(), s, dtype);
  std::lock_guard<std::mutex> lock(mutex);
  return cache->emplace(key, std::move(copies)).first->second;
}

void rnn_forward(const RnnShape& s, const Tensor& x, const Tensor& hx, const Tensor& cx, const TensorList& weights,
                 const Tensor& weight_space, const Tensor& y, const Tensor& hy, const Tensor& cy,
                 const Tensor& reserve) {
  DeviceGuard guard(x.device());
  cudnnHandle_t handle = cudnn_handle();
  const int64_t T = x.size(0), N = x.size(1);
  const RnnDescriptors d(handle, s, x.dtype(), T, N);
  const bool training = reserve.numel() > 0;
  const auto [work, reserve_bytes] = temp_sizes(handle, d, training);
  EMBER_CHECK(static_cast<int64_t>(reserve_bytes) == reserve.numel() &&
                  static_cast<int64_t>(weight_space_bytes(handle, d)) == weight_space.numel(),
              "_cudnn_rnn: the weight space or reserve was not sized by rnn_spaces for this call");
  pack_weights(s, weights, weight_space);
  Tensor workspace = device_bytes(static_cast<int64_t>(work));
  EMBER_CUDNN_CHECK(cudnnRNNForward(handle, d.rnn.get(), training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                                    nullptr, d.x.get(), x.data_ptr(), d.y.get(), y.data_ptr(), d.h.get(),
                                    hx.data_ptr(), hy.data_ptr(), d.cell(), ptr(cx), ptr(cy), weight_space.nbytes(),
                                    weight_space.data_ptr(), work, ptr(workspace), reserve.nbytes(), ptr(reserve)));
}

void rnn_backward(const RnnShape& s, const Tensor& x, const Tensor& hx, const Tensor& cx, const Tensor& y,
                  const Tensor& dy, const Tensor& dhy, const Tensor& dcy, const Tensor& weight_space,
                  const Tensor& reserve, const Tensor& dx, const Tensor& dhx, const Tensor& dcx, const Tensor& dw) {
  DeviceGuard guard(x.device());
  cudnnHandle_t handle = cudnn_handle();
  cudaStream_t stream = current_raw_stream();
  const RnnDescriptors d(handle, s, x.dtype(), x.size(0), x.size(1));
  const size_t work = temp_sizes(handle, d, true).first;
  Tensor workspace = device_bytes(static_cast<int64_t>(work));
  // Backward-data writes into the reserve (its results feed backward-weights), so it works on
  // a copy: the saved one stays as the forward left it for a retained graph's next backward.
  Tensor scratch = device_bytes(reserve.numel());
  EMBER_CUDA_CHECK(cudaMemcpyAsync(ptr(scratch), reserve.data_ptr(), reserve.nbytes(), cudaMemcpyDeviceToDevice,
                                   stream));
  EMBER_CUDNN_CHECK(cudnnRNNBackwardData_v8(handle, d.rnn.get(), nullptr, d.y.get(), y.data_ptr(), dy.data_ptr(),
                                            d.x.get(), dx.data_ptr(), d.h.get(), hx.data_ptr(), dhy.data_ptr(),
                                            dhx.data_ptr(), d.cell(), ptr(cx), ptr(dcy), ptr(dcx),
                                            weight_space.nbytes(), weight_space.data_ptr(), work, ptr(workspace),
                                            scratch.nbytes(), ptr(scratch)));
  if (dw.numel() == 0) return;  // no weight needs a gradient
  // CUDNN_WGRAD_MODE_ADD adds into dw, so it starts at zero.
  EMBER_CUDA_CHECK(cudaMemsetAsync(dw.data_ptr(), 0, dw.nbytes(), stream));
  EMBER_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(handle, d.rnn.get(), CUDNN_WGRAD_MODE_ADD, nullptr, d.x.get(),
                                               x.data_ptr(), d.h.get(), hx.data_ptr(), d.y.get(), y.data_ptr(),
                                               dw.nbytes(), dw.data_ptr(), work, ptr(workspace), scratch.nbytes(),
                                               ptr(scratch)));
}

}  // namespace ember::cuda
