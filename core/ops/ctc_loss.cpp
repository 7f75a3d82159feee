// CTC loss: for each sample b with extended target l' = (blank, l1, blank, l2, ..., blank)
// of length S' = 2L + 1, the forward variables in log space
//   alpha_0(0) = lp_0(blank), alpha_0(1) = lp_0(l1),
//   alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2)),
// the last term only where l'_s is a label that differs from l'_{s-2}; the loss is
// nll = -logsumexp(alpha_{T-1}(S'-1), alpha_{T-1}(S'-2)). The backward runs the mirrored
// beta recursion and, per (t, c), lcab = logsumexp over s with l'_s = c of alpha_t(s) +
// beta_t(s) (both include lp_t), giving PyTorch's gradient (Graves et al. 2006, eq. 16)
//   grad_t(c) = (exp(lp_t(c)) - exp(lcab + nll - lp_t(c))) * grad_out
// for t below the sample's input length, 0 after it. Accumulation is in double.
#include "ember/core/ops/ctc_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/autograd/function.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/ternary.h"
#include "ember/core/tensor_iter.h"

namespace ember {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  double m = std::max(a, b);
  if (m == kNegInf) return kNegInf;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

/// What the kernels read besides log_probs: targets, where each sample's start, lengths.
struct CtcSpec {
  std::vector<int64_t> targets;     // all target values, flattened
  std::vector<int64_t> tg_offsets;  // where sample b's target starts in `targets`
  std::vector<int64_t> input_lengths, target_lengths;
  int64_t blank = 0;
  bool zero_infinity = false;
  int64_t T = 0, N = 0, C = 0;
};

/// One sample's view of log_probs (contiguous (T, N, C), double) and its extended target.
struct CtcSample {
  const double* lp;
  int64_t N, C, Tb, L, S;  // S = 2L + 1
  const int64_t* tg;
  int64_t label(int64_t s) const { return s % 2 == 0 ? -1 : tg[s / 2]; }  // -1: blank
  double at(int64_t t, int64_t c) const { return lp[t * N * C + c]; }
};

CtcSample sample_of(const CtcSpec& sp, const double* lp, int64_t b) {
  int64_t L = sp.target_lengths[b];
  return CtcSample{
      lp + b * sp.C, sp.N, sp.C, sp.input_lengths[b], L, 2 * L + 1, sp.targets.data() + sp.tg_offsets[b]};
}

/// alpha (Tb x S, row-major) and the sample's nll.
double ctc_alpha(const CtcSample& x, int64_t blank, std::vector<double>& alpha) {
  if (x.Tb == 0) return x.L == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  auto cls = [&](int64_t s) {
    int64_t l = x.label(s);
    return l < 0 ? blank : l;
  };
  alpha.assign(static_cast<size_t>(x.Tb * x.S), kNegInf);
  alpha[0] = x.at(0, blank);
  if (x.S > 1) alpha[1] = x.at(0, cls(1));
  for (int64_t t = 1; t < x.Tb; ++t) {
    const double* prev = alpha.data() + (t - 1) * x.S;
    double* cur = alpha.data() + t * x.S;
    for (int64_t s = 0; s < x.S; ++s) {
      double a = prev[s];
      if (s > 0) a = log_add(a, prev[s - 1]);
      if (s > 1 && s % 2 == 1 && x.label(s) != x.label(s - 2)) a = log_add(a, prev[s - 2]);
      cur[s] = a == kNegInf ? kNegInf : a + x.at(t, cls(s));
    }
  }
  const double* last = alpha.data() + (x.Tb - 1) * x.S;
  double ll = last[x.S - 1];
  if (x.S > 1) ll = log_add(ll, last[x.S - 2]);
  return -ll;
}

/// Sample b's gradient rows (Tb x C, stride N*C) into g, scaled by gr.
void ctc_grad(const CtcSample& x, int64_t blank, bool zero_infinity, double gr, double* g) {
  std::vector<double> alpha;
  double nll = ctc_alpha(x, blank, alpha);
  if (x.Tb == 0) return;
  if (zero_infinity && std::isinf(nll)) return;  // rows stay 0
  auto cls = [&](int64_t s) {
    int64_t l = x.label(s);
    return l < 0 ? blank : l;
  };
  std::vector<double> beta(static_cast<size_t>(x.Tb * x.S), kNegInf);
  double* bl = beta.data() + (x.Tb - 1) * x.S;
  bl[x.S - 1] = x.at(x.Tb - 1, blank);
  if (x.S > 1) bl[x.S - 2] = x.at(x.Tb - 1, cls(x.S - 2));
  for (int64_t t = x.Tb - 2; t >= 0; --t) {
    const double* next = beta.data() + (t + 1) * x.S;
    double* cur = beta.data() + t * x.S;
    for (int64_t s = 0; s < x.S; ++s) {
      double v = next[s];
      if (s < x.S - 1) v = log_add(v, next[s + 1]);
      if (s < x.S - 2 && s % 2 == 1 && x.label(s) != x.label(s + 2)) v = log_add(v, next[s + 2]);
      cur[s] = v == kNegInf ? kNegInf : v + x.at(t, cls(s));
    }
  }
  std::vector<double> lcab(static_cast<size_t>(x.C));
  for (int64_t t = 0; t < x.Tb; ++t) {
    std::fill(lcab.begin(), lcab.end(), kNegInf);
    for (int64_t s = 0; s < x.S; ++s) {
      double& l = lcab[static_cast<size_t>(cls(s))];
      l = log_add(l, alpha[t * x.S + s] + beta[t * x.S + s]);
    }
    double* row = g + t * x.N * x.C;
    for (int64_t c = 0; c < x.C; ++c) {
      double lp = x.at(t, c);
      row[c] = (std::exp(lp) - std::exp(lcab[static_cast<size_t>(c)] + nll - lp)) * gr;
    }
  }
}

/// log_probs as a contiguous CPU double tensor (the kernels' one layout).
Tensor as_cpu_double(const Tensor& t) { return t.detach().to(kCPU).to(kDouble).contiguous(); }

/// The spec travels through the function's saved data (IValues), so the node owns it.
void save_spec(autograd::AutogradContext* ctx, const CtcSpec& sp) {
  ctx->saved_data["targets"] = sp.targets;
  ctx->saved_data["tg_offsets"] = sp.tg_offsets;
  ctx->saved_data["input_lengths"] = sp.input_lengths;
  ctx->saved_data["target_lengths"] = sp.target_lengths;
  ctx->saved_data["blank"] = sp.blank;
  ctx->saved_data["zero_infinity"] = sp.zero_infinity;
}

CtcSpec load_spec(autograd::AutogradContext* ctx, const Tensor& log_probs) {
  CtcSpec sp;
  sp.targets = ctx->saved_data["targets"].toIntVector();
  sp.tg_offsets = ctx->saved_data["tg_offsets"].toIntVector();
  sp.input_lengths = ctx->saved_data["input_lengths"].toIntVector();
  sp.target_lengths = ctx->saved_data["target_lengths"].toIntVector();
  sp.blank = ctx->saved_data["blank"].toInt();
  sp.zero_infinity = ctx->saved_data["zero_infinity"].toBool();
  sp.T = log_probs.size(0);
  sp.N = log_probs.size(1);
  sp.C = log_probs.size(2);
  return sp;
}

/// Per-sample nll of log_probs (T, N, C); the spec's vectors are the other arguments.
struct CtcLossFunction : autograd::Function<CtcLossFunction> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& log_probs, const CtcSpec& sp) {
    ctx->save_for_backward({log_probs});
    save_spec(ctx, sp);
    Tensor lp = as_cpu_double(log_probs);
    Tensor nll = empty({sp.N}, kDouble);
    const double* lpp = lp.data_ptr<double>();
    double* out = nll.data_ptr<double>();
    parallel_for(sp.N, 1, [&](int64_t b0, int64_t b1) {
      std::vector<double> alpha;
      for (int64_t b = b0; b < b1; ++b) out[b] = ctc_alpha(sample_of(sp, lpp, b), sp.blank, alpha);
    });
    return nll.to(log_probs.device(), log_probs.dtype());
  }
  static variable_list backward(autograd::AutogradContext* ctx, variable_list grads) {
    Tensor log_probs = ctx->get_saved_variables()[0];
    CtcSpec sp = load_spec(ctx, log_probs);
    Tensor lp = as_cpu_double(log_probs);
    Tensor gout = as_cpu_double(grads[0]);
    Tensor g = zeros({sp.T, sp.N, sp.C}, kDouble);
    const double* lpp = lp.data_ptr<double>();
    const double* gr = gout.data_ptr<double>();
    double* gp = g.data_ptr<double>();
    parallel_for(sp.N, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        ctc_grad(sample_of(sp, lpp, b), sp.blank, sp.zero_infinity, gr[b], gp + b * sp.C);
    });
    return {g.to(log_probs.device(), log_probs.dtype()), Tensor()};
  }
};

std::vector<int64_t> long_values(const Tensor& t) {
  Tensor c = t.detach().to(kCPU).to(kLong).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

const char* kWhile = " (while checking arguments for ctc_loss_allocate_outputs)";

}  // namespace

Tensor ctc_loss(const Tensor& log_probs_in, const Tensor& targets_in, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  // On PyTorch's CPU float32 autocast list.
  if (autocast::is_active()) [[unlikely]] {
    using Fn = Tensor (*)(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, int64_t, int64_t, bool);
    return autocast::call(AutocastPolicies{AutocastPolicy::kFloat32, AutocastPolicy::kNone},
                          static_cast<Fn>(&ctc_loss), log_probs_in, targets_in, input_lengths, target_lengths,
                          blank, reduction, zero_infinity);
  }
  EMBER_CHECK(reduction >= Reduction::None && reduction < Reduction::END, reduction,
              " is not a valid value for reduction");
  bool unbatched = log_probs_in.dim() == 2;
  Tensor log_probs = unbatched ? log_probs_in.unsqueeze(1) : log_probs_in;
  Tensor targets = unbatched ? targets_in.unsqueeze(0) : targets_in;
  EMBER_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
              "-dimensional tensor for argument #1 'log_probs'", kWhile);
  EMBER_CHECK(log_probs.is_floating_point(), "\"ctc_loss_cpu\" not implemented for '",
              scalar_type_name(log_probs.dtype()), "'");
  CtcSpec spec;
  CtcSpec* sp = &spec;
  sp->T = log_probs.size(0);
  sp->N = log_probs.size(1);
  sp->C = log_probs.size(2);
  sp->blank = blank;
  sp->zero_infinity = zero_infinity;
  EMBER_CHECK(blank < sp->C && blank >= 0, "blank must be in label range");
  EMBER_CHECK(static_cast<int64_t>(input_lengths.size()) == sp->N,
              "input_lengths must be of size batch_size");
  EMBER_CHECK(static_cast<int64_t>(target_lengths.size()) == sp->N,
              "target_lengths must be of size batch_size");
  EMBER_CHECK(targets.dim() >= 1 && targets.dim() <= 2, "Expected 1 to 2 dimensions, but got ", targets.dim(),
              "-dimensional tensor for argument #2 'targets'", kWhile);
  int64_t total = 0, max_len = 0;
  for (int64_t b = 0; b < sp->N; ++b) {
    int64_t l = target_lengths[b];
    EMBER_CHECK(l >= 0, "Expected target_lengths to have value at least 0, but got value ", l, kWhile);
    sp->tg_offsets.push_back(targets.dim() == 1 ? total : b * (targets.dim() == 2 ? targets.size(1) : 0));
    total += l;
    max_len = std::max(max_len, l);
  }
  if (targets.dim() == 1) {
    EMBER_CHECK(targets.size(0) == total, "Expected tensor to have size ", total,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'", kWhile);
  } else {
    EMBER_CHECK(targets.size(0) == sp->N, "Expected tensor to have size ", sp->N,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'", kWhile);
    EMBER_CHECK(targets.size(1) >= max_len, "Expected tensor to have size at least ", max_len,
                " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'", kWhile);
  }
  for (int64_t b = 0; b < sp->N; ++b) {
    int64_t l = input_lengths[b];
    EMBER_CHECK(l >= 0, "Expected input_lengths to have value at least 0, but got value ", l, kWhile);
    EMBER_CHECK(l <= sp->T, "Expected input_lengths to have value at most ", sp->T, ", but got value ", l,
                kWhile);
  }
  sp->input_lengths.assign(input_lengths.begin(), input_lengths.end());
  sp->target_lengths.assign(target_lengths.begin(), target_lengths.end());
  sp->targets = long_values(targets);
  for (int64_t b = 0; b < sp->N; ++b) {
    for (int64_t k = 0; k < sp->target_lengths[b]; ++k) {
      int64_t c = sp->targets[static_cast<size_t>(sp->tg_offsets[b] + k)];
      EMBER_CHECK(c >= 0 && c < sp->C, "Target ", c, " is out of bounds.");
    }
  }
  Tensor res = CtcLossFunction::apply(log_probs, spec);
  if (zero_infinity) res = where(res.eq(std::numeric_limits<double>::infinity()), zeros_like(res), res);
  if (reduction == Reduction::Mean) {
    std::vector<double> tl(sp->target_lengths.begin(), sp->target_lengths.end());
    Tensor div = tensor(tl, kDouble).to(res.device(), res.dtype()).clamp_min(1);
    return (res / div).mean();
  }
  if (reduction == Reduction::Sum) return res.sum();
  return unbatched ? res.squeeze(0) : res;
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  std::vector<int64_t> il = long_values(input_lengths), tl = long_values(target_lengths);
  return ctc_loss(log_probs, targets, IntArrayRef(il), IntArrayRef(tl), blank, reduction, zero_infinity);
}

}  // namespace ember
