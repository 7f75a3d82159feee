// cdist and pdist (core/ops/distance.cpp): values for every special p against PyTorch 2.9's
// (torch.cdist(x1, x2, p).flatten().tolist() and torch.pdist(x, p).tolist() on the inputs
// below), batch broadcasting, float64 gradcheck, PyTorch's error texts.
#include <cmath>
#include <limits>

#include "ember/core/ops/distance.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::shape;

namespace {
Tensor rows_x1() { return from_values({0, 1, 2, 3, -1, 0.5}, {2, 3}); }
Tensor rows_x2() { return from_values({1, 1, 1, 0, 0, 0, -2, 0.5, 4}, {3, 3}); }
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("test_distance: cdist for p = 0, 1, 2, 3, inf and 0.5 matches PyTorch") {
  const Tensor a = rows_x1(), b = rows_x2();
  check_close(cdist(a, b, 0), {2, 2, 3, 3, 3, 3});
  check_close(cdist(a, b, 1), {2, 3, 4.5, 4.5, 4.5, 10});
  check_close(cdist(a, b, 2), {1.4142135381698608, 2.2360680103302, 2.872281312942505, 2.872281312942505,
                               3.2015621662139893, 6.284902572631836});
  check_close(cdist(a, b, 3), {1.2599210739135742, 2.0800838470458984, 2.5263872146606445, 2.5263872146606445,
                               3.0411009788513184, 5.5532026290893555});
  check_close(cdist(a, b, kInf), {1, 2, 2, 2, 3, 5});
  check_close(cdist(a, b, 0.5), {4.0, 5.828427791595459, 12.5, 12.5, 11.827805519104004, 28.426403045654297});
  CHECK(shape(cdist(a, b)) == std::vector<int64_t>{2, 3});
}

TEST_CASE("test_distance: cdist broadcasts batch dims") {
  Tensor a = rows_x1().unsqueeze(0).expand({4, 2, 3});
  Tensor b = rows_x2().unsqueeze(0).unsqueeze(0).expand({2, 1, 3, 3});
  Tensor d = cdist(a, b);
  CHECK(shape(d) == std::vector<int64_t>{2, 4, 2, 3});
  check_close(d.select(0, 1).select(0, 3), cdist(rows_x1(), rows_x2()));
}

TEST_CASE("test_distance: pdist is cdist's upper triangle, row by row") {
  Tensor x = from_values({0, 1, 2, 3, -1, 0.5, 1, 1, 1, -2, 0.5, 4}, {4, 3});
  check_close(pdist(x), {3.9051249027252197, 1.4142135381698608, 2.872281312942505, 2.872281312942505,
                         6.284902572631836, 4.27200174331665});
  check_close(pdist(x, 1), {6.5, 2.0, 4.5, 4.5, 10.0, 6.5});
  CHECK(pdist(x.slice(0, 0, 1)).numel() == 0);
}

TEST_CASE("test_distance: gradients (float64 gradcheck)") {
  for (double p : {1.0, 2.0, 3.0, 0.5}) {
    CAPTURE(p);
    check_grad([p](const TensorList& t) { return cdist(t[0], t[1], p); }, {rand_leaf({2, 3, 4}), rand_leaf({2, 5, 4})});
    check_grad([p](const TensorList& t) { return pdist(t[0], p); }, {rand_leaf({5, 3})});
  }
  check_grad([](const TensorList& t) { return cdist(t[0], t[1], kInf); }, {rand_leaf({3, 4}), rand_leaf({2, 4})});
}

TEST_CASE("test_distance: a zero distance has a zero gradient, not nan (p = 2)") {
  Tensor a = from_values({1, 2}, {1, 2}).requires_grad_(true);
  Tensor b = from_values({1, 2}, {1, 2});
  cdist(a, b).sum().backward();
  check_close(a.grad(), {0, 0});
}

TEST_CASE("test_distance: errors use PyTorch's texts") {
  check_error([] { cdist(ones({3, 4}), ones({2, 5})); }, "X1 and X2 must have the same number of columns. X1: 4 X2: 5");
  check_error([] { cdist(ones({3, 4}), ones({2, 4}), -1); }, "cdist only supports non-negative p values");
  check_error([] { cdist(ones({3}), ones({2, 4})); }, "cdist only supports at least 2D tensors, X1 got: 1D");
  check_error([] { cdist(ones({3, 4}, kLong), ones({2, 4}, kLong)); },
              "cdist only supports floating-point dtypes, X1 got: Long");
  check_error([] { pdist(ones({3, 4, 5})); }, "pdist only supports 2D tensors, got: 3D");
  check_error([] { pdist(ones({3, 4}), -1); }, "pdist only supports non-negative p values");
  check_error([] { pdist(ones({3, 4}, kLong)); }, "pdist only supports floating-point dtypes");
}
