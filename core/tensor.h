// Tensor: the cheap, reference-counted handle users hold (libtorch's at::Tensor).
// This header declares the methods; each is defined beside its op in core/ops/<family>.cpp
// (grep the op's name to find shape rules, kernels and backward together).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/core/array_ref.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor_impl.h"
#include "ember/core/tensor_options.h"

namespace ember {

namespace autograd { class Node; }
namespace indexing { class TensorIndex; }

class Tensor;
using TensorList = std::vector<Tensor>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata -----------------------------------------------------------------------
  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl() const { return impl_; }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel(); }
  ScalarType dtype() const { return impl_->dtype(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  int64_t element_size() const { return static_cast<int64_t>(ember::element_size(dtype())); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * ember::element_size(dtype()); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  size_t use_count() const { return impl_.use_count(); }
  bool is_alias_of(const Tensor& o) const { return impl_->storage() == o.impl_->storage(); }
  void* data_ptr() const { return impl_->data(); }
  template <class T> T* data_ptr() const;
  template <class T> const T* const_data_ptr() const { return data_ptr<T>(); }
  template <class T> T* mutable_data_ptr() const { return data_ptr<T>(); }
  /// The one value of a one-element tensor.
  Scalar item() const;
  template <class T> T item() const { return item().to<T>(); }
  std::string toString() const;

  // ---- autograd -----------------------------------------------------------------------
  bool requires_grad() const;
  Tensor& requires_grad_(bool r = true);
  Tensor& set_requires_grad(bool r) { return requires_grad_(r); }
  bool is_leaf() const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  /// The accumulated gradient of a leaf (undefined if none yet).
  Tensor grad() const;
  /// Mutable access to .grad (`x.mutable_grad() = ...`, `x.mutable_grad().reset()`).
  Tensor& mutable_grad();
  void set_grad(const Tensor& g);
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, const TensorList& inputs = {}) const;
  void retain_grad() const;
  bool retains_grad() const;
  /// Registers fn(grad) -> new grad (or undefined to keep grad); returns a handle for remove_hook.
  unsigned register_hook(std::function<Tensor(const Tensor&)> fn) const;
  unsigned register_hook(std::function<void(const Tensor&)> fn) const;
  /// Any callable taking the gradient: one returning a Tensor replaces it, one returning
  /// void only observes it (picks the overload a lambda alone could not).
  template <class F>
    requires std::is_invocable_v<F&, const Tensor&>
  unsigned register_hook(F&& fn) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const Tensor&>>)
      return register_hook(std::function<void(const Tensor&)>(std::forward<F>(fn)));
    else
      return register_hook(std::function<Tensor(const Tensor&)>(std::forward<F>(fn)));
  }
  /// A lambda converts to both std::function forms (a void one discards any result), so pick
  /// by its return type, as libtorch's template register_hook does.
  template <class F>
  unsigned register_hook(F&& fn) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const Tensor&>>)
      return register_hook(std::function<void(const Tensor&)>(std::forward<F>(fn)));
    else
      return register_hook(std::function<Tensor(const Tensor&)>(std::forward<F>(fn)));
  }
  void remove_hook(unsigned handle) const;
  /// fn(param) runs after the gradient was accumulated into this leaf's .grad.
  void register_post_accumulate_grad_hook(std::function<void(Tensor&)> fn) const;
  uint32_t output_nr() const;
  uint32_t _version() const { return impl_->storage()->version(); }
  Tensor detach() const;
  Tensor& detach_();
  Tensor variable_data() const { return detach(); }
  /// Makes this tensor hold new_data's storage, dtype and shape, keeping its autograd identity.
  void set_data(const Tensor& new_data) const;
  const std::string& name() const;
  void reset() { impl_.reset(); }

  // ---- creation / conversion ----------------------------------------------------------
  Tensor& fill_(const Scalar& v);
  Tensor& fill_(const Tensor& v);
  Tensor& zero_();
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);
  Tensor& bernoulli_(double p = 0.5);
  Tensor& random_(int64_t from, int64_t to);
  Tensor& random_(int64_t to);
  Tensor clone() const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  /// x.to(kCPU), x.to(kCUDA): libtorch reaches these through TensorOptions; with both the Device
  /// and the TensorOptions overloads here a DeviceType would match both, so it gets its own.
  Tensor to(DeviceType type, bool non_blocking = false, bool copy = false) const {
    return to(Device(type), non_blocking, copy);
  }
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(TensorOptions options, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA, 0)); }
  /// A copy in page-locked host memory (itself if already pinned), which CUDA copies with
  /// non_blocking=true read asynchronously. `device` is accepted for libtorch's signature.
  Tensor pin_memory(std::optional<Device> device = std::nullopt) const;
  /// Whether the tensor's memory is page-locked (always false without CUDA).
  bool is_pinned(std::optional<Device> device = std::nullopt) const;
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& o) const { return to(o.dtype()); }
  Tensor bernoulli() const;

  // ---- unary --------------------------------------------------------------------------
  Tensor neg() const;      Tensor& neg_();
  Tensor negative() const { return neg(); }
  Tensor abs() const;      Tensor& abs_();
  Tensor sign() const;     Tensor& sign_();
  Tensor exp() const;      Tensor& exp_();
  Tensor exp2() const;     Tensor& exp2_();
  Tensor expm1() const;    Tensor& expm1_();
  Tensor log() const;      Tensor& log_();
  Tensor log2() const;     Tensor& log2_();
  Tensor log10() const;    Tensor& log10_();
  Tensor log1p() const;    Tensor& log1p_();
  Tensor sqrt() const;     Tensor& sqrt_();
  Tensor rsqrt() const;    Tensor& rsqrt_();
  Tensor square() const;   Tensor& square_();
  Tensor reciprocal() const; Tensor& reciprocal_();
  Tensor sin() const;      Tensor& sin_();
  Tensor cos() const;      Tensor& cos_();
  Tensor tan() const;      Tensor& tan_();
  Tensor asin() const;     Tensor& asin_();
  Tensor acos() const;     Tensor& acos_();
  Tensor atan() const;     Tensor& atan_();
  Tensor sinh() const;     Tensor& sinh_();
  Tensor cosh() const;     Tensor& cosh_();
  Tensor tanh() const;     Tensor& tanh_();
  Tensor sigmoid() const;  Tensor& sigmoid_();
  Tensor relu() const;     Tensor& relu_();
  Tensor erf() const;      Tensor& erf_();
  Tensor erfc() const;     Tensor& erfc_();
  Tensor floor() const;    Tensor& floor_();
  Tensor ceil() const;     Tensor& ceil_();
  Tensor round() const;    Tensor& round_();
  Tensor round(int64_t decimals) const;
  Tensor trunc() const;    Tensor& trunc_();
  Tensor frac() const;     Tensor& frac_();
  Tensor logical_not() const; Tensor& logical_not_();
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor clip(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const { return clamp(min, max); }
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;

  // ---- binary -------------------------------------------------------------------------
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o, const Scalar& alpha = 1);
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& o, const Scalar& alpha = 1);
  Tensor mul(const Tensor& o) const;    Tensor mul(const Scalar& o) const;
  Tensor& mul_(const Tensor& o);        Tensor& mul_(const Scalar& o);
  Tensor div(const Tensor& o) const;    Tensor div(const Scalar& o) const;
  Tensor div(const Tensor& o, std::optional<std::string_view> rounding_mode) const;
  Tensor div(const Scalar& o, std::optional<std::string_view> rounding_mode) const;
  Tensor& div_(const Tensor& o);        Tensor& div_(const Scalar& o);
  Tensor& div_(const Tensor& o, std::optional<std::string_view> rounding_mode);
  Tensor remainder(const Tensor& o) const; Tensor remainder(const Scalar& o) const;
  Tensor& remainder_(const Tensor& o);     Tensor& remainder_(const Scalar& o);
  Tensor fmod(const Tensor& o) const;      Tensor fmod(const Scalar& o) const;
  Tensor& fmod_(const Tensor& o);          Tensor& fmod_(const Scalar& o);
  Tensor pow(const Tensor& e) const;       Tensor pow(const Scalar& e) const;
  Tensor& pow_(const Tensor& e);           Tensor& pow_(const Scalar& e);
  Tensor atan2(const Tensor& o) const;     Tensor& atan2_(const Tensor& o);
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor eq(const Tensor& o) const; Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const; Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const; Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const; Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const; Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const; Tensor ge(const Scalar& o) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor bitwise_and(const Tensor& o) const; Tensor bitwise_and(const Scalar& o) const;
  Tensor bitwise_or(const Tensor& o) const;  Tensor bitwise_or(const Scalar& o) const;
  Tensor bitwise_xor(const Tensor& o) const; Tensor bitwise_xor(const Scalar& o) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor masked_fill(const Tensor& mask, const Scalar& v) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& v) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& v);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& v);
  Tensor where(const Tensor& cond, const Tensor& other) const;

  // ---- reductions ---------------------------------------------------------------------
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var(std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(std::optional<IntArrayRef> dim, std::optional<Scalar> correction, bool keepdim = false) const;
  // As libtorch: without these, var(1) and var({1}) would convert int -> bool and pick
  // var(unbiased) over all elements instead of reducing dim 1.
  Tensor var(int dim) const { return var(IntArrayRef(int64_t{dim})); }
  Tensor std(int dim) const { return std(IntArrayRef(int64_t{dim})); }
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(std::optional<Scalar> p, IntArrayRef dim, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;      // core/ops/softmax.cpp
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;  // core/ops/softmax.cpp
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;

  // ---- shape and views ----------------------------------------------------------------
  Tensor view(IntArrayRef size) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape(IntArrayRef size) const;
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor mT() const { return transpose(-2, -1); }
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor repeat(IntArrayRef repeats) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  TensorList chunk(int64_t chunks, int64_t dim = 0) const;
  TensorList split(int64_t split_size, int64_t dim = 0) const;
  TensorList split(IntArrayRef split_sizes, int64_t dim = 0) const;
  TensorList split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  TensorList unbind(int64_t dim = 0) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor& tril_(int64_t diagonal = 0);
  Tensor& triu_(int64_t diagonal = 0);
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor contiguous() const;
  Tensor as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor unfold(int64_t dimension, int64_t size, int64_t step) const;

  // ---- indexing -----------------------------------------------------------------------
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& v);
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& v);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& v);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& v);
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value);
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;

  // ---- linear algebra -----------------------------------------------------------------
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;
  Tensor mv(const Tensor& v) const;
  Tensor dot(const Tensor& o) const;
  Tensor outer(const Tensor& o) const;
  Tensor addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1) const;

  // ---- operators ----------------------------------------------------------------------
  Tensor operator-() const { return neg(); }
  Tensor operator~() const { return logical_not(); }
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }
  Tensor operator[](int64_t i) const { return select(0, i); }

 private:
  intrusive_ptr<TensorImpl> impl_;
};

/// Autograd state of one tensor.
struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;                                      // .grad() of a leaf
  std::shared_ptr<autograd::Node> grad_fn;          // set on outputs of recorded ops
  std::weak_ptr<autograd::Node> grad_accumulator;   // a leaf's AccumulateGrad, made lazily
  uint32_t output_nr = 0;
  // A non-leaf's retained gradient (retain_grad()); its grad_fn holds it weakly.
  std::shared_ptr<Tensor> retained_grad;
  // Hooks on a leaf: run on the incoming gradient before accumulation.
  std::vector<std::pair<unsigned, std::function<Tensor(const Tensor&)>>> leaf_hooks;
  std::vector<std::function<void(Tensor&)>> post_accumulate_hooks;
  // The tensor whose storage this view shares (Note [View history] in autograd/view_history.h).
  Tensor view_base;
  // The version counter's value when this view's grad_fn was last set; a differing value
  // means the base changed in place and the grad_fn must be regenerated.
  uint32_t attr_version = 0;
  std::string name;  // optional, for graph export
};

template <class T>
T* Tensor::data_ptr() const {
  EMBER_CHECK(defined(), "data_ptr() called on an undefined tensor");
  EMBER_CHECK(dtype() == dtype_of<std::remove_const_t<T>>, "expected scalar type ",
              scalar_type_name(dtype_of<std::remove_const_t<T>>), " but found ", scalar_type_name(dtype()));
  return static_cast<T*>(impl_->data());
}

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);

/// Prints in PyTorch's format: tensor([[0., 1.], [2., 3.]], requires_grad=True).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace ember
