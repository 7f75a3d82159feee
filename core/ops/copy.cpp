// Copying and conversion: copy_ (with dtype cast and broadcasting), to(dtype/device), clone,
// contiguous, fill_, zero_, item, pin_memory. copy_ is the op every other conversion goes
// through.
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/ops/copy.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/shape.h"
#include "ember/cuda/copy.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/runtime/pinned_allocator.h"

namespace ember {
namespace cpu {

// Note [Float to integer casts]
// C++ leaves converting NaN, an infinity or a value outside the target's range to an integer
// undefined (UBSan reports it, and the compiler may assume it never happens). PyTorch's CPU
// casts compile to x86's truncating conversions, whose results its users see: NaN and values
// outside int32 (int64 for an int64 target) become INT32_MIN (INT64_MIN), and the 8- and
// 16-bit types keep the low bits of the int32 result (300.0 -> uint8 44, -1.0 -> uint8 255).
// ember gives those values on every platform, without the undefined behaviour. (Found by
// fuzz/fuzz_state_dict.cpp: a float64 1e300 loaded into the int64 num_batches_tracked.)
template <class D, class F>
D float_to_int(F v) {
  if constexpr (sizeof(D) == 8) {
    constexpr F lo = static_cast<F>(-0x1p63), hi = static_cast<F>(0x1p63);
    return v >= lo && v < hi ? static_cast<D>(v) : std::numeric_limits<D>::min();
  } else {
    constexpr F lo = static_cast<F>(-0x1p31), hi = static_cast<F>(0x1p31);
    // -2^31 - 1 < v < -2^31 also truncates to INT32_MIN, the out-of-range answer: one test.
    int32_t i = v >= lo && v < hi ? static_cast<int32_t>(v) : std::numeric_limits<int32_t>::min();
    return static_cast<D>(i);  // modular since C++20: the low bits
  }
}

/// dst[i] = cast(src[i]) with src broadcast to dst's shape. A src overlapping dst in a
/// different layout is first copied out, so the result is as if src were read before writing.
void copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  Tensor s = src;
  if (src.is_alias_of(dst) &&
      !(src.sizes() == dst.sizes() && src.strides() == dst.strides() && src.storage_offset() == dst.storage_offset())) {
    s = empty_like(src);
    copy(s, src);
  }
  if (s.dtype() == dst.dtype() && s.is_contiguous() && dst.is_contiguous() && s.sizes().equals(dst.sizes())) {
    if (s.data_ptr() != dst.data_ptr()) std::memcpy(dst.data_ptr(), s.data_ptr(), dst.nbytes());
    return;
  }
  TensorIter iter(dst, {s});
  visit_dtype(dst.dtype(), [&]<typename D>() {
    visit_dtype(s.dtype(), [&]<typename S>() {
      cpu_map<D, S>(iter, [](S v) {
        using M = opmath_t<S>;
        if constexpr (std::is_same_v<D, bool>)
          return static_cast<bool>(static_cast<M>(v) != 0);
        else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<M>)
          return float_to_int<D>(static_cast<M>(v));
        else
          return static_cast<D>(static_cast<M>(v));
      });
    });
  });
}

}  // namespace cpu

namespace {

/// clone and to(dtype): out = src cast to out's dtype. d out / d src = identity, so the
/// gradient flows back unchanged (the engine casts it to src's dtype). `op` is the PyTorch
/// name the node is called after (CloneBackward0, ToCopyBackward0).
struct Copy final : UnaryOp {
  const char* op;
  explicit Copy(const char* op_name) : op(op_name) {}
  const char* name() const override { return op; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& src, Tensor& out) const override { cpu::copy(out, src); }
  void cuda(const Tensor& src, Tensor& out) const override { cuda::copy(out, src); }
  Tensor backward(const SavedTensors&, const Tensor& grad) const override { return grad; }
};

/// copy_ as recorded by autograd: out = src cast and broadcast to self's shape. Self's old
/// values are overwritten, so their gradient is zero; src's is the incoming one (cast and
/// un-broadcast by the engine). PyTorch calls this node CopyBackwards.
struct CopyInto final : Op {
  const char* name() const override { return "copy_"; }
  std::string node_name() const override { return "CopyBackwards"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const TensorList& in, TensorList& out) const override { cpu::copy(out[0], in[1]); }
  void cuda(const TensorList& in, TensorList& out) const override { cuda::copy(out[0], in[1]); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    return {s.needs_grad(0) ? zeros_like(g[0]) : Tensor(), s.needs_grad(1) ? g[0] : Tensor()};
  }
};

/// to(device): a copy across devices, differentiable.
struct ToDevice final : UnaryOp {
  Device target;
  explicit ToDevice(Device d) : target(d) {}
  const char* name() const override { return "to_copy"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& src, Tensor& out) const override { cuda::copy(out, src); }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return grad.to(s.input_device(0));
  }
};

}  // namespace

namespace detail {
void copy_into(Tensor& dst, const Tensor& src) {
  if (dst.is_cpu() && src.is_cpu()) cpu::copy(dst, src);
  else cuda::copy(dst, src);
  dst.unsafeGetTensorImpl()->storage()->bump_version();
}
}  // namespace detail

Tensor& Tensor::copy_(const Tensor& src, bool /*non_blocking*/) {
  EMBER_CHECK(src.defined(), "copy_: the source tensor is undefined");
  broadcast_shapes(sizes(), src.sizes());  // raises PyTorch's size mismatch error
  EMBER_CHECK(src.dim() <= dim() && broadcast_shapes(sizes(), src.sizes()).ref().equals(sizes()),
              "output with shape ", sizes(), " doesn't match the broadcast shape ",
              broadcast_shapes(sizes(), src.sizes()).ref());
  check_no_internal_overlap(sizes(), strides());
  detail::check_inplace(*this, "copy_");
  if (!detail::should_record({*this, src})) {
    detail::copy_into(*this, src);
    return *this;
  }
  Tensor from = src.device() == device() ? src : src.to(device());  // run_op wants one device
  Tensor result = run_op(CopyInto{}, {*this, from}, OutSpec{DimVector(sizes()), dtype()});
  return detail::commit_inplace(*this, result);
}

Tensor clone(const Tensor& t) {
  return run_op(Copy("clone"), {t}, OutSpec{DimVector(t.sizes()), t.dtype()});
}
Tensor Tensor::clone() const { return ember::clone(*this); }

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : x.clone(); }
Tensor Tensor::contiguous() const { return ember::contiguous(*this); }

Tensor Tensor::to(ScalarType dt, bool, bool copy) const {
  if (dt == dtype() && !copy) return *this;
  return run_op(Copy("to_copy"), {*this}, OutSpec{DimVector(sizes()), dt});
}

Tensor Tensor::to(Device d, bool non_blocking, bool copy) const {
  return to(d, dtype(), non_blocking, copy);
}

Tensor Tensor::to(Device d, ScalarType dt, bool non_blocking, bool copy) const {
  if (d.is_cuda() && !d.has_index()) d = Device(kCUDA, 0);
  if (d == device()) return to(dt, non_blocking, copy);
  // run_op allocates outputs on its inputs' device, so a cross-device copy allocates its
  // output on the target itself and records the node by hand.
  Tensor src = contiguous();
  TensorList out{empty(sizes(), TensorOptions().dtype(dtype()).device(d))};
  cuda::copy(out[0], src, non_blocking);
  if (detail::should_record({src})) detail::record(std::make_shared<ToDevice>(d), {src}, out);
  return out[0].to(dt);
}

Tensor Tensor::to(TensorOptions options, bool non_blocking, bool copy) const {
  return to(options.has_device() ? options.device() : device(), options.has_dtype() ? options.dtype() : dtype(),
            non_blocking, copy);
}

Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  return to(other.device(), other.dtype(), non_blocking, copy);
}

Tensor& Tensor::fill_(const Scalar& v) {
  detail::check_inplace(*this, "fill_");
  // Recorded: self's old history is cut off (its gradient is zero), as PyTorch's FillBackward.
  if (detail::should_record({*this})) return copy_(full({}, v, options()));
  detail::fill_values(*this, v);
  impl_->storage()->bump_version();
  return *this;
}

namespace detail {
void fill_values(Tensor& t, const Scalar& v) {
  if (t.is_cuda()) {
    cuda::fill(t, v);
    return;
  }
  TensorIter iter = TensorIter::nullary(t);
  visit_dtype(t.dtype(), [&]<typename T>() {
    T value = v.to<opmath_t<T>>();
    cpu::cpu_map<T>(iter, [value]() { return value; });
  });
}
}  // namespace detail

Tensor& Tensor::fill_(const Tensor& v) {
  EMBER_CHECK(v.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", v.dim(),
              " dimensions.");
  return copy_(v);
}

Tensor& Tensor::zero_() { return fill_(0); }

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  Tensor c = is_cpu() ? *this : to(Device(kCPU));
  return visit_dtype(dtype(), [&]<typename T>() -> Scalar {
    T v = *static_cast<const T*>(c.data_ptr());
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
    else return Scalar(static_cast<double>(static_cast<opmath_t<T>>(v)));
  });
}

// ---- pin_memory / is_pinned ----------------------------------------------------------------
// CPU tensors in page-locked memory, which CUDA copies can read and write asynchronously on a
// stream (Tensor::to(kCUDA, /*non_blocking=*/true)). The memory comes from the pinned caching
// allocator (cuda/runtime/pinned_allocator.h).
bool Tensor::is_pinned(std::optional<Device>) const {
  return is_cpu() && cuda::is_pinned_ptr(impl_->storage()->data());
}

Tensor Tensor::pin_memory(std::optional<Device>) const {
  // libtorch's Tensor::toString() names the type, e.g. "CUDAFloatType".
  EMBER_CHECK(is_cpu(), "cannot pin '", device().is_cuda() ? "CUDA" : "", scalar_type_name(dtype()),
              "Type' only dense CPU tensors can be pinned");
  if (is_pinned()) return *this;
  EMBER_CHECK(cuda::is_available(), "Cannot access accelerator device when none is available.");
  // Row-major (PyTorch keeps a dense tensor's strides; the values are the same).
  auto storage = Storage::make(nbytes(), cuda::pinned_allocator());
  Tensor out(
      intrusive_ptr<TensorImpl>::make(std::move(storage), dtype(), sizes(), contiguous_strides(sizes()), 0));
  out.copy_(*this);  // records the copy for autograd when this tensor requires grad
  return out;
}

}  // namespace ember
