// Creation ops: empty/zeros/ones/full/arange/linspace/eye, tensor(...) from C++ data,
// from_blob and the *_like forms. Random creation lives in random.cpp.
#include "ember/core/ops/creation.h"

#include <cmath>
#include <limits>

#include "ember/core/cpu/loops.h"
#include "ember/core/op.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"
#include "ember/cuda/creation.h"

namespace ember {
namespace {

Tensor finish(Tensor t, const TensorOptions& options) {
  if (!options.requires_grad()) return t;
  // Factories say "Only" where requires_grad_() says "only": PyTorch's two messages.
  EMBER_CHECK(t.is_floating_point(), "Only Tensors of floating point and complex dtype can require gradients");
  return t.requires_grad_(true);
}

void check_sizes(IntArrayRef size) {
  for (int64_t s : size)
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
}

}  // namespace

Tensor empty(IntArrayRef size, TensorOptions options) {
  // One pass for the size check, the element count and the contiguous strides (every op's
  // output comes through here: per-op overhead).
  DimVector strides(size.size());
  int64_t numel = 1, stride = 1;
  for (size_t i = size.size(); i-- > 0;) {
    if (size[i] < 0) check_sizes(size);  // raises PyTorch's message
    strides[i] = stride;
    stride *= std::max<int64_t>(size[i], 1);
    numel *= size[i];
  }
  ScalarType dt = options.dtype();
  size_t nbytes = static_cast<size_t>(numel) * element_size(dt);
  Allocator* alloc = options.device().is_cpu() ? cpu_allocator() : allocator_for(options.device());
  Tensor t(intrusive_ptr<TensorImpl>::make(Storage::make(nbytes, alloc), dt, size, strides, 0));
  if (!options.requires_grad()) return t;
  return finish(std::move(t), options);
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options) {
  check_sizes(size);
  EMBER_CHECK(size.size() == stride.size(), "dimensionality of sizes (", size.size(),
              ") must match dimensionality of strides (", stride.size(), ")");
  // Bytes needed: one past the furthest element the strides reach (none if a size is 0).
  int64_t extent = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) { extent = 0; break; }
    extent += (size[i] - 1) * stride[i];
  }
  ScalarType dt = options.dtype();
  auto storage = Storage::make(static_cast<size_t>(extent) * element_size(dt), allocator_for(options.device()));
  return finish(Tensor(intrusive_ptr<TensorImpl>::make(std::move(storage), dt, size, stride, 0)), options);
}

Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options) {
  if (!options.has_dtype()) {
    options = options.dtype(fill_value.isBoolean() ? kBool
                            : fill_value.isIntegral(false) ? kLong : get_default_dtype());
  }
  Tensor t = empty(size, options.requires_grad(false));
  detail::fill_values(t, fill_value);  // a fresh tensor starts at version 0, as in PyTorch
  return finish(t, options);
}

Tensor zeros(IntArrayRef size, TensorOptions options) {
  Tensor t = empty(size, options.requires_grad(false));
  detail::fill_values(t, 0);
  return finish(t, options);
}

Tensor ones(IntArrayRef size, TensorOptions options) {
  Tensor t = empty(size, options.requires_grad(false));
  detail::fill_values(t, 1);
  return finish(t, options);
}

// torch.scalar_tensor: the default float dtype whatever the scalar's kind, unlike full.
Tensor scalar_tensor(const Scalar& s, TensorOptions options) {
  return full({}, s, options.has_dtype() ? options : options.dtype(get_default_dtype()));
}

Tensor arange(const Scalar& end, TensorOptions options) { return arange(0, end, 1, options); }
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options) {
  return arange(start, end, 1, options);
}

// PyTorch's arange_out: bounds and step are first converted to the output's accumulate
// type (int64 for integer dtypes, so arange(0, 2.5, 0.5, kLong) has step 0), and the length
// is ceil((end - start) / step) computed in double (from the converted values for int64 only).
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options) {
  bool all_int = start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
  if (!options.has_dtype()) options = options.dtype(all_int ? kLong : get_default_dtype());
  ScalarType dt = options.dtype();
  EMBER_CHECK(dt != kBool, "\"arange_", options.device().is_cuda() ? "cuda" : "cpu", "\" not implemented for 'Bool'");
  bool integral = is_integral(dt, false);
  double s = integral ? static_cast<double>(start.toLong()) : start.toDouble();
  double e = integral ? static_cast<double>(end.toLong()) : end.toDouble();
  double st = integral ? static_cast<double>(step.toLong()) : step.toDouble();
  double size_d = dt == kLong ? std::ceil((e - s) / st)
                              : std::ceil((end.toDouble() - start.toDouble()) / step.toDouble());
  EMBER_CHECK(st != 0, "step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  EMBER_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  int64_t n = static_cast<int64_t>(size_d);
  Tensor t = empty({n}, options.requires_grad(false));
  if (t.is_cuda()) {
    cuda::arange(t, start.toLong(), step.toLong(), s, st);
    return finish(t, options);
  }
  visit_dtype(dt, [&]<typename T>() {
    T* p = t.data_ptr<T>();
    if constexpr (std::is_integral_v<T>) {
      int64_t is = start.toLong(), ist = step.toLong();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(is + i * ist);
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s + static_cast<double>(i) * st);
    }
  });
  return finish(t, options);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor t = empty({steps}, options.requires_grad(false));
  EMBER_CHECK(t.dtype() != kBool, "\"linspace_", t.is_cuda() ? "cuda" : "cpu", "\" not implemented for 'Bool'");
  // The bounds are first converted to the output dtype (PyTorch's scalar_start.to<scalar_t>()).
  bool integral = is_integral(t.dtype(), false);
  double s = integral ? static_cast<double>(start.toLong()) : start.toDouble();
  double e = integral ? static_cast<double>(end.toLong()) : end.toDouble();
  if (steps == 1) {
    t.fill_(start);  // PyTorch: a single step is `start`, not `end`
    return finish(t, options);
  }
  double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  if (t.is_cuda()) {
    cuda::linspace(t, s, e, step);
    return finish(t, options);
  }
  int64_t half = steps / 2;
  visit_dtype(t.dtype(), [&]<typename T>() {
    T* p = t.data_ptr<T>();
    // Symmetric fill from both ends, as PyTorch does, so the last value is exactly `end`.
    // Integer dtypes truncate the double value, as PyTorch's double step does.
    for (int64_t i = 0; i < steps; ++i)
      p[i] = static_cast<T>(i < half ? s + step * static_cast<double>(i)
                                     : e - step * static_cast<double>(steps - 1 - i));
  });
  return finish(t, options);
}

Tensor eye(int64_t n, TensorOptions options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, TensorOptions options) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  Tensor t = zeros({n, m}, options.requires_grad(false));
  if (t.is_cuda()) {
    // The diagonal is a strided view (stride m + 1): one fill, no kernel of its own.
    Tensor diag = t.as_strided({std::min(n, m)}, {m + 1});
    detail::fill_values(diag, 1);
    return finish(t, options);
  }
  visit_dtype(t.dtype(), [&]<typename T>() {
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = static_cast<T>(1);
  });
  return finish(t, options);
}

Tensor empty_like(const Tensor& t, TensorOptions options) {
  TensorOptions o = TensorOptions()
                        .dtype(options.has_dtype() ? options.dtype() : t.dtype())
                        .device(options.has_device() ? options.device() : t.device())
                        .requires_grad(options.requires_grad());
  return empty(t.sizes(), o);
}

Tensor zeros_like(const Tensor& t, TensorOptions options) {
  Tensor r = empty_like(t, options.requires_grad(false));
  detail::fill_values(r, 0);
  return finish(r, options);
}

Tensor ones_like(const Tensor& t, TensorOptions options) {
  Tensor r = empty_like(t, options.requires_grad(false));
  detail::fill_values(r, 1);
  return finish(r, options);
}

Tensor full_like(const Tensor& t, const Scalar& fill_value, TensorOptions options) {
  Tensor r = empty_like(t, options.requires_grad(false));
  detail::fill_values(r, fill_value);
  return finish(r, options);
}

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options) {
  return from_blob(data, sizes, contiguous_strides(sizes), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  check_sizes(sizes);
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) extent += sizes[i] == 0 ? 0 : (sizes[i] - 1) * strides[i];
  size_t nbytes = static_cast<size_t>(extent) * element_size(options.dtype());
  auto storage = Storage::make(data, nbytes, options.device(), nullptr);
  return finish(Tensor(intrusive_ptr<TensorImpl>::make(std::move(storage), options.dtype(), sizes, strides, 0)),
                options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 TensorOptions options) {
  check_sizes(sizes);
  size_t nbytes = static_cast<size_t>(prod_of(sizes)) * element_size(options.dtype());
  auto storage = Storage::make(data, nbytes, options.device(), deleter);
  return finish(Tensor(intrusive_ptr<TensorImpl>::make(std::move(storage), options.dtype(), sizes,
                                                      contiguous_strides(sizes), 0)),
                options);
}

// ---- tensor({...}) --------------------------------------------------------------------

TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> list)
    : is_list_(true), elements_(list) {
  // The list's dtype is the promotion of its elements' (so {1, 2.5} is floating and
  // {true, 1} integral), as Python's torch.tensor infers it.
  if (elements_.empty()) { dtype_ = kFloat; return; }
  dtype_ = elements_[0].dtype_;
  DimVector first = elements_[0].sizes();
  for (const auto& e : elements_) {
    EMBER_CHECK(e.sizes() == first, "Expected all sub-lists to have sizes: ", first.ref(), " (e.g. ",
                elements_[0], "), but got sub-list ", e, " with sizes: ", e.sizes().ref());
    dtype_ = promote_types(dtype_, e.dtype_);
  }
}

std::ostream& operator<<(std::ostream& os, const TensorDataContainer& c) {
  if (!c.is_list_) {
    if (c.scalar_.isFloatingPoint()) return os << c.scalar_.toDouble();
    return os << c.scalar_.toLong();
  }
  os << '{';
  for (size_t i = 0; i < c.elements_.size(); ++i) os << (i ? ", " : "") << c.elements_[i];
  return os << '}';
}

DimVector TensorDataContainer::sizes() const {
  if (!is_list_) return {};
  DimVector s{static_cast<int64_t>(elements_.size())};
  if (!elements_.empty())
    for (int64_t d : elements_[0].sizes()) s.push_back(d);
  return s;
}

void TensorDataContainer::collect(std::vector<Scalar>& out) const {
  if (!is_list_) { out.push_back(scalar_); return; }
  for (const auto& e : elements_) e.collect(out);
}

void TensorDataContainer::fill(Tensor& out) const {
  std::vector<Scalar> values;
  collect(values);
  visit_dtype(out.dtype(), [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i].to<T>();
  });
}

Tensor tensor(const TensorDataContainer& data, TensorOptions options) {
  if (!options.has_dtype()) {
    // libtorch's compute_desired_dtype: C++ int/long literals give int64, float/double ones
    // the default dtype; other element types (bool, int16_t, ...) keep their own dtype.
    ScalarType t = data.dtype();
    ScalarType desired = (t == kInt || t == kLong) ? kLong : (t == kFloat || t == kDouble) ? get_default_dtype() : t;
    options = options.dtype(desired);
  }
  Tensor cpu_t = empty(data.sizes(), options.device(kCPU).requires_grad(false));
  data.fill(cpu_t);
  Tensor t = options.device().is_cpu() ? cpu_t : cpu_t.to(options.device());
  return finish(t, options);
}

}  // namespace ember
