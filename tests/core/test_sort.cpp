// sort, argsort and topk (core/ops/sort.cpp): values and indices against std::stable_sort
// of each line, descending order, stability, NaN placement, gradients (to the source
// position), dtypes, 0-dim and empty tensors, error texts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "op_check.h"
#include "reduce_ref.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::lines_along;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// Positions of each line along dim in stable sorted order (no NaN in these inputs), the
/// first k of them; lines in row-major order of the other dims.
std::vector<std::vector<int64_t>> ref_order(const Tensor& x, int64_t dim, bool descending) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& l : lines_along(x, dim)) {
    std::vector<int64_t> idx(l.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int64_t a, int64_t b) { return descending ? l[a] > l[b] : l[a] < l[b]; });
    out.push_back(idx);
  }
  return out;
}

/// Checks values/indices (each with dim `dim` of size k) against the reference order.
void check_sorted(const Tensor& x, const Tensor& v, const Tensor& i, int64_t dim, bool descending,
                  int64_t k) {
  auto order = ref_order(x, dim, descending);
  auto lines = lines_along(x, dim);
  auto vl = lines_along(v, dim), il = lines_along(i, dim);
  REQUIRE(vl.size() == order.size());
  for (size_t n = 0; n < order.size(); ++n) {
    REQUIRE(static_cast<int64_t>(vl[n].size()) == k);
    for (int64_t j = 0; j < k; ++j) {
      CHECK(il[n][j] == order[n][j]);
      CHECK(vl[n][j] == lines[n][order[n][j]]);
    }
  }
}

}  // namespace

TEST_CASE("sort along each dim, ascending and descending") {
  manual_seed(31);
  // Small integers make many ties, which a stable sort keeps in their original order.
  Tensor a = randint(0, 4, {3, 4, 5}).to(kDouble);
  Tensor b = randint(0, 4, {5, 4, 3}).to(kDouble).permute({2, 1, 0});
  for (const Tensor& x : {a, b}) {
    for (int64_t d : {0, 1, 2, -1}) {
      for (bool desc : {false, true}) {
        auto [v, i] = x.sort(d, desc);
        CHECK(i.dtype() == kLong);
        int64_t dd = d < 0 ? d + 3 : d;
        check_sorted(x, v, i, dd, desc, x.size(dd));
        CHECK(equal(x.argsort(d, desc), i));
      }
    }
  }
  // python: torch.tensor([2.,1,2,1,2]).sort(descending=True) -> [2,2,2,1,1], [0,2,4,1,3]
  auto [v, i] = tensor({2.0, 1.0, 2.0, 1.0, 2.0}).sort(0, true);
  check_close(v, {2, 2, 2, 1, 1});
  check_close(i, {0, 2, 4, 1, 3});
}

TEST_CASE("sort: NaN is largest, dtypes, 0-dim, empty") {
  // python: torch.tensor([1., nan, 3, nan]).sort() -> [1, 3, nan, nan], [0, 2, 1, 3];
  // descending -> [nan, nan, 3, 1], [1, 3, 2, 0]
  Tensor x = tensor({1.0, kNan, 3.0, kNan});
  auto [v, i] = x.sort();
  check_close(v, {1, 3, kNan, kNan});
  check_close(i, {0, 2, 1, 3});
  auto [vd, id] = x.sort(0, true);
  check_close(vd, {kNan, kNan, 3, 1});
  check_close(id, {1, 3, 2, 0});
  auto [bv, bi] = tensor({true, false}).sort();
  CHECK(bv.dtype() == kBool);
  check_close(bv, {0, 1});
  check_close(bi, {1, 0});
  auto [iv, ii] = tensor({3, -1, 2}, kInt32).sort(0, true);
  CHECK(iv.dtype() == kInt32);
  check_close(iv, {3, 2, -1});
  check_close(tensor({2.0f, 1.0f, 3.0f}, kHalf).argsort(), {1, 0, 2});
  auto [sv, si] = tensor(5.0).sort();
  CHECK(sv.dim() == 0);
  check_close(sv, {5});
  CHECK(si.item<int64_t>() == 0);
  auto [ev, ei] = zeros({0, 3}).sort(0);
  CHECK(shape(ev) == std::vector<int64_t>{0, 3});
  CHECK(shape(ei) == std::vector<int64_t>{0, 3});
  check_error(
      [] {
        zeros({2, 3}).sort(2);
      },
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST_CASE("topk: largest and smallest, along dims") {
  manual_seed(37);
  Tensor a = randint(0, 5, {4, 6}).to(kDouble);
  Tensor b = randint(0, 5, {6, 4}).to(kDouble).t();
  for (const Tensor& x : {a, b}) {
    for (int64_t d : {0, 1}) {
      for (int64_t k : {int64_t(0), int64_t(1), int64_t(3), x.size(d)}) {
        for (bool largest : {true, false}) {
          auto [v, i] = x.topk(k, d, largest);
          check_sorted(x, v, i, d, largest, k);
        }
      }
    }
  }
  // python: torch.tensor([1., nan, 3, nan]).topk(2) -> nan, nan at [1, 3]; smallest -> [1, 3] at [0, 2]
  Tensor x = tensor({1.0, kNan, 3.0, kNan});
  auto [v, i] = x.topk(2);
  check_close(v, {kNan, kNan});
  check_close(i, {1, 3});
  auto [vs, is] = x.topk(2, -1, false);
  check_close(vs, {1, 3});
  check_close(is, {0, 2});
  auto [iv, ii] = tensor({1, 7, 3}).topk(1);
  CHECK(iv.dtype() == kLong);
  CHECK(iv.item<int64_t>() == 7);
  CHECK(ii.item<int64_t>() == 1);
}

TEST_CASE("topk: errors, 0-dim, empty") {
  check_error([] { zeros({2, 3}).topk(4); }, "selected index k out of range");
  check_error([] { zeros({2, 3}).topk(-1); }, "selected index k out of range");
  check_error([] { tensor(5.0).topk(2); }, "selected index k out of range");
  check_error([] { zeros({0, 3}).topk(1, 0); }, "selected index k out of range");
  check_error([] { zeros({2, 3}).topk(1, 2); }, "Dimension out of range");
  check_error([] { tensor({true, false}).topk(1); }, "\"topk\" not implemented for 'Bool'");
  auto [v, i] = tensor(5.0).topk(1);
  CHECK(v.dim() == 0);
  check_close(v, {5});
  CHECK(i.item<int64_t>() == 0);
  auto [v0, i0] = zeros({0, 3}).topk(0, 1);
  CHECK(shape(v0) == std::vector<int64_t>{0, 0});
  CHECK(shape(std::get<0>(zeros({2, 3}).topk(0))) == std::vector<int64_t>{2, 0});
}

TEST_CASE("sort and topk gradients go back to the source positions") {
  check_grad([](const TensorList& in) { return std::get<0>(in[0].sort(1)); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return std::get<0>(in[0].t().sort(0, true)); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return std::get<0>(in[0].topk(2, 1)); }, {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return std::get<0>(in[0].t().topk(2, 0, false)); },
             {rand_leaf({3, 4})});
  check_grad([](const TensorList& in) { return std::get<0>(in[0].sort(0)); }, {rand_leaf({})});
  check_gradgrad([](const TensorList& in) { return std::get<0>(in[0].topk(2, 0)); }, {rand_leaf({4, 3})});
  // [3, 1, 2] sorted is [1, 2, 3]; weighting the sorted values by [10, 20, 30] sends 10 to
  // position 1, 20 to position 2 and 30 to position 0.
  Tensor x = tensor({3.0, 1.0, 2.0}, kDouble).requires_grad_();
  (std::get<0>(x.sort()) * tensor({10.0, 20.0, 30.0}, kDouble)).sum().backward();
  check_close(x.grad(), {30, 10, 20});
}
