// torch.linalg's matrix functions (libtorch's torch::linalg): det, slogdet, inv, solve,
// cholesky, eigh, eigvalsh, matrix_power, vector_norm, matrix_norm. Inputs are (..., n, n)
// batches of float32/float64 matrices. The factorizations are LAPACK's on the CPU
// (core/cpu/lapack.h); CUDA tensors are factorized on the host and the results copied back
// (cuSOLVER is not wired yet). Every function is differentiable with PyTorch's formulas,
// written with public ops so that double backward works too (linalg_matrix.cpp).
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember::linalg {

/// Determinant (0 for a singular matrix; its gradient there raises, as the inverse it needs
/// does not exist).
Tensor det(const Tensor& A);
/// (sign, log|det|): sign is -1, 0 or 1; log|det| is -inf for a singular matrix.
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
/// Inverse; a singular matrix raises ("... the input matrix is singular").
Tensor inv(const Tensor& A);
/// X with A X = B (left) or X A = B (!left). B is (..., n, k), or a vector batch (..., n) when
/// B.dim() == 1 or B's shape is A's without the last dim; batch dims broadcast.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
/// Lower-triangular L with A = L L^T (upper: U = L^T, A = U^T U), read from A's lower triangle.
Tensor cholesky(const Tensor& A, bool upper = false);
/// (eigenvalues ascending, eigenvectors as columns) of the symmetric A, read from triangle
/// uplo ("L" or "U").
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo = "L");
Tensor eigvalsh(const Tensor& A, std::string_view uplo = "L");
/// A^n by repeated squaring; n < 0 inverts first, n = 0 is the identity.
Tensor matrix_power(const Tensor& A, int64_t n);
/// The ord-norm over `dim` (all elements when unset) of x (optionally cast to dtype first).
Tensor vector_norm(const Tensor& x, const Scalar& ord = 2, std::optional<std::vector<int64_t>> dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
/// The matrix norm over the two dims `dim`: ord 1, -1 (max/min column abs sum), inf, -inf
/// (max/min row abs sum), or "fro". (Spectral norms 2, -2 and "nuc" need an SVD ember does
/// not have yet; they raise.)
Tensor matrix_norm(const Tensor& A, const Scalar& ord, std::vector<int64_t> dim = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
Tensor matrix_norm(const Tensor& A, std::string_view ord = "fro", std::vector<int64_t> dim = {-2, -1},
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);

}  // namespace ember::linalg
