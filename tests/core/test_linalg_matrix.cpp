// torch.linalg's matrix functions (core/ops/linalg_matrix.cpp, LAPACK): values against PyTorch
// 2.9's on the same matrices (torch.linalg.det(A).item(), .inv(M).flatten().tolist(), ...),
// float64 gradcheck of each (symmetric inputs for eigh and cholesky made as X + X^T, since
// they read one triangle), batches, and PyTorch's error texts.
#include <cmath>
#include <limits>
#include <tuple>

#include "ember/core/ops/linalg.h"
#include "ember/core/ops/linalg_matrix.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::from_values;
using ember::test::rand_leaf;

namespace {
Tensor spd3() { return from_values({4, 1, 2, 1, 3, 0.5, 2, 0.5, 5}, {3, 3}); }
Tensor m2() { return from_values({1, 2, 3, 4}, {2, 2}); }
/// A well-conditioned random matrix: X + n I.
Tensor shifted(const Tensor& x) { return x + 3.0 * eye(x.size(-1), kDouble); }
/// A symmetric positive-definite matrix from any square x.
Tensor spd(const Tensor& x) { return matmul(x, x.mT()) + eye(x.size(-1), kDouble); }
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("test_linalg_matrix: det, slogdet, inv and solve match PyTorch") {
  check_close(linalg::det(spd3()), {44.0}, 1e-12);
  check_close(linalg::det(m2()), {-2.0}, 1e-12);
  auto [sign, logabs] = linalg::slogdet(from_values({0, 1, 1, 0}, {2, 2}));
  check_close(sign, {-1});
  check_close(logabs, {0});
  CHECK(linalg::det(from_values({1, 2, 2, 4}, {2, 2})).item<double>() == 0);
  check_close(linalg::inv(m2()), {-2, 1, 1.5, -0.5}, 1e-12);
  Tensor b = from_values({1, 2, 0, 1, 3, -1}, {3, 2});
  check_close(linalg::solve(spd3(), b), {-0.03977272727272729, 0.7045454545454546, -0.09090909090909091,
                                         0.18181818181818182, 0.625, -0.5}, 1e-12);
  // A vector right-hand side, and solving from the right: X A = B.
  check_close(linalg::solve(spd3(), b.select(1, 0)), linalg::solve(spd3(), b).select(1, 0), 1e-12);
  check_close(matmul(linalg::solve(spd3(), b.mT(), /*left=*/false), spd3()), b.mT(), 1e-12);
  CHECK(linalg::det(m2().to(kFloat)).dtype() == kFloat);
}

TEST_CASE("test_linalg_matrix: batches are factorized matrix by matrix, batch dims broadcast") {
  Tensor A = stack({spd3(), 2.0 * spd3()});
  check_close(linalg::det(A), {44.0, 352.0}, 1e-10);
  Tensor X = linalg::inv(A);
  check_close(matmul(A, X), eye(3, kDouble).expand({2, 3, 3}), 1e-12);
  Tensor b = from_values({1, 2, 3}, {3, 1});
  check_close(matmul(A, linalg::solve(A, b)), b.expand({2, 3, 1}), 1e-12);
}

TEST_CASE("test_linalg_matrix: cholesky, eigh and eigvalsh match PyTorch") {
  check_close(linalg::cholesky(spd3()), {2.0, 0.0, 0.0, 0.5, 1.6583123951777, 0.0, 1.0, 0.0, 2.0}, 1e-12);
  check_close(linalg::cholesky(spd3(), /*upper=*/true), linalg::cholesky(spd3()).mT());
  auto [w, V] = linalg::eigh(spd3());
  check_close(w, {2.0965216172967183, 3.072223952005075, 6.831254430698205}, 1e-12);
  check_close(matmul(matmul(V, w.unsqueeze(-1) * eye(3, kDouble)), V.mT()), spd3(), 1e-12);
  // Only the named triangle is read.
  Tensor lower_only = tril(spd3()) + 100.0 * triu(ones({3, 3}, kDouble), 1);
  check_close(linalg::eigvalsh(lower_only), w, 1e-12);
  check_close(linalg::eigvalsh(lower_only.mT(), "U"), w, 1e-12);
}

TEST_CASE("test_linalg_matrix: matrix_power, matrix_norm and vector_norm match PyTorch") {
  check_close(linalg::matrix_power(m2(), 3), {37, 54, 81, 118}, 1e-12);
  check_close(linalg::matrix_power(m2(), -2), {5.5, -2.5, -3.75, 1.75}, 1e-12);
  check_close(linalg::matrix_power(m2(), 0), {1, 0, 0, 1});
  Tensor C = from_values({1, -2, 3, -4, 5, -6}, {2, 3});
  check_close(linalg::matrix_norm(C, 1), {9});
  check_close(linalg::matrix_norm(C, -1), {5});
  check_close(linalg::matrix_norm(C, kInf), {15});
  check_close(linalg::matrix_norm(C, -kInf), {6});
  check_close(linalg::matrix_norm(C), {9.539392014169456});
  CHECK(linalg::matrix_norm(C, 1, {-2, -1}, /*keepdim=*/true).sizes().vec() == std::vector<int64_t>{1, 1});
  check_close(linalg::vector_norm(C, 1), {21});
  check_close(linalg::vector_norm(C, kInf, std::vector<int64_t>{1}), {3, 6});
}

TEST_CASE("test_linalg_matrix: gradients (float64 gradcheck)") {
  check_grad([](const TensorList& t) { return linalg::det(shifted(t[0])); }, {rand_leaf({2, 3, 3})});
  check_grad([](const TensorList& t) { return std::get<1>(linalg::slogdet(shifted(t[0]))); }, {rand_leaf({3, 3})});
  check_grad([](const TensorList& t) { return linalg::inv(shifted(t[0])); }, {rand_leaf({2, 3, 3})});
  check_grad([](const TensorList& t) { return linalg::solve(shifted(t[0]), t[1]); },
             {rand_leaf({2, 3, 3}), rand_leaf({3, 2})});
  check_grad([](const TensorList& t) { return linalg::solve(shifted(t[0]), t[1], false); },
             {rand_leaf({3, 3}), rand_leaf({2, 3})});
  check_grad([](const TensorList& t) { return linalg::cholesky(spd(t[0])); }, {rand_leaf({3, 3})});
  check_grad([](const TensorList& t) { return linalg::eigvalsh(t[0] + t[0].mT()); }, {rand_leaf({4, 4})});
  // Eigenvectors are defined up to sign: gradcheck a sign-invariant function of them.
  check_grad(
      [](const TensorList& t) {
        Tensor V = std::get<1>(linalg::eigh(t[0] + t[0].mT()));
        return V * V.select(-2, 0).unsqueeze(-2);
      },
      {rand_leaf({3, 3})});
  check_grad([](const TensorList& t) { return linalg::matrix_power(shifted(t[0]), -3); }, {rand_leaf({3, 3})});
  check_grad([](const TensorList& t) { return linalg::matrix_norm(t[0], 1); }, {rand_leaf({3, 4})});
}

TEST_CASE("test_linalg_matrix: errors use PyTorch's texts") {
  check_error([] { linalg::inv(from_values({1, 2, 2, 4}, {2, 2})); },
              "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input "
              "matrix is singular.");
  check_error([] { linalg::inv(stack({eye(2, kDouble), from_values({1, 2, 2, 4}, {2, 2})})); },
              "linalg.inv: (Batch element 1): The diagonal element 2 is zero");
  check_error([] { linalg::solve(from_values({1, 2, 2, 4}, {2, 2}), ones({2}, kDouble)); },
              "torch.linalg.solve: The solver failed because the input matrix is singular.");
  check_error([] { linalg::cholesky(from_values({1, 2, 2, 1}, {2, 2})); },
              "linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
              "(the leading minor of order 2 is not positive-definite).");
  check_error([] { linalg::det(ones({2, 3})); }, "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices");
  check_error([] { linalg::det(ones({3})); }, "linalg.det: The input tensor A must have at least 2 dimensions.");
  check_error([] { linalg::det(ones({2, 2}, kLong)); }, "linalg.det: Expected a floating point or complex tensor as input. Got Long");
  check_error([] { linalg::eigh(eye(2), "X"); }, "Expected UPLO argument to be 'L' or 'U', but got X");
  check_error([] { linalg::solve(eye(2), ones({3, 1})); },
              "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)");
  check_error([] { linalg::matrix_norm(eye(2), 3); }, "linalg.matrix_norm: Order 3 not supported.");
  check_error([] { linalg::vector_norm(ones({2}, kLong)); },
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long");
}
