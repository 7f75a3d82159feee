// max_pool2d's fast path for 2x2 windows at stride 2 (core/cpu/pooling.cpp, max_planes_2x2)
// against the general loop on the same windows: ceil_mode on odd sizes adds a partial last
// window, which sends the whole call down the general loop, and its leading outputs cover
// exactly the fast path's windows. Values and indices must agree exactly, NaNs and ties
// included.
#include <cmath>
#include <limits>

#include "ember/core/ops/pooling.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::from_values;
using ember::test::shape;
using ember::test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// Values drawn from a few levels, so most windows hold ties, with NaN and +-inf mixed in.
Tensor tie_heavy(int64_t n, int64_t c, int64_t h, int64_t w, ScalarType dt) {
  Tensor r = randint(0, 8, {n, c, h, w}, kDouble);
  std::vector<double> v = values(r);
  const double level[] = {0, 1, 2, 2, 3, kNan, -kInf, kInf};
  for (double& x : v) x = level[static_cast<int>(x)];
  if (!is_floating_point(dt))
    for (double& x : v) x = std::isfinite(x) ? x : (std::isnan(x) ? 5 : (x > 0 ? 7 : -7));
  return from_values(v, {n, c, h, w}, dt);
}

/// Bitwise-equal values (NaN == NaN) and equal indices.
void check_same(const Tensor& out, const Tensor& idx, const Tensor& ref, const Tensor& ref_idx) {
  std::vector<double> a = values(out), b = values(ref), ia = values(idx), ib = values(ref_idx);
  REQUIRE(a.size() == b.size());
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i];
    if ((!same || ia[i] != ib[i]) && bad++ < 3) {
      INFO("element " << i << ": " << a[i] << " at " << ia[i] << " vs " << b[i] << " at " << ib[i]);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

/// The fast path on x[..., :2a, :2b]'s windows vs the general loop on the same windows.
void compare_paths(const Tensor& x) {
  const int64_t H = x.size(-2), W = x.size(-1);
  REQUIRE((H % 2 == 1 || W % 2 == 1));  // ceil_mode then adds a partial window: general loop
  auto [fast, fast_idx] = max_pool2d_with_indices(x, 2, 2, 0, 1, false);
  auto [gen, gen_idx] = max_pool2d_with_indices(x, 2, 2, 0, 1, true);
  const int64_t oh = fast.size(-2), ow = fast.size(-1);
  CHECK(gen.size(-2) == (H + 1) / 2);
  CHECK(gen.size(-1) == (W + 1) / 2);
  check_same(fast, fast_idx, gen.narrow(-2, 0, oh).narrow(-1, 0, ow),
             gen_idx.narrow(-2, 0, oh).narrow(-1, 0, ow));
}

}  // namespace

TEST_CASE("max_pool2d 2x2 fast path: NaN and tie rules by hand") {
  // Windows in scan order (top-left, top-right, bottom-left, bottom-right), with plane indices:
  //   [NaN@0, 1@1, NaN@4, 2@5]: NaN wins and a later NaN replaces an earlier one -> NaN at 4;
  //   [3@2, 3@3, 3@6, 3@7]: ties keep the first -> 3 at 2;
  //   [-inf@8, -inf@9, -inf@12, -inf@13]: -inf is a value -> -inf at 8;
  //   [0@10, 5@11, 5@14, NaN@15] -> NaN at 15.
  Tensor x = from_values({kNan, 1, 3, 3, kNan, 2, 3, 3,  //
                          -kInf, -kInf, 0, 5, -kInf, -kInf, 5, kNan},
                         {1, 4, 4});
  auto [out, idx] = max_pool2d_with_indices(x, 2);
  CHECK(std::isnan(values(out)[0]));
  CHECK(values(out)[1] == 3);
  CHECK(values(out)[2] == -kInf);
  CHECK(std::isnan(values(out)[3]));
  check_close(idx, {4, 2, 8, 15});
}

TEST_CASE("max_pool2d 2x2 fast path equals the general loop on random input with NaNs and ties") {
  manual_seed(7);
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kByte}) {
    INFO("dtype " << dt);
    if (dt == kByte) {  // unsigned: no negative levels
      compare_paths(randint(0, 4, {2, 3, 9, 11}, kByte));
      continue;
    }
    compare_paths(tie_heavy(2, 3, 9, 11, dt));   // both odd
    compare_paths(tie_heavy(1, 5, 28, 15, dt));  // odd width only
    compare_paths(tie_heavy(3, 2, 7, 6, dt));    // odd height only
  }
  // Rows of 8 windows and more (the float AVX2 kernel's full registers, then a masked tail).
  for (int64_t w : {17, 29, 33, 35, 49})
    for (ScalarType dt : {kFloat, kDouble}) compare_paths(tie_heavy(2, 3, 5, w, dt));
  compare_paths(tie_heavy(2, 2, 29, 28, kFloat));  // the CNN's 28x28 plus an odd row
  // Unbatched, and a non-contiguous input (the op makes it contiguous first).
  compare_paths(tie_heavy(1, 4, 13, 13, kFloat).squeeze(0));
  compare_paths(tie_heavy(2, 9, 3, 5, kFloat).transpose(1, 3));
}

TEST_CASE("max_pool2d 2x2 fast path: shapes, empty batch, and gradients reach the argmax") {
  Tensor x = tie_heavy(2, 3, 8, 6, kDouble);
  auto [out, idx] = max_pool2d_with_indices(x, 2);
  CHECK(shape(out) == std::vector<int64_t>{2, 3, 4, 3});
  CHECK(shape(max_pool2d(zeros({0, 2, 4, 4}), 2)) == std::vector<int64_t>{0, 2, 2, 2});
  // Backward scatters 1 to each window's argmax: the gradient sums to the output count and
  // is 1 exactly at the recorded indices.
  Tensor leaf = rand({1, 2, 4, 6}, kDouble).requires_grad_(true);
  auto [y, at] = max_pool2d_with_indices(leaf, 2);
  y.sum().backward();
  std::vector<double> g = values(leaf.grad()), ia = values(at);
  double total = 0;
  for (double v : g) total += v;
  CHECK(total == 12);
  for (size_t i = 0; i < ia.size(); ++i) CHECK(g[(i / 6) * 24 + static_cast<size_t>(ia[i])] == 1);
}
