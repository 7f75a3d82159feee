// Matrix products: mm, bmm, addmm, baddbmm, mv and dot are op structs over the one GEMM of
// each device (core/cpu/gemm.h, cuda/gemm.h); matmul (all of PyTorch's shape rules) and
// outer are composed from them and from views, as PyTorch composes them, so their gradients
// come from those ops. einsum lives in einsum.cpp.
#include "ember/core/ops/linalg.h"

#include <algorithm>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/cpu/gemm.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/shape.h"
#include "ember/cuda/gemm.h"

namespace ember {
namespace {

/// The dtypes PyTorch multiplies: every one but bool on the CPU, only floating ones on CUDA
/// (cuBLAS has no integer GEMM). The message names the kernel that refused.
void check_product_dtype(const Tensor& t, const char* cpu_kernel, const char* cuda_kernel) {
  const ScalarType s = t.dtype();
  const bool ok = t.is_cuda() ? is_floating_point(s) : s != kBool;
  EMBER_CHECK(ok, "\"", t.is_cuda() ? cuda_kernel : cpu_kernel, "\" not implemented for '",
              scalar_type_name(s), "'");
}

/// The message PyTorch's typed data access gives when a second operand's dtype differs.
void check_scalar_type(const Tensor& expected, const Tensor& found) {
  EMBER_CHECK(expected.dtype() == found.dtype(), "expected scalar type ", scalar_type_name(expected.dtype()),
              " but found ", scalar_type_name(found.dtype()));
}

/// Checks that self broadcasts to `shape` (addmm/baddbmm's self), with expand's message.
void check_expandable(const Tensor& self, IntArrayRef shape) {
  NoGradGuard no_grad;
  (void)self.expand(shape);
}

Tensor scaled(const Tensor& t, const Scalar& s) { return s.toDouble() == 1.0 ? t : t * s; }

/// Whether m is a transposed dense matrix (column-major), as w.t() of a contiguous weight is.
bool column_major(const Tensor& m) {
  return m.dim() == 2 && m.size(0) > 1 && m.size(1) > 1 && m.stride(0) == 1 && m.stride(1) == m.size(0);
}

/// The gradients of C = A B, dA = G B^T and dB = A^T G, each laid out like its input: for a
/// column-major input (linear's w.t()) the gradient is computed transposed, as (B G^T)^T or
/// (G^T A)^T, so that the weight's own gradient comes out contiguous. Otherwise it is a
/// transposed view, and accumulating it into the contiguous .grad (an RNN adds one per time
/// step) is a strided add ~10x slower than a dense one. PyTorch's mm_mat1/mm_mat2_backward do
/// the same. Same values; only the order of each dot product's terms may differ.
Tensor mm_mat1_grad(const Tensor& g, const Tensor& a, const Tensor& b) {
  return column_major(a) ? b.mm(g.t()).t() : g.mm(b.t());
}
Tensor mm_mat2_grad(const Tensor& g, const Tensor& a, const Tensor& b) {
  return column_major(b) ? g.t().mm(a).t() : a.t().mm(g);
}

// mm: C = A B.  dA = G B^T, dB = A^T G (mm_mat1_grad, mm_mat2_grad).
struct Mm final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kLowerPrecisionBoth;
  const char* name() const override { return "mm"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    cpu::addmm_out(out[0], in[0], in[1], 0, 1);
  }
  void cuda(const TensorList& in, TensorList& out) const override { cuda::gemm(out[0], in[0], in[1], 0, 1); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    if (s.needs_grad(0)) ga = mm_mat1_grad(g[0], s.input(0), s.input(1));
    if (s.needs_grad(1)) gb = mm_mat2_grad(g[0], s.input(0), s.input(1));
    return {ga, gb};
  }
};

// bmm: C_i = A_i B_i per batch item.  dA_i = G_i B_i^T, dB_i = A_i^T G_i.
struct Bmm final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kLowerPrecisionBoth;
  const char* name() const override { return "bmm"; }
  void cpu(const TensorList& in, TensorList& out) const override {
    cpu::addmm_out(out[0], in[0], in[1], 0, 1);
  }
  void cuda(const TensorList& in, TensorList& out) const override { cuda::gemm(out[0], in[0], in[1], 0, 1); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    if (s.needs_grad(0)) ga = g[0].bmm(s.input(1).transpose(1, 2));
    if (s.needs_grad(1)) gb = s.input(0).transpose(1, 2).bmm(g[0]);
    return {ga, gb};
  }
};

/// out = beta * out + alpha * a @ b by the GEMM of out's device.
void gemm_into(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  if (out.is_cuda())
    cuda::gemm(out, a, b, beta, alpha);
  else
    cpu::addmm_out(out, a, b, beta, alpha);
}

/// out = beta * self (broadcast) + alpha * a @ b, for 2-D (addmm) or 3-D (baddbmm) a, b.
/// With beta == 0, self is not read (NaNs in it do not propagate), as in BLAS.
void add_product(const TensorList& in, Tensor& out, const Scalar& beta, const Scalar& alpha) {
  if (beta.toDouble() != 0.0) detail::copy_into(out, in[0]);
  gemm_into(out, in[1], in[2], beta, alpha);
}

/// Gradients of beta * self + alpha * product(a, b), where product is mm or bmm and `tr`
/// transposes a matrix (batch): dself = beta G (the engine sums it down to self's shape),
/// da = alpha G b^T, db = alpha a^T G.
template <class Product, class Transpose>
TensorList add_product_backward(const SavedTensors& s, const Tensor& g, const Scalar& beta,
                                const Scalar& alpha, Product product, Transpose tr) {
  Tensor gs, ga, gb;
  if (s.needs_grad(0)) gs = scaled(g, beta);
  if (s.needs_grad(1)) ga = scaled(product(g, tr(s.input(2))), alpha);
  if (s.needs_grad(2)) gb = scaled(product(tr(s.input(1)), g), alpha);
  return {gs, ga, gb};
}

// addmm: out = beta self + alpha A B (see add_product_backward for the gradients).
struct Addmm final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kLowerPrecisionBoth;
  Scalar beta, alpha;
  Addmm(Scalar b, Scalar a) : beta(b), alpha(a) {}
  const char* name() const override { return "addmm"; }
  void cpu(const TensorList& in, TensorList& out) const override { add_product(in, out[0], beta, alpha); }
  void cuda(const TensorList& in, TensorList& out) const override {
    // linear's bias row with beta == 1 is added in the product's epilogue (cuBLASLt), when it can be.
    if (cuda::try_gemm_bias(out[0], in[1], in[2], in[0], beta, alpha)) return;
    add_product(in, out[0], beta, alpha);
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gs, ga, gb;
    if (s.needs_grad(0)) gs = scaled(g[0], beta);
    if (s.needs_grad(1)) ga = scaled(mm_mat1_grad(g[0], s.input(1), s.input(2)), alpha);
    if (s.needs_grad(2)) gb = scaled(mm_mat2_grad(g[0], s.input(1), s.input(2)), alpha);
    return {gs, ga, gb};
  }
};

// baddbmm: out_i = beta self_i + alpha A_i B_i (gradients as addmm's, per batch item).
struct Baddbmm final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kLowerPrecisionBoth;
  Scalar beta, alpha;
  Baddbmm(Scalar b, Scalar a) : beta(b), alpha(a) {}
  const char* name() const override { return "baddbmm"; }
  void cpu(const TensorList& in, TensorList& out) const override { add_product(in, out[0], beta, alpha); }
  void cuda(const TensorList& in, TensorList& out) const override { add_product(in, out[0], beta, alpha); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    return add_product_backward(
        s, g[0], beta, alpha, [](const Tensor& x, const Tensor& y) { return x.bmm(y); },
        [](const Tensor& x) { return x.transpose(1, 2); });
  }
};

// mv: y = M v, the product with v as a one-column matrix.  dM = G v^T (outer), dv = M^T G.
struct Mv final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kLowerPrecisionCudaOnly;
  const char* name() const override { return "mv"; }
  void cpu(const TensorList& in, TensorList& out) const override { forward(in, out[0]); }
  void cuda(const TensorList& in, TensorList& out) const override { forward(in, out[0]); }
  static void forward(const TensorList& in, Tensor& out) {
    Tensor y = out.unsqueeze(1);
    gemm_into(y, in[0], in[1].unsqueeze(1), 0, 1);
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor gm, gv;
    if (s.needs_grad(0)) gm = outer(g[0], s.input(1));
    if (s.needs_grad(1)) gv = s.input(0).t().mv(g[0]);
    return {gm, gv};
  }
};

// dot: s = sum_i a_i b_i, a (1 x k) times b (k x 1).  da = g b, db = g a.
struct Dot final : Op {
  static constexpr AutocastPolicies kAutocast = autocast::kPromoteCudaOnly;
  const char* name() const override { return "dot"; }
  void cpu(const TensorList& in, TensorList& out) const override { forward(in, out[0]); }
  void cuda(const TensorList& in, TensorList& out) const override { forward(in, out[0]); }
  static void forward(const TensorList& in, Tensor& out) {
    Tensor s = out.view({1, 1});
    gemm_into(s, in[0].unsqueeze(0), in[1].unsqueeze(1), 0, 1);
  }
  TensorList backward(const SavedTensors& s, const TensorList& g) const override {
    Tensor ga, gb;
    if (s.needs_grad(0)) ga = g[0] * s.input(1);
    if (s.needs_grad(1)) gb = g[0] * s.input(0);
    return {ga, gb};
  }
};

void check_1d(const Tensor& t, const char* arg, const char* op) {
  EMBER_CHECK(t.dim() == 1, op, ": Expected 1-D argument ", arg, ", but got ", t.dim(), "-D");
}

/// Whether matmul may fold the batch of its larger (>= 3-D) operand into the rows of one
/// mm/mv (PyTorch's should_fold): always when the smaller operand needs a gradient (its
/// gradient is then one mm, not a batch of products summed afterwards), otherwise only when
/// the fold is a view and no transpose copy would follow.
bool should_fold(const Tensor& a, const Tensor& b) {
  const bool a_larger = a.dim() >= b.dim();
  const Tensor& big = a_larger ? a : b;
  const int64_t small_dim = a_larger ? b.dim() : a.dim();
  if (big.dim() < 3 || small_dim > 2) return false;
  if ((a_larger ? b : a).requires_grad() && GradMode::is_enabled()) return true;
  if (a.dim() == 2) return false;
  Tensor t1 = a_larger ? a : b.transpose(-2, -1);
  if (t1.numel() == 0) return true;
  for (int64_t i = 0; i < t1.dim() - 2; ++i)
    if (t1.stride(i) != t1.stride(i + 1) * t1.size(i + 1)) return false;
  return true;
}

/// matmul for an N-D (N >= 3) operand and a 1-D or 2-D one: fold the big operand's batch
/// into matrix rows, one mm or mv, unfold. b @ a for a 2-D a is computed as (a^T b^T)^T.
Tensor folded_matmul(const Tensor& a, const Tensor& b) {
  const bool transpose = b.dim() > a.dim();
  Tensor t1 = transpose ? b.transpose(-2, -1) : a;
  Tensor t2 = !transpose ? b : (a.dim() == 2 ? a.t() : a);
  DimVector out_shape(t1.sizes().slice(0, t1.dim() - 1));
  const int64_t rows = prod_of(out_shape);
  if (t2.dim() == 2) out_shape.push_back(t2.size(1));
  Tensor folded = t1.reshape({rows, t1.size(-1)});
  if (t2.dim() == 1) return folded.mv(t2).view(out_shape);
  Tensor out = folded.mm(t2).view(out_shape);
  return transpose ? out.transpose(-2, -1).contiguous() : out;
}

/// matmul in general: broadcast the batch dims, flatten them into one, bmm, unflatten.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  const int64_t n = da > 1 ? a.size(-2) : 1, m1 = a.size(-1);
  const int64_t m2 = db > 1 ? b.size(-2) : b.size(0), p = db > 1 ? b.size(-1) : 1;
  DimVector batch = broadcast_shapes(a.sizes().slice(0, std::max<int64_t>(da - 2, 0)),
                                     b.sizes().slice(0, std::max<int64_t>(db - 2, 0)));
  const int64_t nb = prod_of(batch);
  auto with = [&](std::initializer_list<int64_t> tail) {
    DimVector s = batch;
    for (int64_t v : tail) s.push_back(v);
    return s;
  };
  Tensor a3 = a.expand(with({n, m1})).reshape({nb, n, m1});
  // A 1-D b is one column for every batch item (broadcasting alone would make it a row).
  Tensor b3 = db == 1 ? b.expand(with({m2})).reshape({nb, m2}).unsqueeze(2)
                      : b.expand(with({m2, p})).reshape({nb, m2, p});
  Tensor out = a3.bmm(b3);
  DimVector out_shape = batch;
  if (da > 1) out_shape.push_back(n);
  if (db > 1) out_shape.push_back(p);
  return out.view(out_shape);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Mm::kAutocast, &mm, a, b);
  EMBER_CHECK(a.dim() == 2, "self must be a matrix");
  EMBER_CHECK(b.dim() == 2, "mat2 must be a matrix");
  EMBER_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
              a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  EMBER_CHECK(a.dtype() == b.dtype(),
              "expected m1 and m2 to have the same dtype, but got: ", type_meta_name(a.dtype()),
              " != ", type_meta_name(b.dtype()));
  check_product_dtype(a, "addmm_impl_cpu_", "addmm_cuda");
  return run_op(Mm{}, {a, b}, OutSpec{{a.size(0), b.size(1)}, a.dtype()});
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Bmm::kAutocast, &bmm, a, b);
  EMBER_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(b.size(0) == a.size(0) && b.size(1) == a.size(2),
              "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ", a.size(2),
              "] but got: [", b.size(0), ", ", b.size(1), "].");
  check_scalar_type(a, b);
  check_product_dtype(a, "bmm", "baddbmm_cuda");
  return run_op(Bmm{}, {a, b}, OutSpec{{a.size(0), a.size(1), b.size(2)}, a.dtype()});
}

Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Addmm::kAutocast, &addmm, self, m1, m2, beta, alpha);
  EMBER_CHECK(self.dtype() == m2.dtype(), "self and mat2 must have the same dtype, but got ",
              scalar_type_name(self.dtype()), " and ", scalar_type_name(m2.dtype()));
  EMBER_CHECK(m1.dtype() == m2.dtype(), "mat1 and mat2 must have the same dtype, but got ",
              scalar_type_name(m1.dtype()), " and ", scalar_type_name(m2.dtype()));
  EMBER_CHECK(m1.dim() == 2, "mat1 must be a matrix, got ", m1.dim(), "-D tensor");
  EMBER_CHECK(m2.dim() == 2, "mat2 must be a matrix, got ", m2.dim(), "-D tensor");
  EMBER_CHECK(m1.size(1) == m2.size(0), "mat1 and mat2 shapes cannot be multiplied (", m1.size(0), "x",
              m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
  DimVector shape{m1.size(0), m2.size(1)};
  check_expandable(self, shape);
  check_product_dtype(m1, "addmm_impl_cpu_", "addmm_cuda");
  return run_op(Addmm{beta, alpha}, {self, m1, m2}, OutSpec{shape, m1.dtype()});
}

Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Baddbmm::kAutocast, &baddbmm, self, b1, b2, beta, alpha);
  EMBER_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  DimVector shape{b1.size(0), b1.size(1), b2.size(2)};
  check_expandable(self, shape);
  EMBER_CHECK(self.dtype() == b1.dtype() && b1.dtype() == b2.dtype(),
              "Input dtypes must be the same, got: input ", type_meta_name(self.dtype()),
              ", batch1: ", type_meta_name(b1.dtype()), ", batch2: ", type_meta_name(b2.dtype()));
  EMBER_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
              "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ",
              b1.size(2), "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  check_product_dtype(b1, "baddbmm", "baddbmm_cuda");
  return run_op(Baddbmm{beta, alpha}, {self, b1, b2}, OutSpec{shape, b1.dtype()});
}

Tensor mv(const Tensor& m, const Tensor& v) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Mv::kAutocast, &mv, m, v);
  // PyTorch's mv is addmv with a 1-D self, whose rank the message reports first.
  EMBER_CHECK(m.dim() == 2 && v.dim() == 1, "vector + matrix @ vector expected, got 1, ", m.dim(), ", ",
              v.dim());
  EMBER_CHECK(m.size(1) == v.size(0), "size mismatch, got ", m.size(0), ", ", m.size(0), "x", m.size(1), ",",
              v.size(0));
  check_scalar_type(m, v);
  check_product_dtype(m, "addmv_impl_cpu", "addmv_impl_cuda");
  return run_op(Mv{}, {m, v}, OutSpec{{m.size(0)}, m.dtype()});
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(Dot::kAutocast, &dot, a, b);
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
              "D tensors");
  EMBER_CHECK(a.dtype() == b.dtype(), "dot : expected both vectors to have same dtype, but found ",
              scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
  EMBER_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
              b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
              " elements respectively");
  check_product_dtype(a, "dot", "dot");
  return run_op(Dot{}, {a, b}, OutSpec{{}, a.dtype()});
}

// outer: a column times a row, broadcast (with mul's type promotion, as PyTorch's).
Tensor outer(const Tensor& a, const Tensor& b) {
  check_1d(a, "self", "outer");
  check_1d(b, "vec2", "outer");
  return a.reshape({a.size(0), 1}) * b;
}

Tensor ger(const Tensor& a, const Tensor& b) { return outer(a, b); }

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(autocast::kLowerPrecisionBoth, &matmul, a, b);
  const int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK(da != 0 && db != 0, "both arguments to matmul need to be at least 1D, but they are ", da,
              "D and ", db, "D");
  if (da == 1 && db == 1) return a.dot(b);
  if (da == 2 && db == 1) return a.mv(b);
  if (da == 1 && db == 2) return a.unsqueeze(0).mm(b).squeeze(0);
  if (da == 2 && db == 2) return a.mm(b);
  if (should_fold(a, b)) return folded_matmul(a, b);
  return batched_matmul(a, b);
}

// ---- Tensor methods ------------------------------------------------------------------------
Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return ember::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return ember::bmm(*this, o); }
Tensor Tensor::mv(const Tensor& v) const { return ember::mv(*this, v); }
Tensor Tensor::dot(const Tensor& o) const { return ember::dot(*this, o); }
Tensor Tensor::outer(const Tensor& o) const { return ember::outer(*this, o); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addmm(*this, m1, m2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) const {
  return ember::baddbmm(*this, b1, b2, beta, alpha);
}

}  // namespace ember
