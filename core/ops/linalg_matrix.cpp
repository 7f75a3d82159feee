// torch.linalg's matrix functions over LAPACK (core/cpu/lapack.h). Each factorizing op is one
// Op: its CPU forward hands LAPACK column-major copies of the matrices (the row-major storage
// of A^T is the column-major storage of A), one matrix at a time; its backward is PyTorch's
// formula in public ops. Results computed column-major come back as views through mT().
#include "ember/core/ops/linalg_matrix.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/cpu/lapack.h"
#include "ember/core/error.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/linalg.h"
#include "ember/core/ops/minmax.h"
#include "ember/core/ops/norm.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/views.h"
#include "ember/core/shape.h"

namespace ember::linalg {
namespace {

// ---- shared checks and plumbing ----------------------------------------------------------------

/// PyTorch's checks of a square-matrix batch argument.
void check_square(const Tensor& A, const char* fn) {
  EMBER_CHECK(A.dim() >= 2, fn, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(A.size(-1) == A.size(-2), fn, ": A must be batches of square matrices, but they are ", A.size(-2),
              " by ", A.size(-1), " matrices");
  EMBER_CHECK(A.dtype() == kFloat || A.dtype() == kDouble, fn,
              ": Expected a floating point or complex tensor as input. Got ", scalar_type_name(A.dtype()));
}

/// "(Batch element 3): " in front of a failure message for a batched input, as PyTorch.
std::string batch_prefix(const Tensor& A, int64_t b) {
  return A.dim() > 2 ? "(Batch element " + std::to_string(b) + "): " : std::string();
}

/// Each matrix of A (..., m, n) stored column-major, one after the other, in a fresh buffer
/// LAPACK may overwrite (contiguous() would hand back A's own storage when A is a transpose).
Tensor column_major(const Tensor& A) {
  Tensor t = A.detach().mT();
  Tensor out = empty(t.sizes(), TensorOptions().dtype(t.dtype()).device(t.device()));
  out.copy_(t);
  return out;
}

int64_t batch_count(const Tensor& A) {
  const int64_t per = A.size(-1) * A.size(-2);
  return per == 0 ? 0 : A.numel() / per;
}

/// Calls f.template operator()<T>() for A's dtype (float32 or float64, checked before).
template <class F>
void dispatch_float(ScalarType dtype, F&& f) {
  if (dtype == kFloat) f.template operator()<float>();
  else f.template operator()<double>();
}

/// A factorizing op: LAPACK on the host, for CUDA tensors too (inputs copied to the host and
/// outputs back: correct, not fast, until cuSOLVER is wired).
class LapackOp : public Op {
 public:
  void cuda(const TensorList& in, TensorList& out) const override {
    TensorList host_in, host_out;
    for (const Tensor& t : in) host_in.push_back(t.to(kCPU));
    for (const Tensor& t : out) host_out.push_back(empty(t.sizes(), TensorOptions().dtype(t.dtype())));
    cpu(host_in, host_out);
    for (size_t i = 0; i < out.size(); ++i) out[i].copy_(host_out[i]);
  }
};

/// I of A's matrix size, dtype and device, broadcastable against A's batch.
Tensor identity_like(const Tensor& A) {
  return eye(A.size(-1), TensorOptions().dtype(A.dtype()).device(A.device()));
}

// ---- det and slogdet: LU, the product of U's diagonal and the pivots' sign ---------------------

/// LU-factors each matrix of A in a column-major copy `a` (returned) and calls
/// f(batch, factors, pivots, info) for each: the loop det, slogdet, inv and solve share.
template <class T, class F>
Tensor each_lu(const Tensor& A, F&& f) {
  const int n = static_cast<int>(A.size(-1));
  Tensor a = column_major(A);
  std::vector<int> ipiv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < batch_count(A); ++b) {
    T* m = a.data_ptr<T>() + b * n * n;
    f(b, m, ipiv.data(), cpu::lapack::getrf<T>(n, m, ipiv.data()));
  }
  return a;
}

/// (sign, log|det|) of one matrix from its LU factors: each row swap and each negative pivot
/// flips the sign; a zero pivot (singular) makes it 0 and log|det| -inf.
template <class T>
std::pair<double, double> lu_slogdet(int n, const T* lu, const int* ipiv) {
  double sign = 1, logabs = 0;
  for (int i = 0; i < n; ++i) {
    const double u = lu[i * n + i];
    if (ipiv[i] != i + 1) sign = -sign;
    if (u < 0) sign = -sign;
    if (u == 0) sign = 0;
    logabs += std::log(std::fabs(u));
  }
  return {sign, logabs};
}

// det: d det(A) = det(A) tr(A^-1 dA), so dA = g det(A) A^-T.
struct Det final : LapackOp {
  const char* name() const override { return "linalg_det"; }
  Save saves() const override { return Save::kBoth; }
  void cpu(const TensorList& in, TensorList& out) const override {
    dispatch_float(in[0].dtype(), [&]<class T>() {
      // The product of the pivots, not exp(log|det|): exact where the product is (integers).
      const int n = static_cast<int>(in[0].size(-1));
      each_lu<T>(in[0], [&](int64_t b, const T* lu, const int* ipiv, int) {
        T d = 1;
        for (int i = 0; i < n; ++i) d *= ipiv[i] != i + 1 ? -lu[i * n + i] : lu[i * n + i];
        out[0].data_ptr<T>()[b] = d;
      });
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor scale = (g[0] * s.output(0)).unsqueeze(-1).unsqueeze(-1);
    return {scale * inv(s.input(0)).mT()};
  }
};

// slogdet: d log|det A| = tr(A^-1 dA); the sign is piecewise constant.
struct Slogdet final : LapackOp {
  const char* name() const override { return "linalg_slogdet"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    dispatch_float(in[0].dtype(), [&]<class T>() {
      const int n = static_cast<int>(in[0].size(-1));
      each_lu<T>(in[0], [&](int64_t b, const T* lu, const int* ipiv, int) {
        auto [sign, logabs] = lu_slogdet(n, lu, ipiv);
        out[0].data_ptr<T>()[b] = static_cast<T>(sign);
        out[1].data_ptr<T>()[b] = static_cast<T>(logabs);
      });
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    return {g[1].unsqueeze(-1).unsqueeze(-1) * inv(s.input(0)).mT()};
  }
};

// ---- inv and solve: LU, then LAPACK's inverse or triangular solves -----------------------------

// inv: d(A^-1) = -A^-1 dA A^-1, so dA = -X^T g X^T with X = A^-1.
struct Inv final : LapackOp {
  const char* name() const override { return "linalg_inv"; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const TensorList& in, TensorList& out) const override {
    dispatch_float(in[0].dtype(), [&]<class T>() {
      const int n = static_cast<int>(in[0].size(-1));
      Tensor a = each_lu<T>(in[0], [&](int64_t b, T* lu, const int* ipiv, int info) {
        EMBER_CHECK(info == 0, "linalg.inv: ", batch_prefix(in[0], b), "The diagonal element ", info,
                    " is zero, the inversion could not be completed because the input matrix is singular.");
        cpu::lapack::getri<T>(n, lu, ipiv);
      });
      out[0].copy_(a.mT());
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor xt = s.output(0).mT();
    return {-matmul(matmul(xt, g[0]), xt)};
  }
};

// solve (left, matrix B of A's batch shape): X = A^-1 B; dB = A^-T g, dA = -dB X^T.
struct Solve final : LapackOp {
  const char* name() const override { return "linalg_solve"; }
  Save saves() const override { return Save::kBoth; }
  void cpu(const TensorList& in, TensorList& out) const override {
    dispatch_float(in[0].dtype(), [&]<class T>() {
      const int n = static_cast<int>(in[0].size(-1)), k = static_cast<int>(in[1].size(-1));
      Tensor x = column_major(in[1]);
      each_lu<T>(in[0], [&](int64_t b, const T* lu, const int* ipiv, int info) {
        EMBER_CHECK(info == 0, "torch.linalg.solve: ", batch_prefix(in[0], b),
                    "The solver failed because the input matrix is singular.");
        if (k > 0) cpu::lapack::getrs<T>('N', n, k, lu, ipiv, x.data_ptr<T>() + b * n * k);
      });
      out[0].copy_(x.mT());
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gb = solve(s.input(0).mT(), g[0]);
    return {-matmul(gb, s.output(0).mT()), gb};
  }
};

// ---- cholesky and eigh --------------------------------------------------------------------------

// cholesky: with A = L L^T, dA = L^-T Phi(L^T gL) L^-1, symmetrized, where Phi keeps the lower
// triangle and halves the diagonal (PyTorch's cholesky_backward).
struct Cholesky final : LapackOp {
  const char* name() const override { return "linalg_cholesky"; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const TensorList& in, TensorList& out) const override {
    dispatch_float(in[0].dtype(), [&]<class T>() {
      const int n = static_cast<int>(in[0].size(-1));
      Tensor a = column_major(in[0]);
      for (int64_t b = 0; b < batch_count(in[0]); ++b) {
        int info = cpu::lapack::potrf<T>('L', n, a.data_ptr<T>() + b * n * n);
        EMBER_CHECK(info == 0, "linalg.cholesky: ", batch_prefix(in[0], b),
                    "The factorization could not be completed because the input is not positive-definite (the "
                    "leading minor of order ", info, " is not positive-definite).");
      }
      out[0].copy_(tril(a.mT()));  // potrf leaves the upper triangle as it was
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor L = s.output(0);
    Tensor phi = tril(matmul(L.mT(), g[0]));
    phi = phi - 0.5 * phi * identity_like(L);
    // L^-T phi L^-1 = solve(L^T, solve(L^T, phi^T)^T)
    Tensor ga = solve(L.mT(), solve(L.mT(), phi.mT()).mT());
    return {0.5 * (ga + ga.mT())};
  }
};

// eigh: with A = V diag(w) V^T, dA = V (diag(gw) + (V^T gV) / E) V^T, E_ij = w_j - w_i off the
// diagonal (PyTorch's linalg_eig_backward for Hermitian input).
struct Eigh final : LapackOp {
  bool upper;
  explicit Eigh(bool u) : upper(u) {}
  const char* name() const override { return "linalg_eigh"; }
  Save saves() const override { return Save::kOutputs; }
  void cpu(const TensorList& in, TensorList& out) const override {
    dispatch_float(in[0].dtype(), [&]<class T>() {
      const int n = static_cast<int>(in[0].size(-1));
      Tensor a = column_major(in[0]);
      for (int64_t b = 0; b < batch_count(in[0]); ++b) {
        int info = cpu::lapack::syevd<T>('V', upper ? 'U' : 'L', n, a.data_ptr<T>() + b * n * n,
                                         out[0].data_ptr<T>() + b * n);
        EMBER_CHECK(info == 0, "linalg.eigh: ", batch_prefix(in[0], b),
                    "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                    "repeated eigenvalues (error code: ", info, ").");
      }
      out[1].copy_(a.mT());
    });
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor w = s.output(0), V = s.output(1);
    Tensor I = identity_like(V);
    Tensor inner = zeros_like(V);
    if (g[1].defined()) {
      Tensor E = w.unsqueeze(-2) - w.unsqueeze(-1);  // E_ij = w_j - w_i
      inner = matmul(V.mT(), g[1]) / (E + I) * (1 - I);
    }
    if (g[0].defined()) inner = inner + g[0].unsqueeze(-1) * I;
    return {matmul(matmul(V, inner), V.mT())};
  }
};

/// "L" or "U" (either case), as PyTorch accepts; anything else raises its error.
bool upper_from(std::string_view uplo) {
  EMBER_CHECK(uplo.size() == 1 && (uplo[0] == 'L' || uplo[0] == 'l' || uplo[0] == 'U' || uplo[0] == 'u'),
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  return uplo[0] == 'U' || uplo[0] == 'u';
}

DimVector batch_sizes_of(const Tensor& A) {
  return DimVector(A.sizes().slice(0, static_cast<size_t>(A.dim() - 2)));
}

}  // namespace

Tensor det(const Tensor& A) {
  check_square(A, "linalg.det");
  return run_op(Det{}, {A}, OutSpec{batch_sizes_of(A), A.dtype()});
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  check_square(A, "linalg.slogdet");
  const DimVector batch = batch_sizes_of(A);
  TensorList out = run_op(Slogdet{}, {A}, {OutSpec{batch, A.dtype()}, OutSpec{batch, A.dtype()}});
  return {out[0], out[1]};
}

Tensor inv(const Tensor& A) {
  check_square(A, "linalg.inv");
  return run_op(Inv{}, {A}, OutSpec{DimVector(A.sizes()), A.dtype()});
}

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  check_square(A, "linalg.solve");
  EMBER_CHECK(B.dtype() == A.dtype(), "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              scalar_type_name(A.dtype()), " and B of type ", scalar_type_name(B.dtype()), " instead");
  if (!left) return solve(A.mT(), B.mT(), true).mT();
  // PyTorch's rule: B is a batch of vectors when it is 1-d or has A's shape without the last dim.
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == A.sizes().slice(0, A.dim() - 1));
  Tensor b = vector ? B.unsqueeze(-1) : B;
  EMBER_CHECK(b.size(-2) == A.size(-1), "linalg.solve: Incompatible shapes of A and B for the equation AX = B (",
              A.size(-2), "x", A.size(-1), " and ", b.size(-2), "x", b.size(-1), ")");
  DimVector batch = broadcast_shapes(A.sizes().slice(0, A.dim() - 2), b.sizes().slice(0, b.dim() - 2));
  DimVector a_shape = batch, b_shape = batch;
  a_shape.push_back(A.size(-2));
  a_shape.push_back(A.size(-1));
  b_shape.push_back(b.size(-2));
  b_shape.push_back(b.size(-1));
  Tensor x = run_op(Solve{}, {A.expand(a_shape), b.expand(b_shape)}, OutSpec{b_shape, A.dtype()});
  return vector ? x.squeeze(-1) : x;
}

Tensor cholesky(const Tensor& A, bool upper) {
  check_square(A, "linalg.cholesky");
  Tensor L = run_op(Cholesky{}, {A}, OutSpec{DimVector(A.sizes()), A.dtype()});
  return upper ? L.mT() : L;
}

std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo) {
  check_square(A, "linalg.eigh");
  const bool upper = upper_from(uplo);
  DimVector w_shape = batch_sizes_of(A);
  w_shape.push_back(A.size(-1));
  TensorList out = run_op(Eigh{upper}, {A}, {OutSpec{w_shape, A.dtype()}, OutSpec{DimVector(A.sizes()), A.dtype()}});
  return {out[0], out[1]};
}

Tensor eigvalsh(const Tensor& A, std::string_view uplo) { return std::get<0>(eigh(A, uplo)); }

Tensor matrix_power(const Tensor& A, int64_t n) {
  EMBER_CHECK(A.dim() >= 2, "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(A.size(-1) == A.size(-2), "linalg.matrix_power: A must be batches of square matrices, but they are ",
              A.size(-2), " by ", A.size(-1), " matrices");
  if (n == 0) return identity_like(A).expand(A.sizes()).clone();
  Tensor base = n < 0 ? inv(A) : A;
  uint64_t e = n < 0 ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  Tensor result;
  while (e > 0) {  // square-and-multiply, low bit first
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    e >>= 1;
    if (e > 0) base = matmul(base, base);
  }
  return result;
}

Tensor vector_norm(const Tensor& x, const Scalar& ord, std::optional<std::vector<int64_t>> dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_CHECK(x.is_floating_point(), "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
              scalar_type_name(x.dtype()));
  Tensor t = dtype ? x.to(*dtype) : x;
  return norm(t, ord, dim ? IntArrayRef(*dim) : IntArrayRef(), keepdim);  // no dims: all of them
}

Tensor matrix_norm(const Tensor& A, const Scalar& ord, std::vector<int64_t> dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_CHECK(A.dim() >= 2, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(dim.size() == 2, "linalg.matrix_norm: dim must be a 2-tuple. Got ", dim.size(), " dims");
  const double o = ord.toDouble();
  EMBER_CHECK(std::fabs(o) == 1 || std::isinf(o) || std::fabs(o) == 2,
              "linalg.matrix_norm: Order ", o, " not supported.");
  EMBER_CHECK(std::fabs(o) != 2, "linalg.matrix_norm: ord=", o,
              " needs the singular values (linalg.svd), which ember does not compute yet");
  Tensor t = (dtype ? A.to(*dtype) : A).abs();
  // 1 / -1: sum over rows (dim[0]) then max/min over columns; inf / -inf: the other way round.
  const int64_t d0 = dim[0] < 0 ? dim[0] + A.dim() : dim[0], d1 = dim[1] < 0 ? dim[1] + A.dim() : dim[1];
  const bool columns = std::fabs(o) == 1;
  Tensor sums = sum(t, {columns ? d0 : d1}, /*keepdim=*/true);
  Tensor r = o > 0 ? amax(sums, {columns ? d1 : d0}, true) : amin(sums, {columns ? d1 : d0}, true);
  return keepdim ? r : r.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
}

Tensor matrix_norm(const Tensor& A, std::string_view ord, std::vector<int64_t> dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_CHECK(A.dim() >= 2, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(ord == "fro" || ord == "nuc", "linalg.matrix_norm: Order ", ord, " not supported.");
  EMBER_CHECK(ord == "fro", "linalg.matrix_norm: ord='nuc' needs the singular values (linalg.svd), which ember does "
              "not compute yet");
  return vector_norm(A, 2, dim, keepdim, dtype);
}

}  // namespace ember::linalg
