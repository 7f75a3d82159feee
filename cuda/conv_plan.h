// How a convolution is handed to cuDNN (cuda/conv.cpp), as plain C++ with no CUDA in it, so the
// mapping is unit-tested on the CPU (tests/core/test_cuda_conv_plan.cpp): the 2-d form of a
// 1-d or 2-d convolution, the tensor sizes cuDNN sees, how a batch too large for cuDNN's 32-bit
// tensors is cut into calls, the zero rows a gradient needs when the convolution drops rows of
// its input (Note [Gradients cuDNN accepts]), which algorithms may run, and the cache that keeps
// the choice per shape.
//
// cuDNN's three calls all describe one plain convolution C: x (N, C, H, W) convolved with
// w (O, C / groups, KH, KW) gives y (N, O, OH, OW).
//   kForward:        y = C(x; w)                      (ember's conv, and the forward of others)
//   kBackwardData:   x = C^T(y; w)                    (ember's transposed conv)
//   kBackwardFilter: w = d<C(x; w), y>/dw = Wgrad(x, y)
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/core/array_ref.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/out_of_memory_error.h"

namespace ember::cuda {

using Dims4 = std::array<int64_t, 4>;

/// A convolution's parameters in 2-d form: index 0 is height, 1 is width. A 1-d convolution
/// is a 2-d one of height 1 (padding 0, stride 1, dilation 1 along height).
struct ConvArgs2d {
  std::array<int64_t, 2> padding{0, 0}, stride{1, 1}, dilation{1, 1};
  int64_t groups = 1;
  bool operator==(const ConvArgs2d&) const = default;
};

/// The 2-d form of ember's per-dimension parameters (one value per spatial dimension, 1 or 2).
inline ConvArgs2d conv_args_2d(IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  EMBER_CHECK(stride.size() == padding.size() && stride.size() == dilation.size() &&
                  (stride.size() == 1 || stride.size() == 2),
              "internal error: convolution parameters for ", stride.size(), " dimensions");
  ConvArgs2d a;
  a.groups = groups;
  const size_t first = 2 - stride.size();  // 1-d: only the width entry is set
  for (size_t i = 0; i < stride.size(); ++i) {
    a.stride[first + i] = stride[i];
    a.padding[first + i] = padding[i];
    a.dilation[first + i] = dilation[i];
  }
  return a;
}

/// The 4-d (NCHW) sizes of a 3-d (N, C, L) or 4-d tensor: (N, C, L) is (N, C, 1, L).
inline Dims4 dims_4d(IntArrayRef sizes) {
  EMBER_CHECK(sizes.size() == 3 || sizes.size() == 4, "internal error: a convolution tensor of ", sizes.size(),
              " dimensions");
  if (sizes.size() == 3) return {sizes[0], sizes[1], 1, sizes[2]};
  return {sizes[0], sizes[1], sizes[2], sizes[3]};
}

/// Row-major (packed NCHW) strides of dims: what a contiguous tensor has.
inline Dims4 packed_strides(const Dims4& d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }

inline int64_t numel(const Dims4& d) { return d[0] * d[1] * d[2] * d[3]; }

/// The output length of a plain convolution along one dimension (cuDNN's formula; <= 0 when
/// the kernel does not fit).
inline int64_t conv_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t room = in + 2 * pad - span;
  return room < 0 ? 0 : room / stride + 1;
}

/// The sizes of C(x; w): what cuDNN expects y to be.
inline Dims4 conv_output_dims(const Dims4& x, const Dims4& w, const ConvArgs2d& a) {
  Dims4 y{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) y[2 + i] = conv_output_size(x[2 + i], w[2 + i], a.padding[i], a.stride[i], a.dilation[i]);
  return y;
}

// Note [Gradients cuDNN accepts]
// cuDNN's backward calls require y to have exactly the sizes of C(x; w). ember reaches them with
// a y that has fewer rows (or columns) than that in two cases, both from a transposed
// convolution whose output_padding is at least its stride (allowed while below its dilation):
// its forward is C^T(y; w) into an x taller than C^T of y alone reaches, and its weight
// gradient is Wgrad(g, x) with g that same taller shape. The rows y lacks are ones no value of
// the operation depends on beyond zeros: appending that many zero rows to y gives the same
// C^T and the same Wgrad (zero rows of y add nothing to either), and sizes cuDNN accepts.
// PyTorch declines cuDNN for these shapes (is_output_padding_big) and uses its own kernels;
// ember has no other CUDA convolution, so it pads.

/// How many zero rows (index 0) and columns (index 1) y must gain to have C(x; w)'s sizes.
/// Zero for every convolution but Note [Gradients cuDNN accepts]'s.
inline std::array<int64_t, 2> grad_rows_to_add(const Dims4& x, const Dims4& w, const Dims4& y, const ConvArgs2d& a) {
  const Dims4 full = conv_output_dims(x, w, a);
  std::array<int64_t, 2> add{};
  for (int i = 0; i < 2; ++i) {
    add[i] = full[2 + i] - y[2 + i];
    EMBER_CHECK(add[i] >= 0, "internal error: convolution gradient of size ", y[2 + i], " along spatial dim ", i,
                " exceeds the ", full[2 + i], " the convolution gives");
  }
  return add;
}

/// cuDNN's legacy tensors index with 32-bit integers: no tensor of one call may have more
/// elements than this.
constexpr int64_t kMaxCudnnElements = std::numeric_limits<int32_t>::max();

/// How many images of the batch one cuDNN call takes: all of them unless x or y would pass
/// kMaxCudnnElements, else as many as fit (cuda/conv.cpp loops over the chunks; weight
/// gradients add the chunks' contributions up). One image too large for a call raises.
inline int64_t images_per_call(const Dims4& x, const Dims4& y, const Dims4& w) {
  const int64_t per_image = std::max(x[1] * x[2] * x[3], y[1] * y[2] * y[3]);
  EMBER_CHECK(per_image <= kMaxCudnnElements && numel(w) <= kMaxCudnnElements,
              "convolution too large for cuDNN: one image of ", per_image, " elements or a weight of ", numel(w),
              " elements passes cuDNN's limit of ", kMaxCudnnElements);
  return std::max<int64_t>(1, std::min(x[0], kMaxCudnnElements / std::max<int64_t>(per_image, 1)));
}

/// The three cuDNN convolution calls (see the file comment).
enum class ConvKind : uint8_t { kForward, kBackwardData, kBackwardFilter };

/// cuDNN's math modes (cudnnMathType_t), by name.
enum class ConvMath : uint8_t { kDefault, kTensorOp, kTensorOpAllowConversion, kFma };

/// The math mode the algorithm search runs under. float32 may use TF32 tensor cores only when
/// ember::backends::cudnn::allow_tf32 is set (cuDNN's default math allows TF32 on Ampere and
/// later, FMA math forbids it); float16 and bfloat16 are meant for tensor cores; float64 has
/// none.
inline ConvMath search_math(ScalarType t, bool allow_tf32) {
  switch (t) {
    case kFloat: return allow_tf32 ? ConvMath::kDefault : ConvMath::kFma;
    case kHalf:
    case kBFloat16: return ConvMath::kTensorOp;
    default: return ConvMath::kDefault;
  }
}

/// The math mode an algorithm runs under: the one cuDNN reports for it, except that float32
/// without TF32 keeps FMA math whatever the report says (PyTorch's rule as well).
inline ConvMath run_math(ScalarType t, bool allow_tf32, ConvMath reported) {
  return t == kFloat && !allow_tf32 ? ConvMath::kFma : reported;
}

/// Everything an algorithm choice depends on; the algorithm cache's key.
struct ConvAlgoKey {
  int device = 0;
  ConvKind kind = ConvKind::kForward;
  ScalarType dtype = kFloat;
  Dims4 x{}, w{}, y{};
  Dims4 x_strides{}, y_strides{};
  ConvArgs2d args;
  bool allow_tf32 = false;
  bool deterministic = false;
  bool benchmark = false;  // a timed choice and a heuristic one are kept apart
  bool operator==(const ConvAlgoKey&) const = default;
};

/// The key of one cuDNN call on contiguous tensors.
inline ConvAlgoKey make_algo_key(int device, ConvKind kind, ScalarType dtype, const Dims4& x, const Dims4& w,
                                 const Dims4& y, const ConvArgs2d& args, bool allow_tf32, bool deterministic,
                                 bool benchmark) {
  ConvAlgoKey k;
  k.device = device, k.kind = kind, k.dtype = dtype;
  k.x = x, k.w = w, k.y = y;
  k.x_strides = packed_strides(x), k.y_strides = packed_strides(y);
  k.args = args;
  // TF32 only matters to float32: other dtypes share one entry whatever the flag says.
  k.allow_tf32 = dtype == kFloat && allow_tf32;
  k.deterministic = deterministic, k.benchmark = benchmark;
  return k;
}

struct ConvAlgoKeyHash {
  size_t operator()(const ConvAlgoKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields, one 64-bit word at a time
    auto mix = [&h](int64_t v) {
      h ^= static_cast<uint64_t>(v);
      h *= 1099511628211ull;
    };
    mix(k.device), mix(static_cast<int64_t>(k.kind)), mix(static_cast<int64_t>(k.dtype));
    for (const Dims4* d : {&k.x, &k.w, &k.y, &k.x_strides, &k.y_strides})
      for (int64_t v : *d) mix(v);
    for (int i = 0; i < 2; ++i) mix(k.args.padding[i]), mix(k.args.stride[i]), mix(k.args.dilation[i]);
    mix(k.args.groups);
    mix((k.allow_tf32 ? 1 : 0) | (k.deterministic ? 2 : 0) | (k.benchmark ? 4 : 0));
    return static_cast<size_t>(h);
  }
};

/// One algorithm as cuDNN's heuristics or its timing report it (cudnnConvolution*AlgoPerf_t),
/// in plain types; `algo` is the cuDNN enum's value.
struct AlgoPerf {
  int algo = 0;
  bool ok = false;  // status CUDNN_STATUS_SUCCESS: it supports this convolution
  bool deterministic = false;
  ConvMath math = ConvMath::kDefault;
  size_t workspace = 0;
  float time_ms = -1;
};

/// An algorithm that may run, with its math mode and workspace bytes.
struct AlgoChoice {
  int algo = 0;
  ConvMath math = ConvMath::kDefault;
  size_t workspace = 0;
  bool operator==(const AlgoChoice&) const = default;
};

/// The algorithms of a report that may run, best first (cuDNN orders heuristics by expected
/// speed and timings by measured time): those cuDNN supports here and, when only
/// deterministic algorithms are allowed, those that are. An algorithm listed twice (under two
/// math modes) keeps its first entry.
inline std::vector<AlgoChoice> usable_algorithms(const std::vector<AlgoPerf>& report, ScalarType dtype,
                                                 bool allow_tf32, bool deterministic_only) {
  std::vector<AlgoChoice> out;
  for (const AlgoPerf& p : report) {
    if (!p.ok || (deterministic_only && !p.deterministic)) continue;
    if (std::any_of(out.begin(), out.end(), [&](const AlgoChoice& c) { return c.algo == p.algo; })) continue;
    out.push_back({p.algo, run_math(dtype, allow_tf32, p.math), p.workspace});
  }
  return out;
}

/// The workspace sizes to offer cuDNN's timing run, largest first: enough for every supported
/// algorithm, then (when that much memory is not to be had) less and less, down to none, so
/// the timing covers whatever fits.
inline std::vector<size_t> benchmark_workspace_sizes(const std::vector<AlgoPerf>& report) {
  std::vector<size_t> sizes{0};
  for (const AlgoPerf& p : report)
    if (p.ok) sizes.push_back(p.workspace);
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The first choice whose workspace can be had: `reserve(choice)` allocates it (returning
/// normally) or raises the allocator's error. An out-of-memory error moves on to the next
/// choice that needs less workspace than the one that failed (PyTorch's fallback: a slower
/// algorithm rather than no convolution); when none is left the out-of-memory error
/// propagates, as does any other error. Returns the index of the choice reserved.
template <class Reserve>
size_t reserve_first_fitting(const std::vector<AlgoChoice>& choices, Reserve&& reserve) {
  EMBER_CHECK(!choices.empty(), "internal error: no cuDNN convolution algorithm to reserve");
  std::optional<size_t> failed;  // the smallest workspace that could not be had
  std::exception_ptr out_of_memory;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (failed && choices[i].workspace >= *failed) continue;
    try {
      reserve(choices[i]);
      return i;
    } catch (const OutOfMemoryError&) {  // the caching allocator's; any other error propagates
      failed = choices[i].workspace;
      out_of_memory = std::current_exception();
    }
  }
  std::rethrow_exception(out_of_memory);
}

/// Runs a convolution with the first usable choice: `reserve(choice)` gets its workspace (as
/// reserve_first_fitting: out of memory moves on to a smaller one), then `attempt(choice)` runs
/// it and returns nothing on success or cuDNN's description of why it did not run. An engine
/// that fails at run time for another reason than memory (cuDNN can accept an algorithm in its
/// heuristics and workspace query, then refuse it at execution: CUDNN_STATUS_NOT_SUPPORTED,
/// EXECUTION_FAILED) is dropped and the next one tried. `failed` receives the algorithms that
/// failed, so the caller can drop them from its cache. When none runs, the error lists each
/// algorithm with its failure. Returns the index of the choice that ran.
template <class Reserve, class Attempt>
size_t run_first_working(const std::vector<AlgoChoice>& choices, Reserve&& reserve, Attempt&& attempt,
                         std::vector<AlgoChoice>* failed) {
  std::vector<size_t> left(choices.size());
  for (size_t i = 0; i < left.size(); ++i) left[i] = i;
  std::string why;
  while (!left.empty()) {
    std::vector<AlgoChoice> offer;
    for (size_t i : left) offer.push_back(choices[i]);
    const size_t k = reserve_first_fitting(offer, reserve);  // raises when no workspace fits
    const size_t i = left[k];
    const std::optional<std::string> error = attempt(choices[i]);
    if (!error) return i;
    if (failed) failed->push_back(choices[i]);
    why += detail::str_cat(why.empty() ? "" : "; ", "algorithm ", choices[i].algo, ": ", *error);
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(k));
  }
  detail::throw_error(detail::str_cat("cuDNN could not run this convolution with any of its ", choices.size(),
                                      " algorithms (", why, ")"));
}

/// PyTorch's error when ember::backends::cudnn::deterministic leaves no algorithm.
[[noreturn]] inline void throw_no_deterministic_algorithm() {
  detail::throw_error("no deterministic convolution algorithms available in CuDNN");
}

/// The algorithm choices per key, shared by all threads (cuDNN's answer does not depend on
/// the thread or stream asking).
class ConvAlgoCache {
 public:
  std::optional<std::vector<AlgoChoice>> find(const ConvAlgoKey& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  /// Keeps the first answer for a key (two threads may search at once; either answer is good).
  void insert(const ConvAlgoKey& key, std::vector<AlgoChoice> choices) {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.emplace(key, std::move(choices));
  }
  /// Forgets `failed` for the key (an engine that did not run), so later calls start with the
  /// next one; a key left with no choice is forgotten whole and searched again next time.
  void drop(const ConvAlgoKey& key, const std::vector<AlgoChoice>& failed) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) return;
    std::erase_if(it->second, [&](const AlgoChoice& c) { return std::find(failed.begin(), failed.end(), c) != failed.end(); });
    if (it->second.empty()) map_.erase(it);
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<ConvAlgoKey, std::vector<AlgoChoice>, ConvAlgoKeyHash> map_;
};

}  // namespace ember::cuda
