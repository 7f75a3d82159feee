// How cuda::gemm hands strided row-major operands to column-major cuBLAS (cuda/gemm_layout.h),
// checked on the CPU: the chosen cuBLAS arguments are run through a plain loop that follows
// cuBLAS's documented strided batched GEMM, and the result must equal the CPU product, for
// contiguous, transposed, sliced, expanded and interleaved-batch operands. It also checks
// which layouts are passed without a copy and that cuBLAS's leading-dimension rules hold.
// Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

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
