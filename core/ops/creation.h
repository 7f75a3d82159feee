// Creation ops: empty/zeros/ones/full/arange/linspace/eye, tensor(...) from C++ data,
// from_blob and the *_like forms (random tensors: random.h; clone: copy.h).
#pragma once

#include <functional>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {});
Tensor scalar_tensor(const Scalar& s, TensorOptions options = {});
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});

// The *_like forms take dtype and device from `t` unless options say otherwise.
Tensor empty_like(const Tensor& t, TensorOptions options = {});
Tensor zeros_like(const Tensor& t, TensorOptions options = {});
Tensor ones_like(const Tensor& t, TensorOptions options = {});
Tensor full_like(const Tensor& t, const Scalar& fill_value, TensorOptions options = {});

/// Wraps existing memory without copying; the caller keeps it alive (or passes a deleter).
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 TensorOptions options = {});

/// Nested braced lists of numbers for tensor({{1, 2}, {3, 4}}), as libtorch's TensorDataContainer.
class TensorDataContainer {
 public:
  TensorDataContainer(bool v) : scalar_(v), dtype_(kBool) {}                 // NOLINT
  TensorDataContainer(int v) : scalar_(v), dtype_(kInt) {}                   // NOLINT
  TensorDataContainer(int64_t v) : scalar_(v), dtype_(kLong) {}              // NOLINT
  TensorDataContainer(long long v) : scalar_(static_cast<int64_t>(v)), dtype_(kLong) {}  // NOLINT
  TensorDataContainer(float v) : scalar_(v), dtype_(kFloat) {}               // NOLINT
  TensorDataContainer(double v) : scalar_(v), dtype_(kDouble) {}             // NOLINT
  TensorDataContainer(std::initializer_list<TensorDataContainer> list);     // NOLINT
  template <class T>
  TensorDataContainer(const std::vector<T>& v)  // NOLINT
      : TensorDataContainer(from_vector(v)) {}

  bool is_scalar() const { return !is_list_; }
  ScalarType dtype() const { return dtype_; }
  DimVector sizes() const;
  /// Writes the values in row-major order into `out` (already of the right shape/dtype).
  void fill(Tensor& out) const;
  /// Prints as libtorch does in its errors: {{1, 2}, {3, 4}}.
  friend std::ostream& operator<<(std::ostream& os, const TensorDataContainer& c);

 private:
  TensorDataContainer() = default;
  template <class T>
  static TensorDataContainer from_vector(const std::vector<T>& v) {
    TensorDataContainer c;
    c.is_list_ = true;
    c.dtype_ = dtype_of<T>;
    for (auto&& x : v) {
      TensorDataContainer e;
      e.scalar_ = Scalar(static_cast<T>(x));
      e.dtype_ = dtype_of<T>;
      c.elements_.push_back(e);
    }
    return c;
  }
  void collect(std::vector<Scalar>& out) const;

  Scalar scalar_;
  ScalarType dtype_ = kFloat;
  bool is_list_ = false;
  std::vector<TensorDataContainer> elements_;
};

/// tensor({1., 2.}), tensor({{1, 2}, {3, 4}}, kFloat64), tensor(std::vector<float>{...}).
/// Integers give int64 and floating values the default dtype unless options say otherwise.
Tensor tensor(const TensorDataContainer& data, TensorOptions options = {});

}  // namespace ember
