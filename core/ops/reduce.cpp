// Reductions. Each op: shape rules (dims, keepdim, dtype), CPU kernel via cpu_reduce
// (core/cpu/reduce.h), and backward, in one struct.
#include "ember/core/ops/reduce.h"

#include <cmath>
#include <limits>

#include "ember/core/cpu/reduce.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"

namespace ember {
namespace {

/// Output shape of a reduction over `mask`, with or without the reduced dims.
DimVector reduced_shape(IntArrayRef sizes, uint64_t mask, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (mask & (uint64_t{1} << d)) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(sizes[d]);
    }
  }
  return out;
}

/// Broadcasts a reduced gradient back over the reduced dims (undoing keepdim=false).
Tensor expand_reduced(const Tensor& grad, IntArrayRef in_sizes, uint64_t mask, bool keepdim) {
  Tensor g = grad;
  if (!keepdim)
    for (size_t d = 0; d < in_sizes.size(); ++d)
      if (mask & (uint64_t{1} << d)) g = g.unsqueeze(static_cast<int64_t>(d));
  return g.expand(in_sizes);
}

/// The dtype sum/prod produce: integers (and bool) accumulate to int64, as PyTorch does.
ScalarType sum_dtype(ScalarType in, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(in, true) ? kLong : in;
}

// sum: d/dx_i sum(x) = 1: the gradient is broadcast back over the reduced dims.
struct Sum final : UnaryOp {
  uint64_t mask;
  bool keepdim;
  Sum(uint64_t m, bool k) : mask(m), keepdim(k) {}
  const char* name() const override { return "sum"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& x, Tensor& out) const override {
    visit_dtype(x.dtype(), [&]<typename T>() {
      using A = acc_t<T>;
      T* o = static_cast<T*>(out.data_ptr());
      cpu::cpu_reduce<T, A>(
          x, mask, A(0), [](A acc, T v, int64_t) { return acc + static_cast<A>(static_cast<opmath_t<T>>(v)); },
          [](A a, A b) { return a + b; },
          [o](int64_t i, A acc) {
            if constexpr (std::is_same_v<T, bool>) o[i] = acc != 0;
            else o[i] = static_cast<T>(static_cast<opmath_t<T>>(acc));
          });
    });
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return expand_reduced(grad, s.input_sizes(0), mask, keepdim);
  }
};

/// all/any: logical reductions producing bool (uint8 for uint8 input, as PyTorch); no gradient.
Tensor logical_reduce(const Tensor& x, uint64_t mask, bool keepdim, bool is_all) {
  ScalarType out_t = x.dtype() == kByte ? kByte : kBool;
  Tensor out = empty(reduced_shape(x.sizes(), mask, keepdim), TensorOptions().dtype(out_t).device(x.device()));
  visit_dtype(x.dtype(), [&]<typename T>() {
    char* o = static_cast<char*>(out.data_ptr());
    cpu::cpu_reduce<T, bool>(
        x, mask, is_all,
        [is_all](bool acc, T v, int64_t) {
          bool nz = static_cast<opmath_t<T>>(v) != 0;
          return is_all ? (acc && nz) : (acc || nz);
        },
        [is_all](bool a, bool b) { return is_all ? (a && b) : (a || b); },
        [o](int64_t i, bool acc) { o[i] = acc; });
  });
  return out;
}

}  // namespace

Tensor all(const Tensor& x) { return logical_reduce(x, dim_mask({}, x.dim()), false, true); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  return logical_reduce(x, dim_mask(IntArrayRef(dim), x.dim()), keepdim, true);
}
Tensor any(const Tensor& x) { return logical_reduce(x, dim_mask({}, x.dim()), false, false); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return logical_reduce(x, dim_mask(IntArrayRef(dim), x.dim()), keepdim, false);
}
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return ember::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return ember::any(*this, dim, keepdim); }

Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  uint64_t mask = dim_mask(dim, x.dim());
  ScalarType out_t = sum_dtype(x.dtype(), dtype);
  return run_op(Sum{mask, keepdim}, {x.to(out_t)}, OutSpec{reduced_shape(x.sizes(), mask, keepdim), out_t});
}

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) { return sum(x, {}, false, dtype); }

Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType t = dtype.value_or(x.dtype());
  EMBER_CHECK(is_floating_point(t),
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
              "dtype. Got: ", scalar_type_name(x.dtype()));
  uint64_t mask = dim_mask(dim, x.dim());
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask & (uint64_t{1} << d)) n *= x.size(d);
  Tensor s = sum(x.to(t), dim, keepdim);
  return n == 0 ? s / 0.0 : s / static_cast<double>(n);
}

Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) { return mean(x, {}, false, dtype); }

Tensor sum_to_size(const Tensor& x, IntArrayRef size) {
  if (x.sizes().equals(size)) return x;
  int64_t lead = x.dim() - static_cast<int64_t>(size.size());
  EMBER_CHECK(lead >= 0, "size {", size, "} is not expandable to size {", x.sizes(), "}.");
  DimVector dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < lead) { dims.push_back(d); continue; }
    int64_t target = size[d - lead];
    EMBER_CHECK(target == x.size(d) || target == 1, "size {", size, "} is not expandable to size {", x.sizes(), "}.");
    if (target == 1 && x.size(d) != 1) dims.push_back(d);
  }
  Tensor r = dims.empty() ? x : sum(x, dims, true);
  return lead > 0 || !r.sizes().equals(size) ? r.view(size) : r;
}

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return ember::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return ember::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::mean(*this, dim, keepdim, dtype);
}

}  // namespace ember
