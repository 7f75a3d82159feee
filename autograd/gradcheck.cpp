// Finite-difference gradient checks (torch.autograd.gradcheck). The numerical Jacobian
// perturbs one input element at a time by ±eps (central differences); the analytical one runs
// autograd::grad once per output element with a one-hot grad_output. Outputs that do not
// require grad must have a zero numerical Jacobian: a function that silently cuts the graph
// (a stray detach) fails instead of passing by checking nothing.
#include "ember/autograd/gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>

#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember::autograd {
namespace {

using Matrix = std::vector<double>;  // row-major, rows = output elements, cols = input elements

/// Pointer to the flat (row-major) element j of t, whatever its strides.
double* element_ptr(const Tensor& t, int64_t j) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (j % t.size(d)) * t.stride(d);
    j /= t.size(d);
  }
  return t.data_ptr<double>() + off;
}

/// Flattened float64 copies of fn's outputs. Grad mode stays as it is: fn may itself
/// differentiate (gradgradcheck's first derivative does).
std::vector<std::vector<double>> evaluate(const GradcheckFn& fn, const TensorList& inputs) {
  std::vector<std::vector<double>> out;
  for (const Tensor& o : fn(inputs)) {
    AutoGradMode off(false);
    Tensor c = o.detach().to(kDouble).contiguous();
    const double* p = c.data_ptr<double>();
    out.emplace_back(p, p + c.numel());
  }
  return out;
}

/// d outputs[o] / d x for every output o, by central differences (x is perturbed in place).
std::vector<Matrix> numerical_jacobians(const GradcheckFn& fn, const TensorList& inputs, const Tensor& x,
                                        const TensorList& outputs, double eps) {
  int64_t n_in = x.numel();
  std::vector<Matrix> jac;
  for (const Tensor& o : outputs) jac.emplace_back(static_cast<size_t>(o.numel() * n_in));
  for (int64_t j = 0; j < n_in; ++j) {
    double* p = element_ptr(x, j);
    double orig = *p;
    *p = orig + eps;
    auto plus = evaluate(fn, inputs);
    *p = orig - eps;
    auto minus = evaluate(fn, inputs);
    *p = orig;
    for (size_t o = 0; o < outputs.size(); ++o)
      for (int64_t r = 0; r < outputs[o].numel(); ++r) jac[o][r * n_in + j] = (plus[o][r] - minus[o][r]) / (2 * eps);
  }
  return jac;
}

/// d out / d x by one backward pass per output element.
Matrix analytical_jacobian(const Tensor& out, const Tensor& x) {
  int64_t n_in = x.numel();
  Matrix jac(static_cast<size_t>(out.numel() * n_in));
  for (int64_t r = 0; r < out.numel(); ++r) {
    Tensor go = zeros_like(out);
    {
      AutoGradMode off(false);
      go.view({-1}).select(0, r).fill_(1);
    }
    Tensor g = grad({out}, {x}, {go}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true)[0];
    if (!g.defined()) continue;  // unused: a zero row
    EMBER_CHECK(g.sizes().equals(x.sizes()), "Gradient has shape mismatch: expected ", x.sizes(), " but got ",
                g.sizes());
    EMBER_CHECK(g.dtype() == x.dtype(), "Gradient has dtype mismatch: expected ", x.dtype(), " but got ", g.dtype());
    Tensor row = g.contiguous();
    const double* a = row.data_ptr<double>();
    std::copy(a, a + n_in, jac.begin() + r * n_in);
  }
  return jac;
}

bool fail(const GradcheckOptions& opt, const std::string& msg) {
  EMBER_CHECK(!opt.raise_exception, msg);
  return false;
}

/// Compares the Jacobians of output o w.r.t. input i element by element.
bool compare(const Matrix& num, const Matrix& ana, int64_t n_in, size_t o, size_t i, const GradcheckOptions& opt) {
  for (size_t k = 0; k < num.size(); ++k) {
    double nv = num[k], av = ana[k];
    if (std::fabs(av - nv) <= opt.atol + opt.rtol * std::fabs(nv)) continue;
    std::ostringstream m;
    m << "Jacobian mismatch for output " << o << " with respect to input " << i << ",\nnumerical:" << nv
      << "\nanalytical:" << av << "\n(at output element " << k / n_in << ", input element " << k % n_in << ")";
    return fail(opt, m.str());
  }
  return true;
}

/// Fixed pseudo-random values in [-1, 1] (not the global generator: a check must not move
/// the random stream of the program it checks).
Tensor probe_like(const Tensor& t, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor g = empty(t.sizes(), TensorOptions().dtype(kDouble));
  double* p = g.data_ptr<double>();
  for (int64_t k = 0; k < g.numel(); ++k) p[k] = dist(gen);
  return g;
}

}  // namespace

bool gradcheck(const GradcheckFn& fn, const TensorList& inputs, GradcheckOptions opt) {
  std::vector<size_t> diff;  // inputs that require grad
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    EMBER_CHECK(inputs[i].dtype() == kDouble, "gradcheck: input ", i,
                " requires grad but is not float64; finite differences need double precision");
    diff.push_back(i);
  }
  EMBER_CHECK(!diff.empty(), "gradcheck expects at least one input tensor to require gradient, but none of the them "
              "have requires_grad=True.");
  TensorList outputs = fn(inputs);
  for (size_t i : diff) {
    const Tensor& x = inputs[i];
    std::vector<Matrix> num = numerical_jacobians(fn, inputs, x, outputs, opt.eps);
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Tensor& out = outputs[o];
      if (!out.is_floating_point()) continue;
      if (!out.requires_grad()) {
        for (double v : num[o])
          if (std::fabs(v) > opt.atol) return fail(opt, "Numerical gradient for function expected to be zero");
        continue;
      }
      if (!compare(num[o], analytical_jacobian(out, x), x.numel(), o, i, opt)) return false;
    }
  }
  return true;
}

bool gradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs, GradcheckOptions opt) {
  return gradcheck(GradcheckFn([&fn](const TensorList& in) { return TensorList{fn(in)}; }), inputs, opt);
}

// The first derivative, as a function of the inputs and of the grad_outputs, is itself checked
// with gradcheck; the grad_outputs become extra inputs, as in PyTorch's gradgradcheck.
bool gradgradcheck(const GradcheckFn& fn, const TensorList& inputs, GradcheckOptions opt) {
  TensorList grad_outputs;
  std::vector<bool> differentiable;  // only outputs that require grad are differentiated
  uint32_t seed = 0;
  for (const Tensor& o : fn(inputs)) {
    differentiable.push_back(o.is_floating_point() && o.requires_grad());
    if (differentiable.back()) grad_outputs.push_back(probe_like(o, ++seed).requires_grad_(true));
  }
  size_t n_in = inputs.size();
  std::vector<size_t> diff;
  for (size_t i = 0; i < n_in; ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) diff.push_back(i);
  GradcheckFn first = [&](const TensorList& all) {
    TensorList in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_in));
    TensorList gos(all.begin() + static_cast<std::ptrdiff_t>(n_in), all.end());
    TensorList wrt;
    for (size_t i : diff) wrt.push_back(in[i]);
    TensorList outs, all_outs = fn(in);
    for (size_t k = 0; k < all_outs.size(); ++k)
      if (differentiable[k]) outs.push_back(all_outs[k]);
    TensorList gs = grad(outs, wrt, gos, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t i = 0; i < gs.size(); ++i)
      if (!gs[i].defined()) gs[i] = zeros_like(wrt[i]);
    return gs;
  };
  TensorList all = inputs;
  all.insert(all.end(), grad_outputs.begin(), grad_outputs.end());
  return gradcheck(first, all, opt);
}

bool gradgradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs,
                   GradcheckOptions opt) {
  return gradgradcheck(GradcheckFn([&fn](const TensorList& in) { return TensorList{fn(in)}; }), inputs, opt);
}

}  // namespace ember::autograd
