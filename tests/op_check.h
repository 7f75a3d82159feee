// Test helpers shared by the suite: tensors from/to std::vector, closeness checks with
// useful failure messages, gradcheck wrappers, and error-text checks.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/core/shape.h"
#include "ember/ember.h"

namespace ember::test {

/// Values of any tensor as doubles, row-major.
inline std::vector<double> values(const Tensor& t) {
  NoGradGuard g;
  Tensor c = t.detach().to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

/// A float64 tensor of the given shape from row-major values.
inline Tensor from_values(const std::vector<double>& v, IntArrayRef shape, ScalarType dtype = kDouble) {
  Tensor t = empty(shape, kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.to(dtype);
}

/// CHECKs that t has `shape` and values close to `expected` (|a-b| <= atol + rtol |b|).
inline void check_close(const Tensor& t, const std::vector<double>& expected, double atol = 1e-6,
                        double rtol = 1e-5) {
  std::vector<double> got = values(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    bool both_nan = std::isnan(got[i]) && std::isnan(expected[i]);
    bool same_inf = std::isinf(got[i]) && got[i] == expected[i];
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    CHECK((both_nan || same_inf || std::fabs(got[i] - expected[i]) <= atol + rtol * std::fabs(expected[i])));
  }
}

inline void check_close(const Tensor& a, const Tensor& b, double atol = 1e-6, double rtol = 1e-5) {
  REQUIRE(a.sizes().vec() == b.sizes().vec());
  check_close(a, values(b), atol, rtol);
}

inline std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

/// 0, 1, 2, ... in the given shape (row-major), for hand-computed indexing results.
inline Tensor seq(IntArrayRef s, ScalarType dt = kDouble) { return arange(prod_of(s), dt).view(s); }

/// An int64 tensor of the given values.
inline Tensor longs(std::vector<int64_t> v) { return tensor(v); }

/// A float64 leaf with seeded random values that requires grad, for gradcheck.
inline Tensor rand_leaf(IntArrayRef shape, double lo = -1.0, double hi = 1.0) {
  Tensor t = rand(shape, kDouble) * (hi - lo) + lo;
  return t.detach().requires_grad_(true);
}

/// Runs gradcheck and CHECKs it passes, reporting the mismatch text when it does not.
inline void check_grad(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                       double atol = 1e-5, double rtol = 1e-3) {
  autograd::GradcheckOptions opt;
  opt.atol = atol;
  opt.rtol = rtol;
  try {
    CHECK(autograd::gradcheck(fn, inputs, opt));
  } catch (const Error& e) {
    FAIL_CHECK(e.what());
  }
}

inline void check_gradgrad(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs) {
  try {
    CHECK(autograd::gradgradcheck(fn, inputs));
  } catch (const Error& e) {
    FAIL_CHECK(e.what());
  }
}

/// CHECKs that fn throws ember::Error whose text contains `text`.
template <class F>
void check_error(F&& fn, const std::string& text) {
  bool threw = false;
  try {
    fn();
  } catch (const Error& e) {
    threw = true;
    std::string what = e.what();
    INFO("error text: " << what);
    CHECK(what.find(text) != std::string::npos);
  }
  INFO("expected an ember::Error containing: " << text);
  CHECK(threw);
}

}  // namespace ember::test
