// Matrix products: the GEMM against its reference loop (every transpose, odd sizes, padded
// leading dimensions, alpha/beta, every dtype), mm/bmm/addmm/baddbmm/mv/dot/outer/matmul
// against plain double loops, every matmul shape rule, gradients, and PyTorch's errors.
#include <limits>
#include <numeric>

#include "ember/core/cpu/gemm.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {

/// Deterministic test data: a small linear congruential generator.
struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed) {}
  double uniform() {  // in [-1, 1)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) / 4503599627370496.0 - 1.0;
  }
  int64_t small_int(int64_t r) { return static_cast<int64_t>(uniform() * static_cast<double>(r)); }
};

/// Fills a buffer: random reals for float/double, small integers for the others (so Half
/// and BFloat16 products are exact and agree with the reference bit for bit), and values
/// up to 100 for int8 so that its products overflow and wrap.
template <class T>
std::vector<T> test_data(size_t n, Lcg& g) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      x = static_cast<T>(g.uniform());
    else if constexpr (std::is_same_v<T, int8_t>)
      x = static_cast<T>(g.small_int(100));
    else
      x = static_cast<T>(static_cast<float>(g.small_int(4)));
  }
  return v;
}

template <class T>
double as_double(T v) {
  return static_cast<double>(static_cast<opmath_t<T>>(v));
}

/// Runs gemm and gemm_reference on the same data, leading dimensions padded by `pad`, and
/// checks every element of C, padding included (which neither may touch).
template <class T>
void check_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, double beta,
                int64_t pad = 0) {
  Lcg g(static_cast<uint64_t>(m * 1000003 + n * 1009 + k * 7 + ta * 2 + tb));
  const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
  std::vector<T> a = test_data<T>(static_cast<size_t>((ta ? k : m) * lda), g);
  std::vector<T> b = test_data<T>(static_cast<size_t>((tb ? n : k) * ldb), g);
  std::vector<T> c = test_data<T>(static_cast<size_t>(m * ldc), g);
  std::vector<T> expected = c;
  using M = opmath_t<T>;
  cpu::gemm<T>(ta, tb, m, n, k, static_cast<M>(alpha), a.data(), lda, b.data(), ldb, static_cast<M>(beta),
               c.data(), ldc);
  cpu::gemm_reference<T>(ta, tb, m, n, k, static_cast<M>(alpha), a.data(), lda, b.data(), ldb,
                         static_cast<M>(beta), expected.data(), ldc);
  const bool exact = !(std::is_same_v<T, float> || std::is_same_v<T, double>);
  const double tol =
      std::is_same_v<T, float> ? 1e-5 * static_cast<double>(k + 1) : 1e-12 * static_cast<double>(k + 1);
  for (size_t i = 0; i < c.size(); ++i) {
    INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " element " << i);
    if (exact)
      CHECK(as_double(c[i]) == as_double(expected[i]));
    else
      CHECK(std::fabs(as_double(c[i]) - as_double(expected[i])) <= tol);
  }
}

template <class T>
void check_gemm_all_shapes() {
  const int64_t sizes[] = {1, 7, 33, 65};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : sizes) check_gemm<T>(ta, tb, m, n, k, 1.0, 0.0);
}

/// A plain double loop over row-major values: (m x k) @ (k x n).
std::vector<double> loop_mm(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t k,
                            int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

/// matmul by its definition, in double: a 1-D a is a row and a 1-D b a column, batch dims
/// broadcast, and the dims added for vectors are dropped from the result.
Tensor ref_matmul(const Tensor& a, const Tensor& b) {
  std::vector<int64_t> as = shape(a), bs = shape(b);
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t n = as[as.size() - 2], k = as.back(), p = bs.back();
  REQUIRE(bs[bs.size() - 2] == k);
  std::vector<int64_t> ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t nd = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), nd - ab.size(), 1);
  bb.insert(bb.begin(), nd - bb.size(), 1);
  std::vector<int64_t> batch(nd);
  for (size_t d = 0; d < nd; ++d) batch[d] = std::max(ab[d], bb[d]);
  const int64_t nb = std::accumulate(batch.begin(), batch.end(), int64_t{1}, std::multiplies<>());
  std::vector<double> av = values(a), bv = values(b), out(static_cast<size_t>(nb * n * p), 0.0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t rest = bi, a_off = 0, b_off = 0, a_mul = 1, b_mul = 1;
    for (size_t d = nd; d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      a_off += (ab[d] == 1 ? 0 : idx) * a_mul;
      b_off += (bb[d] == 1 ? 0 : idx) * b_mul;
      a_mul *= ab[d];
      b_mul *= bb[d];
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < p; ++j)
        for (int64_t q = 0; q < k; ++q)
          out[(bi * n + i) * p + j] += av[(a_off * n + i) * k + q] * bv[(b_off * k + q) * p + j];
  }
  std::vector<int64_t> out_shape = batch;
  if (!a_vec) out_shape.push_back(n);
  if (!b_vec) out_shape.push_back(p);
  return from_values(out, out_shape);
}

/// Test operands: reals for floating dtypes, integers in [-4, 4] for integer ones.
Tensor operand(IntArrayRef s, ScalarType dt, uint64_t seed) {
  Lcg g(seed);
  int64_t n = std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = is_floating_point(dt) ? g.uniform() : static_cast<double>(g.small_int(5));
  return from_values(v, s, dt);
}

}  // namespace

// ---- the GEMM ------------------------------------------------------------------------------

TEST_CASE("gemm matches the reference for every transpose and odd sizes") {
  check_gemm_all_shapes<float>();
  check_gemm_all_shapes<double>();
  check_gemm_all_shapes<int64_t>();
}

TEST_CASE("gemm: alpha, beta, padded leading dimensions, every dtype") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_gemm<float>(ta, tb, 7, 33, 65, 0.5, 2.0, 3);
      check_gemm<double>(ta, tb, 33, 7, 1, -1.5, 1.0, 1);
      check_gemm<double>(ta, tb, 65, 33, 7, 2.0, -0.25, 5);
      check_gemm<Half>(ta, tb, 7, 33, 65, 2.0, 3.0, 2);
      check_gemm<BFloat16>(ta, tb, 33, 7, 7, 1.0, 1.0, 1);
      check_gemm<int32_t>(ta, tb, 7, 7, 33, 3.0, 2.0, 2);
      check_gemm<int16_t>(ta, tb, 7, 1, 33, 1.0, 0.0);
      check_gemm<uint8_t>(ta, tb, 1, 7, 7, 1.0, 1.0);
      check_gemm<int8_t>(ta, tb, 7, 7, 65, 1.0, 1.0);  // overflows: both wrap around
    }
  // k == 0 leaves beta * C; alpha == 0 does too.
  check_gemm<float>(false, false, 7, 7, 0, 1.0, 2.0);
  check_gemm<double>(true, false, 7, 7, 7, 0.0, 3.0);
}

TEST_CASE("gemm: large products split into blocks agree with the reference") {
  // Over 2^21 multiply-adds is above the parallel threshold: row blocks when m >= n, column
  // blocks otherwise, each with every transpose.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_gemm<float>(ta, tb, 130, 130, 130, 1.0, 0.0);
      check_gemm<double>(ta, tb, 70, 300, 120, 0.5, 1.0, 2);
    }
  check_gemm<int64_t>(false, true, 140, 120, 130, 1.0, 1.0);
}

TEST_CASE("gemm: beta == 0 ignores NaN in C (BLAS convention)") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a{1, 2, 3, 4}, b{1, 0, 0, 1}, c(4, nan);
  cpu::gemm<float>(false, false, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
  CHECK(c == std::vector<float>{1, 2, 3, 4});
  std::vector<double> ad{1, 2}, bd{3, 4}, cd(1, std::numeric_limits<double>::quiet_NaN());
  cpu::gemm<double>(false, false, 1, 1, 2, 1.0, ad.data(), 2, bd.data(), 1, 0.0, cd.data(), 1);
  CHECK(cd[0] == 11.0);  // 1*3 + 2*4
  // And through addmm: self full of NaN with beta = 0 gives the plain product.
  Tensor self = full({2, 2}, nan);
  check_close(addmm(self, ones({2, 3}), ones({3, 2}), 0, 1), {3, 3, 3, 3});
}

TEST_CASE("gemm: results do not depend on the thread count") {
  Tensor a = operand({150, 140}, kFloat, 1), b = operand({140, 160}, kFloat, 2);
  const int threads = get_num_threads();
  set_num_threads(1);
  std::vector<double> one = values(a.mm(b));
  set_num_threads(2);
  std::vector<double> two = values(a.mm(b));
  set_num_threads(threads);
  CHECK(one == two);
}

// ---- mm / bmm / addmm / baddbmm / mv / dot / outer: values ---------------------------------

TEST_CASE("mm: hand-computed values, dtypes, strided operands") {
  // [[1,2],[3,4]] @ [[5,6],[7,8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]]
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, kDouble).view({2, 2}),
         b = tensor({5.0, 6.0, 7.0, 8.0}, kDouble).view({2, 2});
  check_close(a.mm(b), {19, 22, 43, 50});
  CHECK(a.mm(b).dtype() == kDouble);
  Tensor al = tensor({1, 2, 3, 4}).view({2, 2}), bl = tensor({5, 6, 7, 8}).view({2, 2});
  Tensor cl = al.mm(bl);
  CHECK(cl.dtype() == kLong);
  check_close(cl, {19, 22, 43, 50});
  check_close(a.to(kFloat).mm(b.to(kFloat)), {19, 22, 43, 50});
  check_close(a.to(kHalf).mm(b.to(kHalf)), {19, 22, 43, 50});
  check_close(a.to(kBFloat16).mm(b.to(kBFloat16)), {19, 22, 43, 50});
  check_close(a.to(kInt).mm(b.to(kInt)), {19, 22, 43, 50});

  for (ScalarType dt : {kFloat, kDouble, kLong}) {
    Tensor x = operand({9, 7}, dt, 3), y = operand({7, 5}, dt, 4);
    std::vector<double> expected = loop_mm(values(x), values(y), 9, 7, 5);
    check_close(x.mm(y), expected, 1e-5);
    // Transposed (stride 1 on the other dim), step-sliced (no unit stride: copied) and
    // expanded (row stride 0) operands.
    check_close(x.t().contiguous().t().mm(y), expected, 1e-5);
    check_close(x.mm(y.t().contiguous().t()), expected, 1e-5);
    Tensor wide = operand({9, 14}, dt, 5);
    Tensor stepped = wide.slice(1, 0, 14, 2);
    check_close(stepped.mm(y), loop_mm(values(stepped), values(y), 9, 7, 5), 1e-5);
    Tensor row = operand({1, 7}, dt, 6).expand({9, 7});
    check_close(row.mm(y), loop_mm(values(row), values(y), 9, 7, 5), 1e-5);
  }
}

TEST_CASE("mm, bmm, matmul: empty and zero-size dims") {
  CHECK(shape(zeros({0, 3}).mm(zeros({3, 2}))) == std::vector<int64_t>{0, 2});
  check_close(ones({2, 0}).mm(ones({0, 3})), std::vector<double>(6, 0.0));  // empty sums are 0
  CHECK(shape(ones({2, 3}).mm(ones({3, 0}))) == std::vector<int64_t>{2, 0});
  CHECK(shape(zeros({0, 2, 3}).bmm(zeros({0, 3, 4}))) == std::vector<int64_t>{0, 2, 4});
  check_close(ones({2, 2, 0}).bmm(ones({2, 0, 3})), std::vector<double>(12, 0.0));
  check_close(dot(zeros({0}), zeros({0})), {0});
  check_close(mv(ones({2, 0}), ones({0})), {0, 0});
  CHECK(shape(matmul(zeros({0, 2, 3}), zeros({3, 2}))) == std::vector<int64_t>{0, 2, 2});
  // addmm with k = 0: out = beta * self.
  check_close(addmm(full({2, 2}, 3.0), ones({2, 0}), ones({0, 2}), 2, 1), {6, 6, 6, 6});
}

TEST_CASE("bmm: values per batch item, batch stride 0, parallel batches") {
  for (ScalarType dt : {kFloat, kDouble, kLong}) {
    Tensor a = operand({4, 3, 5}, dt, 7), b = operand({4, 5, 2}, dt, 8);
    Tensor c = a.bmm(b);
    CHECK(shape(c) == std::vector<int64_t>{4, 3, 2});
    for (int64_t i = 0; i < 4; ++i)
      check_close(c.select(0, i), loop_mm(values(a.select(0, i)), values(b.select(0, i)), 3, 5, 2), 1e-5);
    // An expanded batch (stride 0) and transposed items.
    Tensor one = operand({1, 5, 3}, dt, 9).expand({4, 5, 3}).transpose(1, 2);
    Tensor d = one.bmm(b);
    for (int64_t i = 0; i < 4; ++i)
      check_close(d.select(0, i), loop_mm(values(one.select(0, i)), values(b.select(0, i)), 3, 5, 2), 1e-5);
  }
  // Many small items run in parallel over the batch.
  Tensor a = operand({300, 8, 9}, kDouble, 10), b = operand({300, 9, 7}, kDouble, 11);
  Tensor c = a.bmm(b);
  for (int64_t i : {0, 151, 299})
    check_close(c.select(0, i), loop_mm(values(a.select(0, i)), values(b.select(0, i)), 8, 9, 7), 1e-10);
  check_close(tensor({1, 2}).view({1, 1, 2}).bmm(tensor({3, 4}).view({1, 2, 1})), {11});  // int64
}

TEST_CASE("addmm and baddbmm: beta, alpha, broadcast self, integer scalars") {
  Tensor m1 = operand({2, 3}, kDouble, 12), m2 = operand({3, 4}, kDouble, 13);
  std::vector<double> prod = loop_mm(values(m1), values(m2), 2, 3, 4);
  Tensor self = tensor({1.0, 2.0, 3.0, 4.0}, kDouble);  // broadcast over rows
  std::vector<double> expected(8);
  for (int i = 0; i < 8; ++i) expected[i] = 0.5 * (i % 4 + 1) + 2.0 * prod[i];
  check_close(addmm(self, m1, m2, 0.5, 2.0), expected);
  check_close(self.addmm(m1, m2, 0.5, 2.0), expected);
  check_close(addmm(tensor(1.0, kDouble), m1, m2), [&] {  // 0-dim self, beta = alpha = 1
    std::vector<double> e(prod);
    for (auto& v : e) v += 1.0;
    return e;
  }());
  // PyTorch casts beta and alpha to the integer dtype: beta = 0.5 becomes 0.
  // torch.addmm(ones(2,3,long), ones(2,3,long), ones(3,3,long), beta=0.5, alpha=2) = 6.
  Tensor ol = ones({2, 3}, kLong);
  check_close(addmm(ol, ol, ones({3, 3}, kLong), 0.5, 2), std::vector<double>(6, 6.0));
  check_close(addmm(ol, ol, ones({3, 3}, kLong), 2, 3), std::vector<double>(6, 11.0));  // 2 + 3*3

  Tensor b1 = operand({3, 2, 4}, kDouble, 14), b2 = operand({3, 4, 5}, kDouble, 15);
  Tensor bself = operand({2, 1}, kDouble, 16);  // broadcast over batch and columns
  Tensor out = baddbmm(bself, b1, b2, -1.0, 0.5);
  CHECK(shape(out) == std::vector<int64_t>{3, 2, 5});
  std::vector<double> sv = values(bself);
  for (int64_t i = 0; i < 3; ++i) {
    std::vector<double> p = loop_mm(values(b1.select(0, i)), values(b2.select(0, i)), 2, 4, 5);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 5; ++c) p[r * 5 + c] = -sv[r] + 0.5 * p[r * 5 + c];
    check_close(out.select(0, i), p);
  }
  check_close(bself.baddbmm(b1, b2, -1.0, 0.5), out);
}

TEST_CASE("mv, dot, outer, ger: values and dtypes") {
  // [[1,2,3],[4,5,6]] @ [1,0,-1] = [1-3, 4-6]
  Tensor m = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).view({2, 3}), v = tensor({1.0, 0.0, -1.0});
  check_close(m.mv(v), {-2, -2});
  check_close(m.t().mv(tensor({1.0, 1.0})), {5, 7, 9});  // transposed matrix
  check_close(m.to(kLong).mv(v.to(kLong)), {-2, -2});
  check_close(m.mv(tensor({1.0, 9.0, 0.0, 9.0, -1.0}).slice(0, 0, 5, 2)), {-2, -2});  // strided vector
  // [1,2,3] . [4,5,6] = 4 + 10 + 18
  check_close(dot(tensor({1.0, 2.0, 3.0}), tensor({4.0, 5.0, 6.0})), {32});
  CHECK(tensor({1, 2, 3}).dot(tensor({4, 5, 6})).item<int64_t>() == 32);
  // uint8 wraps: 3 * 100 = 300 = 44 (mod 256), as torch.dot gives.
  Tensor hundreds = full({3}, 100, kByte);
  CHECK(dot(hundreds, ones({3}, kByte)).item<int64_t>() == 44);
  check_close(dot(tensor({1.0, 2.0}).to(kHalf), tensor({3.0, 4.0}).to(kHalf)), {11});
  CHECK(dot(tensor({1.0f, 2.0f}), tensor({3.0f, 4.0f})).dim() == 0);
  // outer: a_i * b_j, with mul's type promotion (long x bool -> long, float x double -> double).
  check_close(outer(tensor({1.0, 2.0}), tensor({3.0, 4.0, 5.0})), {3, 4, 5, 6, 8, 10});
  CHECK(outer(tensor({1, 2}), ones({3}, kBool)).dtype() == kLong);
  CHECK(outer(ones({2}), ones({3}, kDouble)).dtype() == kDouble);
  CHECK(outer(ones({2}, kBool), ones({3}, kBool)).dtype() == kBool);
  check_close(ger(tensor({1.0, 2.0}), tensor({3.0})), {3, 6});
  check_close(tensor({1.0, 2.0}).outer(tensor({3.0})), {3, 6});
}

// ---- matmul: every shape rule ---------------------------------------------------------------

TEST_CASE("matmul: every shape rule against a plain loop, in float32, float64 and int64") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3}, {3}},                 // dot
      {{2, 3}, {3}},              // mv
      {{3}, {3, 4}},              // 1-D @ 2-D: prepend 1, then remove it
      {{2, 3}, {3, 4}},           // mm
      {{2, 2, 3}, {3, 4}},        // N-D @ 2-D: folded into one mm
      {{4, 2, 3}, {3}},           // N-D @ 1-D: folded into one mv
      {{2, 3}, {2, 3, 4}},        // 2-D @ N-D
      {{3}, {4, 3, 2}},           // 1-D @ N-D
      {{2, 3, 4}, {2, 4, 5}},     // batched
      {{2, 1, 2, 3}, {3, 3, 4}},  // broadcast batch dims
      {{5, 2, 3}, {1, 3, 4}},     // size-1 batch dim broadcasts
      {{1, 2, 3}, {3, 5}},        // 3-D with one batch item @ 2-D
      {{2, 1, 4, 3}, {3}},        // 4-D @ 1-D
      {{3}, {2, 1, 3, 4}},        // 1-D @ 4-D
  };
  for (ScalarType dt : {kFloat, kDouble, kLong}) {
    uint64_t seed = 100;
    for (const auto& shapes : cases) {
      const std::vector<int64_t>&as = shapes.first, &bs = shapes.second;
      Tensor a = operand(as, dt, seed++), b = operand(bs, dt, seed++);
      INFO("a " << a.sizes() << " @ b " << b.sizes() << " in " << dt);
      Tensor c = matmul(a, b);
      CHECK(c.dtype() == dt);
      check_close(c, ref_matmul(a, b), 1e-5);
      check_close(a.matmul(b), ref_matmul(a, b), 1e-5);
      if (dt == kDouble) {  // the folded paths taken when the smaller operand needs a gradient
        Tensor ag = a.detach().requires_grad_(true), bg = b.detach().requires_grad_(true);
        check_close(matmul(ag, b), ref_matmul(a, b), 1e-10);
        check_close(matmul(a, bg), ref_matmul(a, b), 1e-10);
        // Non-contiguous operands take the same paths.
        check_close(matmul(a.transpose(0, -1).contiguous().transpose(0, -1), b), ref_matmul(a, b), 1e-10);
      }
    }
  }
}

// ---- gradients ----------------------------------------------------------------------------

TEST_CASE("mm, bmm, mv, dot, outer: gradcheck, also through non-contiguous inputs") {
  check_grad([](const TensorList& x) { return mm(x[0], x[1]); }, {rand_leaf({3, 4}), rand_leaf({4, 2})});
  check_grad([](const TensorList& x) { return mm(x[0].t(), x[1].t()); },
             {rand_leaf({4, 3}), rand_leaf({2, 4})});
  check_grad([](const TensorList& x) { return bmm(x[0], x[1]); },
             {rand_leaf({2, 3, 4}), rand_leaf({2, 4, 2})});
  check_grad([](const TensorList& x) { return bmm(x[0].transpose(1, 2), x[1]); },
             {rand_leaf({2, 4, 3}), rand_leaf({2, 4, 2})});
  check_grad([](const TensorList& x) { return mv(x[0], x[1]); }, {rand_leaf({3, 4}), rand_leaf({4})});
  check_grad([](const TensorList& x) { return mv(x[0].t(), x[1].slice(0, 0, 6, 2)); },
             {rand_leaf({3, 2}), rand_leaf({6})});
  check_grad([](const TensorList& x) { return dot(x[0], x[1]); }, {rand_leaf({5}), rand_leaf({5})});
  check_grad([](const TensorList& x) { return outer(x[0], x[1]); }, {rand_leaf({3}), rand_leaf({2})});
  check_grad([](const TensorList& x) { return ger(x[0], x[1]); }, {rand_leaf({2}), rand_leaf({4})});
}

TEST_CASE("addmm, baddbmm: gradcheck with beta, alpha and a broadcast self") {
  check_grad([](const TensorList& x) { return addmm(x[0], x[1], x[2]); },
             {rand_leaf({3, 2}), rand_leaf({3, 4}), rand_leaf({4, 2})});
  check_grad([](const TensorList& x) { return addmm(x[0], x[1], x[2], 0.5, -2.0); },
             {rand_leaf({2}), rand_leaf({3, 4}), rand_leaf({4, 2})});
  check_grad([](const TensorList& x) { return addmm(x[0], x[1].t(), x[2], 0, 3); },
             {rand_leaf({}), rand_leaf({4, 3}), rand_leaf({4, 2})});
  check_grad([](const TensorList& x) { return baddbmm(x[0], x[1], x[2], 1.5, 0.25); },
             {rand_leaf({2, 3, 2}), rand_leaf({2, 3, 4}), rand_leaf({2, 4, 2})});
  check_grad([](const TensorList& x) { return baddbmm(x[0], x[1], x[2]); },
             {rand_leaf({3, 1}), rand_leaf({2, 3, 4}), rand_leaf({2, 4, 2})});
}

TEST_CASE("matmul: gradcheck for each shape rule, including broadcast batch dims") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3}, {3}},
      {{2, 3}, {3}},
      {{3}, {3, 2}},
      {{2, 3}, {3, 2}},
      {{2, 2, 3}, {3, 2}},
      {{2, 2, 3}, {3}},
      {{2, 3}, {2, 3, 2}},
      {{3}, {2, 3, 2}},
      {{2, 2, 3}, {2, 3, 2}},
      {{2, 1, 2, 3}, {3, 3, 2}},
      {{3, 2, 3}, {1, 3, 2}},
  };
  for (const auto& shapes : cases) {
    // (Named references, not a structured binding: doctest's INFO captures them in a lambda.)
    const std::vector<int64_t>&as = shapes.first, &bs = shapes.second;
    INFO("a " << IntArrayRef(as) << " @ b " << IntArrayRef(bs));
    check_grad([](const TensorList& x) { return matmul(x[0], x[1]); }, {rand_leaf(as), rand_leaf(bs)});
    // Only one operand requiring grad takes matmul's other (unfolded) paths.
    Tensor fixed = rand_leaf(bs).detach();
    check_grad([fixed](const TensorList& x) { return matmul(x[0], fixed); }, {rand_leaf(as)});
  }
  // A broadcast batch operand's gradient is summed over the dims it was broadcast along.
  Tensor a = ones({2, 1, 2, 3}, kDouble).requires_grad_(true),
         b = ones({3, 3, 4}, kDouble).requires_grad_(true);
  matmul(a, b).sum().backward();
  CHECK(shape(a.grad()) == std::vector<int64_t>{2, 1, 2, 3});
  check_close(a.grad(), std::vector<double>(12, 12.0));  // 3 batch copies x 4 columns
  CHECK(shape(b.grad()) == std::vector<int64_t>{3, 3, 4});
  check_close(b.grad(), std::vector<double>(36, 4.0));  // 2 batch copies x 2 rows
}

TEST_CASE("mm and matmul: gradgradcheck, and node names") {
  check_gradgrad([](const TensorList& x) { return mm(x[0], x[1]); }, {rand_leaf({2, 3}), rand_leaf({3, 2})});
  check_gradgrad([](const TensorList& x) { return matmul(x[0], x[1]); },
                 {rand_leaf({2, 2, 3}), rand_leaf({3, 2})});
  check_gradgrad([](const TensorList& x) { return matmul(x[0], x[1]); },
                 {rand_leaf({3}), rand_leaf({2, 3, 2})});
  check_gradgrad([](const TensorList& x) { return addmm(x[0], x[1], x[2], 0.5, 2); },
                 {rand_leaf({2}), rand_leaf({2, 3}), rand_leaf({3, 2})});
  Tensor a = rand_leaf({2, 3}), b = rand_leaf({3, 2});
  CHECK(mm(a, b).grad_fn()->name() == "MmBackward0");
  CHECK(addmm(rand_leaf({2}), a, b).grad_fn()->name() == "AddmmBackward0");
  CHECK(bmm(a.unsqueeze(0), b.unsqueeze(0)).grad_fn()->name() == "BmmBackward0");
  CHECK(dot(a.select(0, 0), b.select(1, 0)).grad_fn()->name() == "DotBackward0");
  CHECK(mv(a, b.select(1, 0)).grad_fn()->name() == "MvBackward0");
  CHECK(matmul(a, b).grad_fn()->name() == "MmBackward0");
}

// ---- errors -------------------------------------------------------------------------------

TEST_CASE("linalg errors use PyTorch's texts") {
  check_error(
      [] {
        mm(ones({2, 3}), ones({4, 5}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  check_error([] { mm(ones({3}), ones({3, 5})); }, "self must be a matrix");
  check_error([] { mm(ones({2, 3}), ones({3})); }, "mat2 must be a matrix");
  check_error(
      [] {
        mm(ones({2, 3}), ones({3, 5}, kDouble));
      },
      "expected m1 and m2 to have the same dtype, but got: float != double");
  check_error(
      [] {
        mm(ones({2, 3}, kLong), ones({3, 5}));
      },
      "expected m1 and m2 to have the same dtype, but got: long int != float");
  check_error(
      [] {
        mm(ones({2, 2}, kBool), ones({2, 2}, kBool));
      },
      "\"addmm_impl_cpu_\" not implemented for 'Bool'");

  check_error([] { bmm(ones({2, 3}), ones({2, 3, 4})); }, "batch1 must be a 3D tensor");
  check_error([] { bmm(ones({2, 2, 3}), ones({2, 3})); }, "batch2 must be a 3D tensor");
  check_error(
      [] {
        bmm(ones({2, 2, 3}), ones({2, 4, 4}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  check_error(
      [] {
        bmm(ones({2, 2, 3}), ones({3, 3, 4}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].");
  check_error(
      [] {
        bmm(ones({2, 2, 3}), ones({2, 3, 4}, kDouble));
      },
      "expected scalar type Float but found Double");
  check_error(
      [] {
        bmm(ones({1, 2, 2}, kBool), ones({1, 2, 2}, kBool));
      },
      "\"bmm\" not implemented for 'Bool'");

  check_error([] { dot(ones({2, 2}), ones({2, 2})); }, "1D tensors expected, but got 2D and 2D tensors");
  check_error(
      [] { dot(ones({3}), ones({4})); },
      "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but "
      "got 3 and 4 elements respectively");
  check_error([] { dot(ones({3}), ones({3}, kDouble)); },
              "dot : expected both vectors to have same dtype, but found Float and Double");
  check_error([] { dot(ones({3}, kBool), ones({3}, kBool)); }, "\"dot\" not implemented for 'Bool'");

  check_error([] { mv(ones({2, 3}), ones({4})); }, "size mismatch, got 2, 2x3,4");
  check_error([] { mv(ones({2, 3}), ones({3, 1})); }, "vector + matrix @ vector expected, got 1, 2, 2");
  check_error([] { mv(ones({2, 3}), ones({3}, kDouble)); }, "expected scalar type Float but found Double");
  check_error(
      [] {
        mv(ones({2, 3}, kBool), ones({3}, kBool));
      },
      "\"addmv_impl_cpu\" not implemented for 'Bool'");

  check_error([] { outer(ones({2, 3}), ones({3})); }, "outer: Expected 1-D argument self, but got 2-D");
  check_error([] { outer(ones({3}), ones({})); }, "outer: Expected 1-D argument vec2, but got 0-D");

  check_error(
      [] {
        addmm(ones({4}), ones({2, 3}), ones({3, 3}));
      },
      "The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 1.  "
      "Target sizes: [2, 3].  Tensor sizes: [4]");
  check_error(
      [] {
        addmm(ones({2, 3}), ones({2, 3, 1}), ones({3, 3}));
      },
      "mat1 must be a matrix, got 3-D tensor");
  check_error([] { addmm(ones({2, 3}), ones({2, 3}), ones({3})); }, "mat2 must be a matrix, got 1-D tensor");
  check_error(
      [] {
        addmm(ones({2, 3}), ones({2, 3}), ones({4, 3}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)");
  check_error(
      [] {
        addmm(ones({2, 3}, kDouble), ones({2, 3}), ones({3, 3}));
      },
      "self and mat2 must have the same dtype, but got Double and Float");
  check_error(
      [] {
        addmm(ones({2, 3}), ones({2, 3}, kDouble), ones({3, 3}));
      },
      "mat1 and mat2 must have the same dtype, but got Double and Float");

  check_error([] { baddbmm(ones({3}), ones({2, 3}), ones({2, 3, 3})); }, "batch1 must be a 3D tensor");
  check_error(
      [] {
        baddbmm(ones({4}), ones({2, 2, 3}), ones({2, 3, 3}));
      },
      "The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 2.  "
      "Target sizes: [2, 2, 3].  Tensor sizes: [4]");
  check_error(
      [] {
        baddbmm(ones({3}), ones({2, 2, 3}), ones({2, 4, 3}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  check_error(
      [] {
        baddbmm(ones({3}, kDouble), ones({2, 2, 3}), ones({2, 3, 3}));
      },
      "Input dtypes must be the same, got: input double, batch1: float, batch2: float");

  check_error(
      [] {
        matmul(tensor(1.0), ones({2, 2}));
      },
      "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  check_error(
      [] {
        matmul(ones({2, 2}), tensor(1.0));
      },
      "both arguments to matmul need to be at least 1D, but they are 2D and 0D");
  check_error([] { matmul(ones({3}), ones({4})); }, "inconsistent tensor size, expected tensor [3]");
  check_error([] { matmul(ones({2, 3}), ones({4})); }, "size mismatch, got 2, 2x3,4");
  check_error(
      [] {
        matmul(ones({3}), ones({4, 2}));
      },
      "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x2)");
  check_error(
      [] {
        matmul(ones({2, 3}), ones({3, 2}, kDouble));
      },
      "expected m1 and m2 to have the same dtype, but got: float != double");
  check_error(
      [] {
        matmul(ones({2, 2, 3}), ones({2, 4, 4}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  check_error([] { matmul(ones({2, 2, 3}), ones({4})); }, "size mismatch, got 4, 4x3,4");
  check_error(
      [] {
        matmul(ones({2, 2, 3}), ones({3, 3, 4}));
      },
      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
}

// A transposed weight's gradient is computed in the weight's own layout (PyTorch's
// mm_mat1/mm_mat2_backward): accumulating a transposed gradient into a contiguous .grad is a
// strided add, and an LSTM does one per time step (148 -> 91 ms fwd+bwd in bench_rnn).
TEST_CASE("test_linalg: gradients through w.t() come out in w's layout, with the same values") {
  Tensor w = rand_leaf({4, 3}), x = rand_leaf({5, 3}), b = rand_leaf({4});
  Tensor g = randn({5, 4}, kDouble);
  // The node's own gradient for w.t() is column-major, so w's is dense (the engine would
  // otherwise accumulate a transposed view).
  Tensor wt = w.t();
  Tensor g_wt = autograd::grad({addmm(b, x, wt)}, {wt}, {g})[0];
  CHECK(g_wt.t().is_contiguous());
  check_close(g_wt, x.detach().t().mm(g), 1e-12, 1e-12);
  addmm(b, x, w.t()).backward(g);
  CHECK(w.grad().is_contiguous());
  check_close(w.grad(), g.t().mm(x.detach()), 1e-12, 1e-12);
  // mat1 transposed (x.t() of a contiguous [3, 5]) and mm: the same rule on the other side.
  Tensor xt = rand_leaf({3, 5}), v = rand_leaf({3, 4});
  Tensor x_t = xt.t();
  CHECK(autograd::grad({x_t.mm(v)}, {x_t}, {g})[0].t().is_contiguous());
  xt.t().mm(v).backward(g);
  CHECK(xt.grad().is_contiguous());
  CHECK(v.grad().is_contiguous());
  check_close(xt.grad(), v.detach().mm(g.t()), 1e-12, 1e-12);
  check_close(v.grad(), xt.detach().mm(g), 1e-12, 1e-12);
  // Accumulating a second time keeps the layout and adds.
  addmm(b, x, w.t()).backward(g);
  CHECK(w.grad().is_contiguous());
  check_close(w.grad(), g.t().mm(x.detach()) * 2, 1e-12, 1e-12);
}
