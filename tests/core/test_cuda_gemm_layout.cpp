// How cuda::gemm hands strided row-major operands to column-major cuBLAS (cuda/gemm_layout.h),
// checked on the CPU: the chosen cuBLAS arguments are run through a plain loop that follows
// cuBLAS's documented strided batched GEMM, and the result must equal the CPU product, for
// contiguous, transposed, sliced, expanded and interleaved-batch operands. It also checks
// which layouts are passed without a copy and that cuBLAS's leading-dimension rules hold.
// Then cuda/gemm_epilogue.h: the TF32 choice, when addmm's bias goes through cuBLASLt's
// epilogue, and that the cuBLASLt matrices and bias it describes compute addmm (a loop that
// follows cublasLtMatmul with CUBLASLT_EPILOGUE_BIAS); alignments and workspace sizes.
// Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "ember/cuda/gemm_epilogue.h"
#include "ember/cuda/gemm_layout.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::cuda;

namespace {

/// cuBLAS's cublasGemmStridedBatchedEx as its documentation defines it (column-major; alpha 1,
/// beta 0), in double: C[i + j ldc] = sum_p op(A)(i, p) op(B)(p, j) per batch item.
void column_major_reference(const ColumnMajorGemm& g, const double* first, const double* second, double* c,
                            int64_t batch) {
  for (int64_t b = 0; b < batch; ++b) {
    const double* A = first + b * g.stride_first;
    const double* B = second + b * g.stride_second;
    double* C = c + b * g.stride_c;
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          const double a = g.trans_first ? A[p + i * g.ld_first] : A[i + p * g.ld_first];
          const double bv = g.trans_second ? B[j + p * g.ld_second] : B[p + j * g.ld_second];
          sum += a * bv;
        }
        C[i + j * g.ldc] = sum;
      }
  }
}

BlasMatrix layout_of(const Tensor& x) {
  const int64_t d = x.dim();
  return blas_matrix(x.size(d - 2), x.size(d - 1), x.stride(d - 2), x.stride(d - 1),
                     d == 3 ? x.stride(0) : 0);
}

/// cuBLAS's argument checks (CUBLAS_STATUS_INVALID_VALUE otherwise): every leading dimension
/// at least 1 and at least the number of rows of the column-major matrix it strides over.
void check_blas_rules(const ColumnMajorGemm& g) {
  CHECK(g.ld_first >= std::max<int64_t>(1, g.trans_first ? g.k : g.m));
  CHECK(g.ld_second >= std::max<int64_t>(1, g.trans_second ? g.n : g.k));
  CHECK(g.ldc >= std::max<int64_t>(1, g.m));
}

/// a @ b (2-D or 3-D, float64) computed the way cuda::gemm does, through the reference loop;
/// reports through `copies` how many operands had to be made contiguous.
Tensor product_through_blas(const Tensor& a, const Tensor& b, int* copies = nullptr) {
  const int64_t d = a.dim(), batch = d == 3 ? a.size(0) : 1;
  const int64_t m = a.size(d - 2), k = a.size(d - 1), n = b.size(d - 1);
  Tensor A = a, B = b;
  BlasMatrix la = layout_of(A), lb = layout_of(B);
  int copied = 0;
  if (la.copy) {
    A = A.contiguous();
    la = layout_of(A);
    ++copied;
  }
  if (lb.copy) {
    B = B.contiguous();
    lb = layout_of(B);
    ++copied;
  }
  REQUIRE(!la.copy);
  REQUIRE(!lb.copy);
  if (copies) *copies = copied;
  const ColumnMajorGemm g = column_major_gemm(m, n, k, la, lb);
  check_blas_rules(g);
  Tensor out = d == 3 ? empty({batch, m, n}, kDouble) : empty({m, n}, kDouble);
  column_major_reference(g, B.data_ptr<double>(), A.data_ptr<double>(), out.data_ptr<double>(), batch);
  return out;
}

void check_product(const Tensor& a, const Tensor& b, int expected_copies) {
  int copies = -1;
  Tensor got = product_through_blas(a, b, &copies);
  Tensor want = a.dim() == 3 ? a.bmm(b) : a.mm(b);
  CHECK(copies == expected_copies);
  CHECK(allclose(got, want, 1e-12, 1e-12));
}

Tensor seeded(IntArrayRef shape, uint64_t seed) {
  ember::manual_seed(seed);
  return randn(shape, kDouble);
}

}  // namespace

TEST_CASE("cuda gemm layout: contiguous and transposed operands go to cuBLAS without copies") {
  Tensor a = seeded({3, 4}, 1), b = seeded({4, 5}, 2);
  check_product(a, b, 0);
  check_product(seeded({4, 3}, 3).t(), b, 0);                      // A column-major
  check_product(a, seeded({5, 4}, 4).t(), 0);                      // B column-major
  check_product(seeded({4, 3}, 5).t(), seeded({5, 4}, 6).t(), 0);  // both
  CHECK(!layout_of(a).col_major);
  CHECK(layout_of(a.t()).col_major);
}

TEST_CASE("cuda gemm layout: padded rows keep their leading dimension, column steps are copied") {
  Tensor big = seeded({8, 10}, 7);
  Tensor rows = big.slice(0, 0, 8, 2).slice(1, 0, 4);  // 4 x 4, rows 20 apart
  CHECK(layout_of(rows).ld == 20);
  check_product(rows, seeded({4, 3}, 8), 0);
  check_product(seeded({2, 8}, 9), big.slice(1, 1, 7), 0);  // as B: 8 x 6 with ld 10
  Tensor steps = big.slice(1, 0, 10, 2);                    // 8 x 5, columns 2 apart
  CHECK(layout_of(steps).copy);
  check_product(steps, seeded({5, 3}, 10), 1);
  check_product(seeded({3, 8}, 11), steps, 1);
}

TEST_CASE("cuda gemm layout: vectors as mv and dot see them, with any stride") {
  Tensor m = seeded({5, 6}, 12);
  Tensor v = seeded({18}, 13).slice(0, 0, 18, 3);    // 6 elements, stride 3
  check_product(m, v.unsqueeze(1), 0);               // mv: a 6 x 1 column
  check_product(v.unsqueeze(0), v.unsqueeze(1), 0);  // dot: 1 x 6 times 6 x 1
  check_product(m.t(), seeded({5}, 14).unsqueeze(1), 0);
  Tensor expanded = seeded({1}, 15).expand({6});  // stride 0: a column no layout can read
  CHECK(layout_of(expanded.unsqueeze(1)).copy);
  check_product(m, expanded.unsqueeze(1), 1);
  // A 1 x 1 product, and stride 0 along a dim of size 1 (it is never stepped over).
  check_product(seeded({1, 1}, 16), seeded({1, 1}, 17), 0);
  check_product(seeded({4}, 18).as_strided({1, 4}, {0, 1}), seeded({4}, 19).as_strided({4, 1}, {1, 0}), 0);
}

TEST_CASE("cuda gemm layout: batches, including broadcast and interleaved ones") {
  Tensor a = seeded({3, 4, 5}, 20), b = seeded({3, 5, 2}, 21);
  check_product(a, b, 0);
  check_product(seeded({3, 5, 4}, 22).transpose(1, 2), seeded({3, 2, 5}, 23).transpose(1, 2), 0);
  check_product(seeded({1, 4, 5}, 24).expand({3, 4, 5}), b, 0);  // batch stride 0
  CHECK(layout_of(seeded({1, 4, 5}, 24).expand({3, 4, 5})).batch_stride == 0);
  // Batch items interleaved: (m, batch, k) memory read as (batch, m, k), ld = batch * k.
  Tensor interleaved = seeded({4, 3, 5}, 25).permute({1, 0, 2});
  CHECK(layout_of(interleaved).ld == 15);
  check_product(interleaved, b, 0);
  // The batch innermost in memory: no matrix stride is 1, so it is copied.
  Tensor batch_inner = seeded({4, 5, 3}, 26).permute({2, 0, 1});
  check_product(batch_inner, b, 1);
}

// ---- cuda/gemm_epilogue.h ---------------------------------------------------------------------

TEST_CASE("cuda gemm compute: TF32 for float32 only, and only when allowed") {
  CHECK(gemm_compute(kFloat, false) == GemmCompute::kFloat32);
  CHECK(gemm_compute(kFloat, true) == GemmCompute::kFloat32FastTF32);
  for (bool tf32 : {false, true}) {
    CHECK(gemm_compute(kHalf, tf32) == GemmCompute::kFloat32);
    CHECK(gemm_compute(kBFloat16, tf32) == GemmCompute::kFloat32);
    CHECK(gemm_compute(kDouble, tf32) == GemmCompute::kFloat64);
  }
}

TEST_CASE("cuda gemm bias epilogue: when addmm fuses its bias") {
  const std::vector<int64_t> row{5}, row2d{1, 5}, full{4, 5}, column{4, 1}, one{1}, scalar{};
  // linear's case: addmm(bias [n], x [m, k], w.t() [k, n]), beta = alpha = 1.
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) CHECK(bias_epilogue_applies(t, row, 4, 5, 3, 1, 1));
  CHECK(bias_epilogue_applies(kFloat, row2d, 4, 5, 3, 1, 1));  // [1, n]: the same row
  CHECK(bias_epilogue_applies(kFloat, row, 4, 5, 3, 1, -2.5));  // any alpha but 0
  // float64 keeps the cuBLAS path.
  CHECK(!bias_epilogue_applies(kDouble, row, 4, 5, 3, 1, 1));
  // The epilogue adds the bias unscaled: beta must be 1.
  CHECK(!bias_epilogue_applies(kFloat, row, 4, 5, 3, 0.5, 1));
  CHECK(!bias_epilogue_applies(kFloat, row, 4, 5, 3, 0, 1));
  // Nothing to multiply: out = beta * self, no product.
  CHECK(!bias_epilogue_applies(kFloat, row, 4, 5, 3, 1, 0));
  CHECK(!bias_epilogue_applies(kFloat, row, 4, 5, 0, 1, 1));
  // Not a bias row: a full matrix, a column, a scalar broadcast over everything, a wrong length.
  CHECK(!bias_epilogue_applies(kFloat, full, 4, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, column, 4, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, one, 4, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, scalar, 4, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, std::vector<int64_t>{6}, 4, 5, 3, 1, 1));
  // A dimension of 1 (one input row, one output, k == 1), or one past cuBLASLt's bound.
  CHECK(!bias_epilogue_applies(kFloat, row, 1, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, one, 4, 1, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, row, 4, 5, 1, 1, 1));
  CHECK(bias_epilogue_applies(kFloat, row, kLtMaxDim - 1, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, row, kLtMaxDim, 5, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, std::vector<int64_t>{kLtMaxDim}, 4, kLtMaxDim, 3, 1, 1));
  CHECK(!bias_epilogue_applies(kFloat, row, 4, 5, kLtMaxDim, 1, 1));
}

namespace {

/// cublasLtMatmul with CUBLASLT_EPILOGUE_BIAS and beta 0 as its documentation defines it,
/// reading every matrix through its LtMatrix (column-major, element (r, c) at r + c * ld, and
/// CHECKing that r and c stay inside the described rows and cols):
/// D(i, j) = alpha * sum_p op(first)(i, p) op(second)(p, j) + bias[i].
void lt_bias_reference(const ColumnMajorGemm& g, const LtLayouts& l, double alpha, const double* first,
                       const double* second, const double* bias, double* d) {
  auto at = [](const LtMatrix& m, const double* p, int64_t r, int64_t c) {
    CHECK((r >= 0 && r < m.rows && c >= 0 && c < m.cols));
    return p[r + c * m.ld];
  };
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double x = g.trans_first ? at(l.first, first, p, i) : at(l.first, first, i, p);
        const double y = g.trans_second ? at(l.second, second, j, p) : at(l.second, second, p, j);
        sum += x * y;
      }
      CHECK((i < l.out.rows && j < l.out.cols));
      d[i + j * l.out.ld] = alpha * sum + bias[i];
    }
}

/// addmm(bias, a, b, 1, alpha) computed the way cuda::try_gemm_bias asks cuBLASLt for it.
Tensor addmm_through_lt(const Tensor& bias, const Tensor& a, const Tensor& b, double alpha) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  REQUIRE(bias_epilogue_applies(kFloat, bias.sizes(), m, n, k, 1, alpha));
  Tensor A = layout_of(a).copy ? a.contiguous() : a, B = layout_of(b).copy ? b.contiguous() : b;
  const ColumnMajorGemm g = column_major_gemm(m, n, k, layout_of(A), layout_of(B));
  const LtLayouts l = lt_layouts(g);
  // cuBLASLt's rules: ld at least the rows of the column-major matrix; the bias has one value
  // per row of D; D is ember's contiguous m x n output.
  CHECK(l.first.ld >= std::max<int64_t>(1, l.first.rows));
  CHECK(l.second.ld >= std::max<int64_t>(1, l.second.rows));
  CHECK(l.out.ld >= l.out.rows);
  CHECK(l.out.rows == n);
  CHECK(l.out.cols == m);
  Tensor bias_vector = bias.reshape({n}).contiguous();
  Tensor out = empty({m, n}, kDouble);
  lt_bias_reference(g, l, alpha, B.data_ptr<double>(), A.data_ptr<double>(), bias_vector.data_ptr<double>(),
                    out.data_ptr<double>());
  return out;
}

}  // namespace

TEST_CASE("cuda gemm bias epilogue: the cuBLASLt product it describes is addmm") {
  Tensor x = seeded({6, 4}, 30), w = seeded({3, 4}, 31), bias = seeded({3}, 32);
  auto check_addmm = [](const Tensor& self, const Tensor& a, const Tensor& b, double alpha) {
    CHECK(allclose(addmm_through_lt(self, a, b, alpha), addmm(self, a, b, 1, alpha), 1e-12, 1e-12));
  };
  check_addmm(bias, x, w.t(), 1);                         // linear: the weight transposed
  check_addmm(bias, x, seeded({4, 3}, 33), 1);            // a row-major weight
  check_addmm(bias, seeded({4, 6}, 34).t(), w.t(), 1);    // both transposed
  check_addmm(bias.unsqueeze(0), x, w.t(), -0.5);         // a [1, n] bias, another alpha
  check_addmm(seeded({9}, 35).slice(0, 0, 9, 3), x, w.t(), 1);  // a strided bias (made contiguous)
  check_addmm(bias, seeded({6, 10}, 36).slice(1, 2, 6), w.t(), 1);  // padded rows (ld 10)
  check_addmm(bias, seeded({6, 8}, 37).slice(1, 0, 8, 2), w.t(), 1);  // column steps: copied
}

TEST_CASE("cuda gemm bias epilogue: alignments and workspace") {
  CHECK(lt_alignment(0, 4096) == 256);
  CHECK(lt_alignment(1 << 20, 256) == 256);
  CHECK(lt_alignment(256 + 16, 4096) == 16);  // a slice starting 16 bytes into a buffer
  CHECK(lt_alignment(512, 7 * 2) == 2);       // float16 rows of 7 elements
  CHECK(lt_alignment(512, 12) == 4);          // float32 rows of 3
  CHECK(lt_alignment(6, 4096) == 2);
  CHECK(lt_alignment(3, 4096) == 1);
  CHECK(lt_workspace_bytes(9) == size_t{32} << 20);
  CHECK(lt_workspace_bytes(10) == size_t{32} << 20);
  CHECK(lt_workspace_bytes(8) == size_t{4} << 20);
}
