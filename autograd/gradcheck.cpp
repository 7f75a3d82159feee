// Finite-difference gradient checks. The numerical Jacobian perturbs one input element at a
// time by ±eps (central differences); the analytical one runs autograd::grad once per output
// element with a one-hot grad_output.
#include "ember/autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"

namespace ember::autograd {
namespace {

/// Pointer to the flat (row-major) element j of t, whatever its strides.
double* element_ptr(const Tensor& t, int64_t j) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (j % t.size(d)) * t.stride(d);
    j /= t.size(d);
  }
  return t.data_ptr<double>() + off;
}

/// Flattened float64 copies of fn's outputs (no autograd).
std::vector<std::vector<double>> evaluate(const GradcheckFn& fn, const TensorList& inputs) {
  AutoGradMode off(false);
  std::vector<std::vector<double>> out;
  for (const Tensor& o : fn(inputs)) {
    Tensor c = o.to(kDouble).contiguous();
    const double* p = c.data_ptr<double>();
    out.emplace_back(p, p + c.numel());
  }
  return out;
}

bool fail(const GradcheckOptions& opt, const std::string& msg) {
  EMBER_CHECK(!opt.raise_exception, msg);
  return false;
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
  EMBER_CHECK(!diff.empty(), "gradcheck expects at least one input tensor to require gradient");

  TensorList outputs = fn(inputs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    if (!out.is_floating_point() || !out.requires_grad()) continue;
    int64_t n_out = out.numel();
    for (size_t k = 0; k < diff.size(); ++k) {
      const Tensor& x = inputs[diff[k]];
      int64_t n_in = x.numel();
      // Numerical Jacobian column by column.
      std::vector<double> num(static_cast<size_t>(n_out * n_in));
      for (int64_t j = 0; j < n_in; ++j) {
        double* p = element_ptr(x, j);
        double orig = *p;
        *p = orig + opt.eps;
        auto plus = evaluate(fn, inputs);
        *p = orig - opt.eps;
        auto minus = evaluate(fn, inputs);
        *p = orig;
        for (int64_t r = 0; r < n_out; ++r)
          num[r * n_in + j] = (plus[o][r] - minus[o][r]) / (2 * opt.eps);
      }
      // Analytical Jacobian row by row.
      for (int64_t r = 0; r < n_out; ++r) {
        Tensor go = zeros_like(out);
        {
          AutoGradMode off(false);
          go.view({-1}).select(0, r).fill_(1);
        }
        TensorList g = grad({out}, {x}, {go}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
        Tensor row = g[0].defined() ? g[0].to(kDouble).contiguous() : zeros_like(x).to(kDouble);
        const double* a = row.data_ptr<double>();
        for (int64_t j = 0; j < n_in; ++j) {
          double nv = num[r * n_in + j], av = a[j];
          if (!(std::fabs(av - nv) <= opt.atol + opt.rtol * std::fabs(nv))) {
            std::ostringstream m;
            m << "Jacobian mismatch for output " << o << " with respect to input " << diff[k]
              << ",\nnumerical:" << nv << "\nanalytical:" << av << "\n(at output element " << r
              << ", input element " << j << ")";
            return fail(opt, m.str());
          }
        }
      }
    }
  }
  return true;
}

bool gradcheck(const std::function<Tensor(const TensorList&)>& fn, const TensorList& inputs, GradcheckOptions opt) {
  return gradcheck(GradcheckFn([&fn](const TensorList& in) { return TensorList{fn(in)}; }), inputs, opt);
}

bool gradgradcheck(const GradcheckFn& fn, const TensorList& inputs, GradcheckOptions opt) {
  // Random (fixed-seed) grad_outputs become extra inputs, as in PyTorch's gradgradcheck.
  TensorList outputs = fn(inputs);
  TensorList grad_outputs;
  for (const Tensor& o : outputs) {
    Tensor g = randn(o.sizes(), TensorOptions().dtype(kDouble));
    g.requires_grad_(true);
    grad_outputs.push_back(g);
  }
  size_t n_in = inputs.size();
  std::vector<size_t> diff;
  for (size_t i = 0; i < n_in; ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) diff.push_back(i);
  GradcheckFn first = [&](const TensorList& all) {
    TensorList in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_in));
    TensorList gos(all.begin() + static_cast<std::ptrdiff_t>(n_in), all.end());
    TensorList outs = fn(in);
    TensorList wrt;
    for (size_t i : diff) wrt.push_back(in[i]);
    TensorList gs = grad(outs, wrt, gos, true, true, true);
    TensorList result;
    for (size_t i = 0; i < gs.size(); ++i) result.push_back(gs[i].defined() ? gs[i] : zeros_like(wrt[i]));
    return result;
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
