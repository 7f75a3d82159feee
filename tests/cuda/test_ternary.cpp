// CUDA parity of the ops of three operands (core/ops/ternary.cpp): where, lerp (scalar and
// tensor weight), addcmul, addcdiv, masked_fill (scalar and 0-dim tensor value), their
// in-place forms and gradients, over every dtype and operand layout.
#include <cmath>
#include <cstring>

#include "cuda/elementwise_layouts.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Input 0 a bool condition or mask, the others of dtype t.
MakeInput mask_first(ScalarType t) {
  return [=](IntArrayRef s, int k) { return k == 0 ? make_input(s, kBool) : make_input(s, t); };
}

MakeInput inputs(ScalarType t, double lo = -3, double hi = 3) {
  return [=](IntArrayRef s, int) { return make_input(s, t, lo, hi); };
}

}  // namespace

TEST_CASE("cuda where: every dtype and layout, scalar operands") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    check_layouts([](const TensorList& x) { return where(x[0], x[1], x[2]); }, mask_first(t), 3,
                  /*big=*/t == kHalf || t == kInt64);
    check_parity([](const TensorList& x) { return where(x[0], x[1], 2); },
                 {make_input({4, 5}, kBool), make_input({5}, t)});
    check_parity([](const TensorList& x) { return where(x[0], 1.5, x[1]); },
                 {make_input({4, 5}, kBool), make_input({4, 5}, t)});
  }
  check_parity([](const TensorList& x) { return where(x[0], 1, 2.5); }, {make_input({4, 5}, kBool)});
  check_parity([](const TensorList& x) { return where(x[0], x[1], x[2]); },
               {make_input({4, 5}, kBool), make_input({4, 5}, kInt16), make_input({5}, kBFloat16)});
  check_error_parity([](const TensorList& x) { return where(x[0], x[1], x[1]); },
                     {make_input({3}, kInt32), make_input({3}, kFloat)});
}

TEST_CASE("cuda where keeps every bit of the chosen element (NaN payloads, -0)") {
  uint32_t payload = 0x7fa00001u;  // a signalling-style NaN with a payload
  float nan_bits;
  std::memcpy(&nan_bits, &payload, sizeof nan_bits);
  Tensor a = tensor({nan_bits, -0.0f}), b = tensor({1.0f, 2.0f});
  Tensor got = where(tensor({true, true}).to(cuda_device()), a.to(cuda_device()), b.to(cuda_device()))
                   .to(Device(kCPU));
  CHECK(std::memcmp(got.data_ptr(), a.data_ptr(), 2 * sizeof(float)) == 0);
}

TEST_CASE("cuda lerp with a scalar and a tensor weight") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    for (double w : {0.0, 0.25, 0.5, 1.0, -1.5})
      check_layouts([w](const TensorList& x) { return lerp(x[0], x[1], w); }, inputs(t), 2,
                    /*big=*/w == 0.25);
    check_layouts([](const TensorList& x) { return lerp(x[0], x[1], x[2]); }, inputs(t, -1, 2), 3,
                  /*big=*/t == kFloat);
  }
  for (ScalarType t : {kInt32, kInt64}) {
    Tensor x = make_input({3}, t);
    std::string msg = std::string("\"lerp_cuda\" not implemented for '") + scalar_type_name(t) + "'";
    check_cuda_error([](const TensorList& v) { return lerp(v[0], v[1], 0.5); }, {x, x}, msg);
    check_cuda_error([](const TensorList& v) { return lerp(v[0], v[1], v[2]); }, {x, x, x}, msg);
  }
  check_error_parity([](const TensorList& x) { return lerp(x[0], x[1], 0.5); },
                     {make_input({3}, kFloat), make_input({3}, kDouble)});
}

TEST_CASE("cuda addcmul and addcdiv") {
  for (ScalarType t : kNumericTypes) {
    INFO("dtype " << t);
    for (double v : {1.0, 0.5, -2.0}) {
      if (!is_floating_point(t) && v != std::floor(v)) continue;
      Scalar value = is_floating_point(t) ? Scalar(v) : Scalar(static_cast<int64_t>(v));
      check_layouts([value](const TensorList& x) { return addcmul(x[0], x[1], x[2], value); },
                    inputs(t, -9, 9), 3,
                    /*big=*/v == 1.0 && (t == kFloat || t == kInt8));
      if (!is_floating_point(t)) continue;
      check_layouts(
          [value](const TensorList& x) { return addcdiv(x[0], x[1], x[2], value); },
          [t](IntArrayRef s, int k) { return k == 2 ? make_input(s, t, 0.5, 4) : make_input(s, t); }, 3,
          /*big=*/v == 1.0 && t == kBFloat16);
    }
  }
  check_parity([](const TensorList& x) { return addcdiv(x[0], x[1], x[2], 2); },
               {make_input({4, 5}, kInt32), make_input({4, 5}, kFloat), make_input({5}, kInt32, 1, 5)});
  check_error_parity([](const TensorList& x) { return addcdiv(x[0], x[1], x[2]); },
                     {make_input({3}, kInt32), make_input({3}, kInt32), make_input({3}, kInt32, 1, 5)});
  check_cuda_error([](const TensorList& x) { return addcmul(x[0], x[1], x[2]); },
                   {make_input({3}, kBool), make_input({3}, kBool), make_input({3}, kBool)},
                   "\"addcmul_cuda\" not implemented for 'Bool'");
}

TEST_CASE("cuda masked_fill with a scalar and with a 0-dim tensor value") {
  for (ScalarType t : kAllTypes) {
    INFO("dtype " << t);
    Scalar v = t == kBool ? Scalar(true) : Scalar(2);
    // Inputs: self, mask (the layouts helper makes input 0 the bool one, so swap them here).
    check_layouts([v](const TensorList& x) { return x[1].masked_fill(x[0], v); }, mask_first(t), 2,
                  /*big=*/t == kFloat || t == kUInt8);
    check_parity([](const TensorList& x) { return x[0].masked_fill(x[1], x[2]); },
                 {make_input({4, 5}, t), make_input({5}, kBool), make_input({}, kDouble)});
  }
  check_parity([](const TensorList& x) { return x[0].masked_fill(x[1], NAN); },
               {make_input({4, 5}, kHalf), make_input({4, 5}, kBool)});
  // A CPU 0-dim value may fill a CUDA tensor, as in PyTorch.
  Tensor self = make_input({4, 5}, kFloat), mask = make_input({4, 5}, kBool);
  check_same(self.to(cuda_device()).masked_fill(mask.to(cuda_device()), tensor(3.5)),
             self.masked_fill(mask, tensor(3.5)));
  check_error_parity([](const TensorList& x) { return x[0].masked_fill(x[1], 1); },
                     {make_input({3}, kFloat), make_input({3}, kInt32)});
  check_error_parity([](const TensorList& x) { return x[0].masked_fill(x[1], x[0]); },
                     {make_input({3}, kFloat), make_input({3}, kBool)});
}

TEST_CASE("cuda in-place lerp_, addcmul_, addcdiv_, masked_fill_ through strided views") {
  for (ScalarType t : {kHalf, kFloat, kDouble}) {
    INFO("dtype " << t);
    auto inplace = [t](std::function<void(Tensor&, const TensorList&)> f, TensorList extra) {
      TensorList in{make_input({6, 5}, t)};
      for (const Tensor& e : extra) in.push_back(e);
      check_parity(
          [&](const TensorList& x) {
            Tensor view = x[0].t();  // (5, 6)
            f(view, x);
            return view;
          },
          in);
    };
    inplace([](Tensor& s, const TensorList& x) { s.lerp_(x[1], 0.3); }, {make_input({6}, t)});
    inplace([](Tensor& s, const TensorList& x) { s.lerp_(x[1], x[2]); },
            {make_input({6}, t), make_input({5, 1}, t)});
    inplace([](Tensor& s, const TensorList& x) { s.addcmul_(x[1], x[2], 0.5); },
            {make_input({6}, t), make_input({5, 6}, t)});
    inplace([](Tensor& s, const TensorList& x) { s.addcdiv_(x[1], x[2], 2); },
            {make_input({6}, t), make_input({5, 6}, t, 1, 3)});
    inplace([](Tensor& s, const TensorList& x) { s.masked_fill_(x[1], -1); }, {make_input({5, 6}, kBool)});
    inplace([](Tensor& s, const TensorList& x) { s.masked_fill_(x[1], x[2]); },
            {make_input({6}, kBool), make_input({}, t)});
  }
  check_parity(
      [](const TensorList& x) {
        Tensor s = x[0];
        s.addcmul_(x[1], x[2], 3);
        return s;
      },
      {make_input({3, 4}, kInt64), make_input({4}, kInt64), make_input({3, 1}, kInt64)});
}

TEST_CASE("cuda gradients of where, lerp, addcmul, addcdiv, masked_fill") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    Tensor cond = make_input({3, 4}, kBool), a = make_input({3, 4}, t), b = make_input({4}, t);
    Tensor w = make_input({3, 1}, t, 0, 1), d = make_input({4}, t, 0.5, 2), v = make_input({}, t);
    check_grad_parity([](const TensorList& x) { return where(x[0], x[1], x[2]); }, {cond, a, b});
    check_grad_parity([](const TensorList& x) { return lerp(x[0], x[1], 0.75); }, {a, b});
    check_grad_parity([](const TensorList& x) { return lerp(x[0], x[1], x[2]); }, {a, b, w});
    check_grad_parity([](const TensorList& x) { return addcmul(x[0], x[1], x[2], 0.5); }, {a, b, w});
    check_grad_parity([](const TensorList& x) { return addcdiv(x[0], x[1], x[2], -2); }, {a, w, d});
    check_grad_parity([](const TensorList& x) { return x[0].masked_fill(x[1], 0.5); }, {a, cond});
    check_grad_parity([](const TensorList& x) { return x[0].masked_fill(x[1], x[2]); }, {a, cond, v});
  }
}
