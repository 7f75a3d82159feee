// copy_, to, clone, contiguous, fill_/zero_, item and data_ptr: every dtype conversion,
// broadcasting and overlapping copies, autograd through copies, and the version counter.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::from_values;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {

constexpr ScalarType kAll[] = {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble};

/// Elements of a CPU tensor read straight from memory (not through to()), as doubles.
std::vector<double> raw(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<double> out;
  visit_dtype(c.dtype(), [&]<typename T>() {
    const T* p = static_cast<const T*>(c.data_ptr());
    for (int64_t i = 0; i < c.numel(); ++i) out.push_back(static_cast<double>(static_cast<opmath_t<T>>(p[i])));
  });
  return out;
}

/// A 1-d tensor of dtype dt holding `v` (each exactly representable in dt), built in memory.
Tensor make(ScalarType dt, const std::vector<double>& v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, dt);
  visit_dtype(dt, [&]<typename T>() {
    T* p = static_cast<T*>(t.data_ptr());
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
  });
  return t;
}

/// Source values per dtype, exactly representable in every dtype they are converted to
/// (except the integer -> uint8 wrap, which is exercised separately).
std::vector<double> sources(ScalarType dt) {
  if (dt == kBool) return {0, 1};
  if (dt == kByte) return {0, 1, 5, 100};
  if (is_integral(dt, false)) return {0, 1, -3, 100};
  return {0, 0.5, 1.5, -2.75, 96, 0.375, -0.0};
}

/// The PyTorch result of converting value v to dt: nonzero for bool, truncation toward
/// zero for integers, and the value itself for the floating types.
double converted(double v, ScalarType dt) {
  if (dt == kBool) return v != 0 ? 1 : 0;
  if (is_integral(dt, false)) return std::trunc(v);
  return v;
}

}  // namespace

TEST_CASE("test_copy: all 10x10 dtype conversions") {
  for (ScalarType from : kAll) {
    for (ScalarType to : kAll) {
      std::vector<double> src = sources(from);
      if (to == kByte && from != kBool && from != kByte) src = {0, 1, 2.5, 100};  // no negatives -> uint8 here
      if (to == kByte && from != kBool && is_integral(from, false)) src = {0, 1, 100};
      Tensor s = make(from, src);
      INFO("from " << from << " to " << to);
      Tensor d = s.to(to);
      CHECK(d.dtype() == to);
      std::vector<double> got = raw(d);
      REQUIRE(got.size() == src.size());
      for (size_t i = 0; i < src.size(); ++i) {
        INFO("value " << src[i]);
        CHECK(got[i] == converted(src[i], to));
      }
      // copy_ into an existing tensor converts the same way.
      Tensor dst = empty({static_cast<int64_t>(src.size())}, to);
      dst.copy_(s);
      CHECK(raw(dst) == got);
    }
  }
}

TEST_CASE("test_copy: integer wrap-around and float edge cases") {
  // torch.tensor([300], dtype=torch.int16).to(torch.int8) -> 44 (300 mod 256);
  // int32 70000 -> int16 4464; int64 -3 -> uint8 253; uint8 200 -> int8 -56.
  CHECK(raw(make(kShort, {300}).to(kChar)) == std::vector<double>{44});
  CHECK(raw(make(kInt, {70000}).to(kShort)) == std::vector<double>{4464});
  CHECK(raw(make(kLong, {-3}).to(kByte)) == std::vector<double>{253});
  CHECK(raw(make(kByte, {200}).to(kChar)) == std::vector<double>{-56});
  // Float -> int truncates toward zero: torch.tensor([-2.75, 3.99, -0.5]).to(torch.int32)
  CHECK(raw(make(kFloat, {-2.75, 3.99, -0.5}).to(kInt)) == std::vector<double>{-2, 3, 0});
  CHECK(raw(make(kDouble, {-1e10, 1e10}).to(kLong)) == std::vector<double>{-1e10, 1e10});
  // -> bool is "nonzero": NaN is true, -0.0 false, int16 256 true (no truncation to 8 bits).
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(raw(make(kFloat, {nan, -0.0, 256}).to(kBool)) == std::vector<double>{1, 0, 1});
  CHECK(raw(make(kShort, {256}).to(kBool)) == std::vector<double>{1});
  // Overflow to inf: torch.tensor([70000]).to(torch.float16) -> inf; bfloat16 rounds to 70144;
  // float64 1e39 -> float32 inf and 1e-46 -> 0; int64 2^24 + 1 -> float32 2^24.
  CHECK(std::isinf(raw(make(kLong, {70000}).to(kHalf))[0]));
  CHECK(raw(make(kLong, {70000}).to(kBFloat16)) == std::vector<double>{70144});
  std::vector<double> f = raw(make(kDouble, {1e39, -1e39, 1e-46}).to(kFloat));
  CHECK(f[0] == INFINITY);
  CHECK(f[1] == -INFINITY);
  CHECK(f[2] == 0);
  CHECK(raw(make(kLong, {16777217}).to(kFloat)) == std::vector<double>{16777216});
  // NaN survives every floating conversion.
  for (ScalarType a : {kHalf, kBFloat16, kFloat, kDouble})
    for (ScalarType b : {kHalf, kBFloat16, kFloat, kDouble}) CHECK(std::isnan(raw(make(a, {nan}).to(b))[0]));
  // double -> half goes through float, as PyTorch does: 1 + 2^-11 + 2^-40 rounds to 1 + 2^-11
  // in float, a tie that rounds to even in half -> 1.0 (torch gives 0x3c00 too).
  CHECK(raw(make(kDouble, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}).to(kHalf)) == std::vector<double>{1.0});
}

TEST_CASE("test_copy: float32 -> float16 / bfloat16 rounding matches PyTorch") {
  // Bits from PyTorch: torch.tensor(vals).to(torch.float16).view(torch.int16) and the same
  // with torch.bfloat16 (NaN is left out: PyTorch's vectorized path gives 0xffff for bfloat16).
  struct Case { float x; uint16_t half_bits, bf16_bits; };
  const Case cases[] = {
      {65504.0f, 0x7bff, 0x4780},                     // half max
      {65519.0f, 0x7bff, 0x4780},                     // below the overflow midpoint
      {65520.0f, 0x7c00, 0x4780},                     // the midpoint rounds to inf
      {100000.0f, 0x7c00, 0x47c3},
      {-1000000.0f, 0xfc00, 0xc974},
      {5.960464477539063e-08f, 0x0001, 0x3380},       // smallest half subnormal
      {2.9802322387695312e-08f, 0x0000, 0x3300},      // half of it: tie to even (0)
      {2.9900000697580253e-08f, 0x0001, 0x3300},      // just above the tie
      {8.940696716308594e-08f, 0x0002, 0x33c0},       // 1.5 ulp: tie to even (2)
      {2.9999999242136255e-05f, 0x01f7, 0x37fc},      // subnormal
      {6.097555160522461e-05f, 0x03ff, 0x3880},       // largest subnormal
      {6.103515625e-05f, 0x0400, 0x3880},             // smallest normal
      {0.10000000149011612f, 0x2e66, 0x3dcd},
      {-0.3333333134651184f, 0xb555, 0xbeab},
      {1.0009765625f, 0x3c01, 0x3f80},
      {1.00048828125f, 0x3c00, 0x3f80},               // half tie -> even
      {1.00146484375f, 0x3c02, 0x3f80},               // half tie -> even (up)
      {3.3999999521443642e+38f, 0x7c00, 0x7f80},      // bfloat16 overflow to inf
      {9.99994610111476e-41f, 0x0000, 0x0001},        // float subnormal
      {1.00390625f, 0x3c04, 0x3f80},                  // bfloat16 tie -> even (down)
      {1.01171875f, 0x3c0c, 0x3f82},                  // bfloat16 tie -> even (up)
      {-2.5f, 0xc100, 0xc020},
      {INFINITY, 0x7c00, 0x7f80},
  };
  std::vector<double> xs;
  for (const Case& c : cases) xs.push_back(c.x);
  Tensor src = make(kFloat, xs);
  Tensor h = src.to(kHalf), b = src.to(kBFloat16);
  const Half* hp = h.data_ptr<Half>();
  const BFloat16* bp = b.data_ptr<BFloat16>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("x = " << xs[i]);
    CHECK(hp[i].x == cases[i].half_bits);
    CHECK(bp[i].x == cases[i].bf16_bits);
  }
  // And back: the values of those bit patterns widen exactly.
  std::vector<double> back = raw(h.to(kFloat));
  CHECK(back[0] == 65504.0);
  CHECK(back[5] == std::ldexp(1.0, -24));
  CHECK(back[11] == std::ldexp(1.0, -14));
  CHECK(raw(b.to(kDouble))[20] == 1.015625);
}

TEST_CASE("test_copy: broadcasting copy_") {
  Tensor dst = zeros({2, 3});
  dst.copy_(tensor({1.0, 2.0, 3.0}));
  check_close(dst, {1, 2, 3, 1, 2, 3});
  dst.copy_(tensor({{10.0}, {20.0}}));
  check_close(dst, {10, 10, 10, 20, 20, 20});
  dst.copy_(tensor(5));  // 0-dim int source, cast to float
  check_close(dst, {5, 5, 5, 5, 5, 5});
  Tensor d3 = zeros({2, 1, 3}, kInt32);
  d3.copy_(tensor({1.9, -2.9, 3.1}));
  check_close(d3, {1, -2, 3, 1, -2, 3});
  // Size mismatches: torch.zeros(2,3).copy_(torch.zeros(4)), torch.zeros(3).copy_(torch.zeros(2,3))
  check_error([] { zeros({2, 3}).copy_(zeros({4})); },
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  check_error([] { zeros({3}).copy_(zeros({2, 3})); }, "output with shape [3] doesn't match the broadcast shape [2, 3]");
  // Writing through an expanded (stride 0) destination is refused, as in PyTorch;
  // fill_ is allowed (every element gets the same value).
  check_error([] { zeros({1}).expand({3}).copy_(ones({3})); },
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
  Tensor one = zeros({1});
  one.expand({3}).fill_(4.0);
  check_close(one, {4});
  // Zero-size copies are no-ops.
  Tensor e = zeros({0, 3});
  e.copy_(ones({3}));
  CHECK(e.numel() == 0);
}

TEST_CASE("test_copy: copy_ into non-contiguous views") {
  Tensor base = zeros({3, 4});
  base.t().copy_(arange(12.).view({4, 3}));  // base[i][j] = 3 j + i
  check_close(base, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  Tensor b2 = zeros({3, 4}, kDouble);
  b2.select(1, 1).copy_(tensor({1, 2, 3}));  // column 1, from int64
  check_close(b2, {0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0});
  b2.narrow(0, 1, 2).narrow(1, 2, 2).copy_(full({2, 2}, 7.0));
  check_close(b2, {0, 1, 0, 0, 0, 2, 7, 7, 0, 3, 7, 7});
  // Non-contiguous source and destination with a dtype change.
  Tensor src = arange(6, kInt32).view({2, 3}).t();  // [[0,3],[1,4],[2,5]]
  Tensor dst = zeros({2, 3}, kHalf).t();
  dst.copy_(src);
  check_close(dst, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("test_copy: overlapping self-copy") {
  // x.copy_(x.t()) must behave as if the source were read before any write:
  // x = [[0,1,2],[3,4,5],[6,7,8]] -> its transpose.
  Tensor x = arange(9.).view({3, 3});
  x.copy_(x.t());
  check_close(x, {0, 3, 6, 1, 4, 7, 2, 5, 8});
  // Shifted overlap within one row: y[1:] = y[:-1] -> [0, 0, 1, 2, 3]
  Tensor y = arange(5.);
  y.narrow(0, 1, 4).copy_(y.narrow(0, 0, 4));
  check_close(y, {0, 0, 1, 2, 3});
  Tensor z = arange(5.);
  z.narrow(0, 0, 4).copy_(z.narrow(0, 1, 4));
  check_close(z, {1, 2, 3, 4, 4});
  // Copying a tensor onto itself is a no-op (and still bumps the version).
  Tensor w = arange(4.);
  uint32_t v = w._version();
  w.copy_(w);
  check_close(w, {0, 1, 2, 3});
  CHECK(w._version() > v);
}

TEST_CASE("test_copy: to() and clone()") {
  Tensor x = arange(4.);
  Tensor same = x.to(kFloat);
  CHECK(same.is_same(x));            // same dtype: the very same tensor
  CHECK(x.to(x).is_same(x));
  CHECK(x.to(Device(kCPU)).is_same(x));
  CHECK(x.to(TensorOptions()).is_same(x));
  Tensor copied = x.to(kFloat, false, /*copy=*/true);
  CHECK(!copied.is_same(x));
  CHECK(!copied.is_alias_of(x));
  check_close(copied, {0, 1, 2, 3});
  Tensor d = x.to(kDouble);
  CHECK(d.dtype() == kDouble);
  CHECK(x.type_as(ones({1}, kInt32)).dtype() == kInt);

  Tensor c = x.clone();
  CHECK(!c.is_alias_of(x));
  c.fill_(1.0);
  check_close(x, {0, 1, 2, 3});  // the original is untouched
  Tensor t = arange(6.).view({2, 3}).t();
  Tensor tc = t.clone();
  check_close(tc, {0, 3, 1, 4, 2, 5});
  CHECK(shape(tc) == std::vector<int64_t>{3, 2});
  Tensor ct = t.contiguous();
  CHECK(ct.is_contiguous());
  check_close(ct, {0, 3, 1, 4, 2, 5});
  CHECK(x.contiguous().is_same(x));
  // Cross-device copies need CUDA.
  if (!cuda::is_available()) check_error([&] { x.to(Device("cuda")); }, "CUDA");  // "built without CUDA", or no CUDA backend yet
}

TEST_CASE("test_copy: clone, to and copy_ are differentiable") {
  Tensor a = rand_leaf({3, 4});
  check_grad([](const TensorList& in) { return in[0].clone(); }, {a});
  check_grad([](const TensorList& in) { return in[0].t().clone(); }, {a});  // non-contiguous
  check_grad([](const TensorList& in) { return in[0].t().contiguous() * 2.0; }, {a});
  check_gradgrad([](const TensorList& in) { return in[0].clone() * in[0]; }, {a});
  // Names of the nodes, as PyTorch's.
  Tensor y = a.clone();
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "CloneBackward0");

  // to(float32) and back: the gradient is cast back to the input's dtype.
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor f = x.to(kFloat);
  CHECK(f.requires_grad());
  CHECK(f.grad_fn()->name() == "ToCopyBackward0");
  (f * 2.0).sum().backward();
  CHECK(x.grad().dtype() == kDouble);
  check_close(x.grad(), {2, 2, 2});
  // Converting to an integer type ends the graph.
  CHECK(!x.to(kLong).requires_grad());

  // copy_ from a broadcast source: the gradient is summed over the broadcast dims.
  Tensor src = tensor({1.0, 2.0, 3.0}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor dst = zeros({2, 3}, kDouble);
  dst.copy_(src);
  CHECK(dst.requires_grad());
  (dst * tensor({{1.0}, {10.0}}, kDouble)).sum().backward();
  check_close(src.grad(), {11, 11, 11});
  check_grad(
      [](const TensorList& in) {
        Tensor out = zeros({2, 3}, kDouble);
        out.copy_(in[0]);
        return out * in[1];
      },
      {rand_leaf({3}), rand_leaf({2, 3})});
  // copy_ overwrites: the old value of dst gets no gradient.
  Tensor old = rand_leaf({3});
  check_grad(
      [](const TensorList& in) {
        Tensor out = in[0] * 3.0;
        out.copy_(in[1]);
        return out;
      },
      {old, rand_leaf({3})});
  check_error([] { ones({2}, requires_grad()).copy_(zeros({2})); },
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST_CASE("test_copy: fill_ and zero_") {
  Tensor t = empty({2, 3}, kInt32);
  t.fill_(2.9);  // truncated like a conversion
  check_close(t, {2, 2, 2, 2, 2, 2});
  t.zero_();
  check_close(t, {0, 0, 0, 0, 0, 0});
  Tensor b = zeros({3}, kBool);
  b.fill_(5);
  check_close(b, {1, 1, 1});
  Tensor h = zeros({2}, kHalf);
  h.fill_(0.1);
  CHECK(h.data_ptr<Half>()[0].x == 0x2e66);
  // fill_ with a 0-dim tensor.
  Tensor f = zeros({3});
  f.fill_(tensor(4.5));
  check_close(f, {4.5, 4.5, 4.5});
  check_error([] { zeros({2}).fill_(zeros({2})); },
              "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.");
  // fill_ on a strided view touches only the view.
  Tensor base = zeros({3, 3});
  base.diagonal().fill_(1.0);
  check_close(base, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  // Recorded fill_: the gradient of what was overwritten is zero.
  Tensor a = rand_leaf({3});
  check_grad(
      [](const TensorList& in) {
        Tensor y = in[0] * 2.0;
        y.narrow(0, 0, 2).fill_(1.0);
        return y;
      },
      {a});
}

TEST_CASE("test_copy: item and data_ptr") {
  CHECK(tensor(2.5).item<double>() == 2.5);
  CHECK(tensor(2.5).item<float>() == 2.5f);
  CHECK(tensor(2.5).item<int64_t>() == 2);
  CHECK(tensor({7}).item<int>() == 7);
  CHECK(tensor(true).item<bool>());
  CHECK(tensor(3).item().isIntegral(false));
  CHECK(tensor(3.0).item().isFloatingPoint());
  CHECK(tensor(false).item().isBoolean());
  CHECK(zeros({1, 1, 1}, kHalf).fill_(0.1).item<double>() == static_cast<double>(static_cast<float>(Half(0.1f))));
  CHECK(arange(6).view({2, 3}).select(1, 2).select(0, 1).item<int64_t>() == 5);  // strided
  check_error([] { arange(6).view({2, 3}).item(); }, "a Tensor with 6 elements cannot be converted to Scalar");
  check_error([] { zeros({0}).item(); }, "a Tensor with 0 elements cannot be converted to Scalar");

  Tensor f = zeros({3});
  CHECK(f.data_ptr<float>() == f.data_ptr());
  check_error([&] { f.data_ptr<double>(); }, "expected scalar type Double but found Float");
  check_error([] { zeros({2}, kDouble).data_ptr<float>(); }, "expected scalar type Float but found Double");
  check_error([] { zeros({2}, kInt32).data_ptr<int64_t>(); }, "expected scalar type Long but found Int");
  // data_ptr points at element 0 of a view (storage offset applied).
  Tensor a = arange(10.);
  CHECK(a.narrow(0, 3, 2).data_ptr<float>() == a.data_ptr<float>() + 3);
  CHECK(*a.narrow(0, 3, 2).const_data_ptr<float>() == 3.0f);
}

TEST_CASE("test_copy: version counter") {
  Tensor x = zeros({2, 3});
  uint32_t v = x._version();
  x.fill_(1.0);
  CHECK(x._version() == v + 1);
  x.zero_();
  CHECK(x._version() == v + 2);
  x.copy_(ones({3}));
  CHECK(x._version() == v + 3);
  // Views and detach() share the counter (Note [Version counter]).
  Tensor view = x.select(0, 1);
  Tensor det = x.detach();
  CHECK(view._version() == x._version());
  view.fill_(2.0);
  CHECK(x._version() == v + 4);
  CHECK(det._version() == v + 4);
  det.zero_();
  CHECK(x._version() == v + 5);
  CHECK(view._version() == v + 5);
  // Out-of-place ops and clones do not touch it; a clone has its own counter.
  Tensor c = x.clone();
  uint32_t cv = c._version();
  (void)(x + 1.0);
  CHECK(x._version() == v + 5);
  c.fill_(3.0);
  CHECK(c._version() == cv + 1);
  CHECK(x._version() == v + 5);
  // Other in-place ops bump it too.
  x.add_(1.0);
  CHECK(x._version() == v + 6);
  // A tensor saved for backward and then modified in place is caught.
  Tensor a = rand_leaf({3});
  Tensor b = a * 2.0;
  Tensor y = b * b;  // saves b
  b.fill_(0.0);
  check_error([&] { y.sum().backward(); }, "modified by an inplace operation");
}

// libtorch programs write x.to(torch::kCPU): a DeviceType matched both to(Device) and
// to(TensorOptions) and did not compile.
TEST_CASE("test_copy: to(DeviceType) as libtorch spells it") {
  Tensor x = from_values({1.5, -2, 3}, {3}, kFloat);
  Tensor same = x.to(kCPU);
  CHECK(same.is_same(x));  // already there: to() returns the tensor itself, as PyTorch
  Tensor copied = x.to(kCPU, /*non_blocking=*/false, /*copy=*/true);
  CHECK(!copied.is_same(x));
  CHECK(copied.dtype() == kFloat);
  CHECK(values(copied) == std::vector<double>{1.5, -2, 3});
  CHECK(x.to(kCPU, kDouble).dtype() == kDouble);
}
