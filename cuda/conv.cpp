// cuda/conv.h through cuDNN's convolution API (cudnnConvolutionForward, ...BackwardData,
// ...BackwardFilter), PyTorch's route. Each call describes one plain convolution C (x * w -> y,
// cuda/conv_plan.h) in NCHW with 32-bit sizes, cutting the batch into several calls when a
// tensor is too large for that, and picks an algorithm per shape:
//
// Note [cuDNN algorithm choice]
// By default cuDNN's heuristics rank the algorithms (cudnnGet*Algorithm_v7); with
// ember::backends::cudnn::benchmark, cuDNN times each on the real tensors once
// (cudnnFind*AlgorithmEx) and ranks them by time. Either way the ranking is filtered (supported
// here; deterministic when ember::backends::cudnn::deterministic or deterministic mode,
// ember::use_deterministic_algorithms, is set), its workspace sizes are asked for under the
// math mode each will run with, and it is cached per ConvAlgoKey: device,
// call, dtype, sizes, parameters and the three flags. A call runs the first algorithm of the
// ranking whose workspace the caching allocator can provide; when one runs out of memory the
// next one needing less is tried (PyTorch's fallback).
//
// float16 and bfloat16 tensors are convolved with float accumulation (cuDNN's compute type
// float), float32 may use TF32 tensor cores only under ember::backends::cudnn::allow_tf32
// (cuda/conv_plan.h's search_math / run_math). The bias is added afterwards by ember's own
// broadcasting add.
#include "ember/cuda/conv.h"

#include <vector>

#include "ember/core/backends.h"
#include "ember/core/deterministic.h"
#include "ember/core/ops/creation.h"
#include "ember/core/tensor.h"
#include "ember/cuda/runtime/cuda_check.h"
#include "ember/cuda/runtime/cudnn_handle.cuh"
#include "ember/cuda/runtime/device.h"

namespace ember::cuda {
namespace {

// ---- cuDNN's names for ember's types -------------------------------------------------------

/// How elements are stored. PyTorch's message for the dtypes cuDNN has no convolution for.
cudnnDataType_t data_type(ScalarType t) {
  switch (t) {
    case kFloat: return CUDNN_DATA_FLOAT;
    case kDouble: return CUDNN_DATA_DOUBLE;
    case kHalf: return CUDNN_DATA_HALF;
    case kBFloat16: return CUDNN_DATA_BFLOAT16;
    default:
      ember::detail::throw_error(
          ember::detail::str_cat("getCudnnDataTypeFromScalarType() not supported for ", scalar_type_name(t)));
  }
}

/// What the products accumulate in: float for the 16-bit types, as PyTorch's.
cudnnDataType_t compute_type(ScalarType t) { return t == kDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

cudnnMathType_t cudnn_math(ConvMath m) {
  switch (m) {
    case ConvMath::kTensorOp: return CUDNN_TENSOR_OP_MATH;
    case ConvMath::kTensorOpAllowConversion: return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    case ConvMath::kFma: return CUDNN_FMA_MATH;
    default: return CUDNN_DEFAULT_MATH;
  }
}

ConvMath ember_math(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_TENSOR_OP_MATH: return ConvMath::kTensorOp;
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return ConvMath::kTensorOpAllowConversion;
    case CUDNN_FMA_MATH: return ConvMath::kFma;
    default: return ConvMath::kDefault;
  }
}

/// cuDNN's sizes and parameters are ints; ember's are int64 (sizes are kept below 2^31
/// elements per call by images_per_call, so only absurd parameters can fail here).
int to_int(int64_t v) {
  EMBER_CHECK(v >= 0 && v <= kMaxCudnnElements, "convolution parameter ", v, " is too large for cuDNN");
  return static_cast<int>(v);
}

/// alpha or beta in the type cuDNN reads it as: double for float64 data, float otherwise.
struct Scale {
  float f;
  double d;
  explicit Scale(double v) : f(static_cast<float>(v)), d(v) {}
  const void* ptr(ScalarType t) const { return t == kDouble ? static_cast<const void*>(&d) : &f; }
};

// ---- Descriptors ---------------------------------------------------------------------------

using FilterDescriptor = Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDescriptor =
    Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;

/// One cuDNN call on the plain convolution x * w -> y over a chunk of the batch: which call,
/// the sizes, and where each tensor is (the call reads two of them and writes the third).
struct ConvCall {
  ConvKind kind;
  ScalarType dtype;
  Dims4 x, w, y;
  ConvArgs2d args;
  void* x_ptr;
  void* w_ptr;
  void* y_ptr;
  bool accumulate = false;  // kBackwardFilter: add into w (beta 1), for the batch's later chunks
};

/// The call's descriptors. The convolution's math mode is set per algorithm before it is used.
struct Descriptors {
  TensorDescriptor x, y;
  FilterDescriptor w;
  ConvDescriptor conv;

  explicit Descriptors(const ConvCall& c) {
    const cudnnDataType_t t = data_type(c.dtype);
    EMBER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x.get(), CUDNN_TENSOR_NCHW, t, to_int(c.x[0]), to_int(c.x[1]),
                                                 to_int(c.x[2]), to_int(c.x[3])));
    EMBER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y.get(), CUDNN_TENSOR_NCHW, t, to_int(c.y[0]), to_int(c.y[1]),
                                                 to_int(c.y[2]), to_int(c.y[3])));
    EMBER_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.get(), t, CUDNN_TENSOR_NCHW, to_int(c.w[0]), to_int(c.w[1]),
                                                 to_int(c.w[2]), to_int(c.w[3])));
    const ConvArgs2d& a = c.args;
    // ember's convolution is a cross-correlation, like PyTorch's and every framework's.
    EMBER_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        conv.get(), to_int(a.padding[0]), to_int(a.padding[1]), to_int(a.stride[0]), to_int(a.stride[1]),
        to_int(a.dilation[0]), to_int(a.dilation[1]), CUDNN_CROSS_CORRELATION, compute_type(c.dtype)));
    EMBER_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv.get(), to_int(a.groups)));
  }

  void set_math(ConvMath m) const { EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), cudnn_math(m))); }
};

// ---- Algorithm reports, workspace sizes and the calls, per kind ----------------------------

template <class Perf>
std::vector<AlgoPerf> plain_report(const std::vector<Perf>& perf, int returned) {
  std::vector<AlgoPerf> out;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[static_cast<size_t>(i)];
    out.push_back({static_cast<int>(p.algo), p.status == CUDNN_STATUS_SUCCESS, p.determinism == CUDNN_DETERMINISTIC,
                   ember_math(p.mathType), p.memory, p.time});
  }
  return out;
}

/// cuDNN's heuristic ranking of every algorithm for the call (unsupported ones marked so).
std::vector<AlgoPerf> heuristics(cudnnHandle_t h, const ConvCall& c, const Descriptors& d) {
  int count = 0, returned = 0;
  switch (c.kind) {
    case ConvKind::kForward: {
      EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(count));
      EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                               count, &returned, perf.data()));
      return plain_report(perf, returned);
    }
    case ConvKind::kBackwardData: {
      EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(count));
      EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                    count, &returned, perf.data()));
      return plain_report(perf, returned);
    }
    case ConvKind::kBackwardFilter: {
      EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(count));
      EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv.get(),
                                                                      d.w.get(), count, &returned, perf.data()));
      return plain_report(perf, returned);
    }
  }
  return {};
}

/// cuDNN's timing of every algorithm that fits `workspace_bytes`, fastest first. It writes the
/// call's output (`out`: the call's own, or scratch when the output must not be overwritten).
std::vector<AlgoPerf> timings(cudnnHandle_t h, const ConvCall& c, const Descriptors& d, void* out, void* workspace,
                              size_t workspace_bytes) {
  int count = 0, returned = 0;
  switch (c.kind) {
    case ConvKind::kForward: {
      EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(count));
      EMBER_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x.get(), c.x_ptr, d.w.get(), c.w_ptr,
                                                               d.conv.get(), d.y.get(), out, count, &returned,
                                                               perf.data(), workspace, workspace_bytes));
      return plain_report(perf, returned);
    }
    case ConvKind::kBackwardData: {
      EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(count));
      EMBER_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w.get(), c.w_ptr, d.y.get(), c.y_ptr,
                                                                    d.conv.get(), d.x.get(), out, count, &returned,
                                                                    perf.data(), workspace, workspace_bytes));
      return plain_report(perf, returned);
    }
    case ConvKind::kBackwardFilter: {
      EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(count));
      EMBER_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x.get(), c.x_ptr, d.y.get(), c.y_ptr,
                                                                      d.conv.get(), d.w.get(), out, count, &returned,
                                                                      perf.data(), workspace, workspace_bytes));
      return plain_report(perf, returned);
    }
  }
  return {};
}

/// The workspace `algo` needs under the descriptors' current math mode, or nothing when cuDNN
/// declines the algorithm for this call.
std::optional<size_t> workspace_size(cudnnHandle_t h, const ConvCall& c, const Descriptors& d, int algo) {
  size_t bytes = 0;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  switch (c.kind) {
    case ConvKind::kForward:
      s = cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                  static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
      break;
    case ConvKind::kBackwardData:
      s = cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
      break;
    case ConvKind::kBackwardFilter:
      s = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
      break;
  }
  if (s != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return bytes;
}

/// Runs the call with `algo` (the descriptors already in its math mode); cuDNN's status.
cudnnStatus_t convolve(cudnnHandle_t h, const ConvCall& c, const Descriptors& d, int algo, void* workspace,
                       size_t workspace_bytes) {
  const Scale one(1.0), beta(c.accumulate ? 1.0 : 0.0);
  const void* alpha_p = one.ptr(c.dtype);
  const void* beta_p = beta.ptr(c.dtype);
  switch (c.kind) {
    case ConvKind::kForward:
      return cudnnConvolutionForward(h, alpha_p, d.x.get(), c.x_ptr, d.w.get(), c.w_ptr, d.conv.get(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), workspace, workspace_bytes, beta_p,
                                     d.y.get(), c.y_ptr);
    case ConvKind::kBackwardData:
      return cudnnConvolutionBackwardData(h, alpha_p, d.w.get(), c.w_ptr, d.y.get(), c.y_ptr, d.conv.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), workspace,
                                          workspace_bytes, beta_p, d.x.get(), c.x_ptr);
    case ConvKind::kBackwardFilter:
      return cudnnConvolutionBackwardFilter(h, alpha_p, d.x.get(), c.x_ptr, d.y.get(), c.y_ptr, d.conv.get(),
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), workspace,
                                            workspace_bytes, beta_p, d.w.get(), c.w_ptr);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

/// The pointer the call writes.
void* output_of(const ConvCall& c) {
  switch (c.kind) {
    case ConvKind::kForward: return c.y_ptr;
    case ConvKind::kBackwardData: return c.x_ptr;
    default: return c.w_ptr;
  }
}

// ---- Choosing and running ------------------------------------------------------------------

/// `bytes` of device memory from the caching allocator, on the current device and stream.
Tensor device_bytes(size_t bytes) {
  return empty({static_cast<int64_t>(bytes)},
               TensorOptions().dtype(kUInt8).device(Device(kCUDA, static_cast<int8_t>(current_device()))));
}

ConvAlgoCache& algo_cache() {
  static ConvAlgoCache* cache = new ConvAlgoCache;  // never destroyed: used until exit
  return *cache;
}

/// The heuristic ranking timed by cuDNN on the call's tensors, with the largest workspace
/// that can be had (Note [cuDNN algorithm choice]).
std::vector<AlgoPerf> benchmark(cudnnHandle_t h, const ConvCall& c, const Descriptors& d,
                                const std::vector<AlgoPerf>& ranked) {
  const std::vector<size_t> sizes = benchmark_workspace_sizes(ranked);
  std::vector<AlgoChoice> offers;
  for (size_t s : sizes) offers.push_back({0, ConvMath::kDefault, s});
  Tensor workspace;
  const size_t i = reserve_first_fitting(offers, [&](const AlgoChoice& o) {
    workspace = o.workspace ? device_bytes(o.workspace) : Tensor();
  });
  // A weight gradient that adds into w must not have the timing runs overwrite it.
  Tensor scratch;
  void* out = output_of(c);
  if (c.accumulate) {
    scratch = device_bytes(static_cast<size_t>(numel(c.w)) * element_size(c.dtype));
    out = scratch.data_ptr();
  }
  return timings(h, c, d, out, workspace.defined() ? workspace.data_ptr() : nullptr, sizes[i]);
}

/// The algorithms the call may run, best first: cached, or found and cached.
std::vector<AlgoChoice> choose(cudnnHandle_t h, const ConvCall& c, const Descriptors& d, const ConvAlgoKey& key) {
  const bool tf32 = key.allow_tf32, deterministic = key.deterministic, timed = key.benchmark;
  if (auto hit = algo_cache().find(key)) return *hit;

  d.set_math(search_math(c.dtype, tf32));
  std::vector<AlgoPerf> report = heuristics(h, c, d);
  if (timed) report = benchmark(h, c, d, report);
  std::vector<AlgoChoice> usable = usable_algorithms(report, c.dtype, tf32, deterministic);
  std::vector<AlgoChoice> choices;
  for (AlgoChoice a : usable) {  // the workspace each needs in the math mode it will run with
    d.set_math(a.math);
    if (std::optional<size_t> bytes = workspace_size(h, c, d, a.algo)) {
      a.workspace = *bytes;
      choices.push_back(a);
    }
  }
  if (choices.empty() && deterministic) throw_no_deterministic_algorithm();
  EMBER_CHECK(!choices.empty(), "cuDNN has no algorithm for this convolution (x ", IntArrayRef(c.x), ", weight ",
              IntArrayRef(c.w), ", ", scalar_type_name(c.dtype), ")");
  algo_cache().insert(key, choices);
  return choices;
}

/// The cache key of a call under the current switches. As PyTorch's:
/// ember::use_deterministic_algorithms(true) implies cudnn.deterministic.
ConvAlgoKey algo_key(const ConvCall& c) {
  const bool deterministic = backends::cudnn::deterministic || are_deterministic_algorithms_enabled();
  return make_algo_key(current_device(), c.kind, c.dtype, c.x, c.w, c.y, c.args, backends::cudnn::allow_tf32,
                       deterministic, backends::cudnn::benchmark);
}

/// Runs the call with the first algorithm that gets its workspace and runs (an engine cuDNN
/// refuses at execution is dropped from the cache and the next one tried: conv_plan.h,
/// run_first_working).
void run(const ConvCall& c) {
  cudnnHandle_t h = cudnn_handle();
  const Descriptors d(c);
  const ConvAlgoKey key = algo_key(c);
  const std::vector<AlgoChoice> choices = choose(h, c, d, key);
  Tensor workspace;
  std::vector<AlgoChoice> failed;
  auto reserve = [&](const AlgoChoice& o) { workspace = o.workspace ? device_bytes(o.workspace) : Tensor(); };
  auto attempt = [&](const AlgoChoice& a) -> std::optional<std::string> {
    d.set_math(a.math);
    const cudnnStatus_t status =
        convolve(h, c, d, a.algo, workspace.defined() ? workspace.data_ptr() : nullptr, a.workspace);
    if (status == CUDNN_STATUS_SUCCESS) return std::nullopt;
    return std::string(cudnnGetErrorString(status));
  };
  try {
    run_first_working(choices, reserve, attempt, &failed);
  } catch (...) {
    if (!failed.empty()) algo_cache().drop(key, failed);
    throw;
  }
  if (!failed.empty()) algo_cache().drop(key, failed);
}

/// Runs `kind` over the batch in chunks cuDNN's 32-bit tensors can hold (one chunk, in all
/// but enormous cases). x and y are the plain convolution's input and output, w its weight.
void run_in_chunks(ConvKind kind, const Tensor& x, const Tensor& w, const Tensor& y, const ConvArgs2d& args) {
  const Dims4 xd = dims_4d(x.sizes()), wd = dims_4d(w.sizes()), yd = dims_4d(y.sizes());
  const int64_t chunk = images_per_call(xd, yd, wd);
  const int64_t x_image = xd[1] * xd[2] * xd[3] * x.element_size(), y_image = yd[1] * yd[2] * yd[3] * y.element_size();
  for (int64_t n0 = 0; n0 < xd[0]; n0 += chunk) {
    const int64_t n = std::min(chunk, xd[0] - n0);
    ConvCall c{kind, x.dtype(), xd, wd, yd, args, static_cast<char*>(x.data_ptr()) + n0 * x_image,
               w.data_ptr(), static_cast<char*>(y.data_ptr()) + n0 * y_image};
    c.x[0] = c.y[0] = n;
    c.accumulate = kind == ConvKind::kBackwardFilter && n0 > 0;
    run(c);
  }
}

/// y with the zero rows and columns Note [Gradients cuDNN accepts] asks for (y itself when
/// none), 4-d.
Tensor padded_gradient(const Tensor& x, const Tensor& w, const Tensor& y, const ConvArgs2d& args) {
  const Dims4 yd = dims_4d(y.sizes());
  const std::array<int64_t, 2> add = grad_rows_to_add(dims_4d(x.sizes()), dims_4d(w.sizes()), yd, args);
  Tensor y4 = y.view(IntArrayRef(yd));
  if (add[0] == 0 && add[1] == 0) return y4;
  Tensor padded = zeros({yd[0], yd[1], yd[2] + add[0], yd[3] + add[1]}, y.options());
  padded.narrow(2, 0, yd[2]).narrow(3, 0, yd[3]).copy_(y4);
  return padded;
}

void require_cudnn() {
  EMBER_CHECK(backends::cudnn::enabled,
              "convolution on CUDA needs cuDNN, but ember::backends::cudnn::enabled is false (ember has no other "
              "CUDA convolution)");
}

/// out += bias along channels (dim 1).
void add_bias(const Tensor& out, const Tensor& bias) {
  if (!bias.defined()) return;
  std::vector<int64_t> shape(static_cast<size_t>(out.dim()), 1);
  shape[1] = bias.numel();
  Tensor o = out;
  o.add_(bias.view(shape));
}

}  // namespace

void conv_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvArgs2d& args) {
  require_cudnn();
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  if (x.numel() == 0) {  // no input channels, or no input left after padding: only the bias
    Tensor(out).zero_();
  } else {
    run_in_chunks(ConvKind::kForward, x, w, out, args);
  }
  add_bias(out, bias);
}

void conv_transpose(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias,
                    const ConvArgs2d& args) {
  require_cudnn();
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  if (x.numel() == 0) {
    Tensor(out).zero_();
  } else {
    // cuDNN's backward-data call: out plays the plain convolution's input, x its output.
    run_in_chunks(ConvKind::kBackwardData, out, w, padded_gradient(out, w, x, args), args);
  }
  add_bias(out, bias);
}

void conv_backward_weight(const Tensor& out, const Tensor& x, const Tensor& g, const ConvArgs2d& args) {
  require_cudnn();
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  if (x.numel() == 0 || g.numel() == 0) {  // an empty batch, or no output positions: nothing to sum
    Tensor(out).zero_();
    return;
  }
  run_in_chunks(ConvKind::kBackwardFilter, x, out, padded_gradient(x, out, g, args), args);
}

}  // namespace ember::cuda
