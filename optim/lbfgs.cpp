// L-BFGS: PyTorch's torch.optim.LBFGS step (two-loop recursion over the stored curvature
// pairs, a fixed step or a strong-Wolfe line search with cubic interpolation), the same
// operations in the same order so float64 trajectories match PyTorch's.
#include "ember/optim/lbfgs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

// ---- options and state -------------------------------------------------------------------

std::vector<std::pair<std::string, double>> LBFGSOptions::named_values() const {
  return {{"lr", lr()},
          {"max_iter", static_cast<double>(max_iter())},
          {"max_eval", max_eval() ? static_cast<double>(*max_eval()) : -1.0},
          {"tolerance_grad", tolerance_grad()},
          {"tolerance_change", tolerance_change()},
          {"history_size", static_cast<double>(history_size())},
          {"line_search_fn", line_search_fn() ? 1.0 : 0.0}};
}

namespace {
/// A loaded integer option (stored as a double in the state dict), checked before converting.
int64_t integral_option(const std::string& name, double v, double min) {
  EMBER_CHECK(std::isfinite(v) && v == std::floor(v) && v >= min && v <= 9007199254740992.0, "LBFGS option '",
              name, "' must be an integer of at least ", min, ", got ", v);
  return static_cast<int64_t>(v);
}
}  // namespace

void LBFGSOptions::set_named_value(const std::string& name, double v) {
  if (name == "lr")
    lr(v);
  else if (name == "max_iter")
    max_iter(integral_option(name, v, 0));
  else if (name == "max_eval")
    max_eval(v < 0 ? std::nullopt : std::optional<int64_t>(integral_option(name, v, 0)));
  else if (name == "tolerance_grad")
    tolerance_grad(v);
  else if (name == "tolerance_change")
    tolerance_change(v);
  else if (name == "history_size")
    history_size(integral_option(name, v, 1));
  else if (name == "line_search_fn")
    line_search_fn(v != 0 ? std::optional<std::string>("strong_wolfe") : std::nullopt);
  else
    EMBER_CHECK(false, "LBFGS has no option named '", name, "'");
}

bool operator==(const LBFGSOptions& a, const LBFGSOptions& b) {
  return a.lr() == b.lr() && a.max_iter() == b.max_iter() && a.max_eval() == b.max_eval() &&
         a.tolerance_grad() == b.tolerance_grad() && a.tolerance_change() == b.tolerance_change() &&
         a.history_size() == b.history_size() && a.line_search_fn() == b.line_search_fn();
}

namespace {
void append_list(std::vector<std::pair<std::string, Tensor>>& out, const std::string& name,
                 const std::deque<Tensor>& list) {
  for (size_t k = 0; k < list.size(); ++k) out.emplace_back(name + "." + std::to_string(k), list[k]);
}

/// Puts `value` at position k of `list`: "old_dirs.<k>" entries arrive in the order state_dict
/// wrote them, so k is at most the list's length (a damaged dict cannot make a huge list).
void set_list_entry(std::deque<Tensor>& list, const std::string& index, const Tensor& value,
                    const std::string& name) {
  EMBER_CHECK(index.size() <= 9, "LBFGS state entry '", name, "' has an index out of range");
  size_t k = std::stoul(index);
  EMBER_CHECK(k <= list.size(), "LBFGS state entry '", name, "' arrives before the ", k,
              " entries it follows");
  if (k == list.size()) list.push_back(value);
  else list[k] = value;
}
}  // namespace

std::vector<std::pair<std::string, Tensor>> LBFGSParamState::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out = {
      {"func_evals", scalar_tensor(func_evals(), TensorOptions().dtype(kInt64))},
      {"n_iter", scalar_tensor(n_iter(), TensorOptions().dtype(kInt64))},
      {"t", scalar_tensor(t(), TensorOptions().dtype(kFloat64))},
      {"prev_loss", scalar_tensor(prev_loss(), TensorOptions().dtype(kFloat64))}};
  if (d().defined()) out.emplace_back("d", d());
  if (H_diag().defined()) out.emplace_back("H_diag", H_diag());
  if (prev_flat_grad().defined()) out.emplace_back("prev_flat_grad", prev_flat_grad());
  append_list(out, "old_dirs", old_dirs());
  append_list(out, "old_stps", old_stps());
  append_list(out, "ro", ro());
  // al is scratch of the two-loop recursion, sized history_size with only the first entries
  // set: the set ones are saved under their positions.
  if (al())
    for (size_t k = 0; k < al()->size(); ++k)
      if ((*al())[k].defined()) out.emplace_back("al." + std::to_string(k), (*al())[k]);
  return out;
}

void LBFGSParamState::set_named_tensor(const std::string& name, const Tensor& value) {
  if (name != "func_evals" && name != "n_iter")
    EMBER_CHECK(value.defined() && value.is_floating_point(), "LBFGS state entry '", name,
                "' must be a floating-point tensor");
  size_t dot = name.find('.');
  std::string head = name.substr(0, dot);
  bool listed = dot != std::string::npos && dot + 1 < name.size() &&
                std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dot) + 1, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  if (name == "func_evals")
    func_evals(value.item<int64_t>());
  else if (name == "n_iter")
    n_iter(value.item<int64_t>());
  else if (name == "t")
    t(value.item<double>());
  else if (name == "prev_loss")
    prev_loss(value.item<double>());
  else if (name == "d")
    d(value);
  else if (name == "H_diag")
    H_diag(value);
  else if (name == "prev_flat_grad")
    prev_flat_grad(value);
  else if (listed && head == "old_dirs")
    set_list_entry(old_dirs_, name.substr(dot + 1), value, name);
  else if (listed && head == "old_stps")
    set_list_entry(old_stps_, name.substr(dot + 1), value, name);
  else if (listed && head == "ro")
    set_list_entry(ro_, name.substr(dot + 1), value, name);
  else if (listed && head == "al") {
    std::deque<Tensor> list = al() ? std::deque<Tensor>(al()->begin(), al()->end()) : std::deque<Tensor>();
    set_list_entry(list, name.substr(dot + 1), value, name);
    al(std::vector<Tensor>(list.begin(), list.end()));
  } else {
    EMBER_CHECK(false, "LBFGS state has no entry named '", name, "'");
  }
}

// ---- the optimizer -----------------------------------------------------------------------

namespace {
std::unique_ptr<OptimizerOptions> lbfgs_defaults(LBFGSOptions o) {
  if (!o.max_eval()) o.max_eval(o.max_iter() * 5 / 4);
  return std::make_unique<LBFGSOptions>(o);
}
}  // namespace

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults)
    : Optimizer(std::move(param_groups), lbfgs_defaults(std::move(defaults))) {
  EMBER_CHECK(param_groups_.size() == 1, "LBFGS doesn't support per-parameter options (parameter groups)");
  auto& group = static_cast<LBFGSOptions&>(param_groups_[0].options());
  if (!group.max_eval()) group.max_eval(group.max_iter() * 5 / 4);
}

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions defaults)
    : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

Tensor LBFGS::gather_flat_grad() {
  std::vector<Tensor> views;
  views.reserve(params().size());
  for (const Tensor& p : params())
    views.push_back(p.grad().defined() ? p.grad().reshape({-1}) : zeros({p.numel()}, p.options()));
  return cat(views, 0);
}

void LBFGS::add_grad(double step_size, const Tensor& update) {
  int64_t offset = 0;
  for (Tensor& p : params()) {
    int64_t numel = p.numel();
    p.add_(update.slice(0, offset, offset + numel).view(p.sizes()), step_size);
    offset += numel;
  }
  EMBER_CHECK(offset == update.numel(), "LBFGS: the update has ", update.numel(), " values for ", offset,
              " parameter values");
}

std::vector<Tensor> LBFGS::clone_param() {
  std::vector<Tensor> out;
  out.reserve(params().size());
  for (const Tensor& p : params()) out.push_back(p.clone());
  return out;
}

void LBFGS::set_param(const std::vector<Tensor>& params_data) {
  for (size_t i = 0; i < params().size(); ++i) params()[i].copy_(params_data[i]);
}

std::pair<double, Tensor> LBFGS::directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x,
                                                      double t, const Tensor& d) {
  add_grad(t, d);
  double loss = run_closure(closure).item<double>();
  Tensor flat_grad = gather_flat_grad();
  set_param(x);
  return {loss, flat_grad};
}

namespace {

double dot(const Tensor& a, const Tensor& b) { return a.dot(b).item<double>(); }
double abs_max(const Tensor& a) { return a.abs().max().item<double>(); }

/// The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to `bounds`
/// (by default the interval between x1 and x2); the midpoint when the cubic has none.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  auto [xmin_bound, xmax_bound] = bounds ? *bounds : (x1 <= x2 ? std::pair(x1, x2) : std::pair(x2, x1));
  double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    double d2 = std::sqrt(d2_square);
    double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                              : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, xmin_bound), xmax_bound);
  }
  return (xmin_bound + xmax_bound) / 2.;
}

struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  double t;
  int64_t func_evals;
};

/// A step length t along d from x satisfying the strong Wolfe conditions (sufficient decrease
/// c1, curvature c2): bracketing, then zooming in by cubic interpolation (Nocedal & Wright,
/// Algorithms 3.5 and 3.6, as PyTorch's _strong_wolfe).
template <class Evaluate>
LineSearchResult strong_wolfe(Evaluate&& obj_func, double t, const Tensor& d, double f, const Tensor& g, double gtd,
                              double c1 = 1e-4, double c2 = 0.9, double tolerance_change = 1e-9, int max_ls = 25) {
  double d_norm = abs_max(d);
  auto [f_new, g_new] = obj_func(t);
  int64_t ls_func_evals = 1;
  double gtd_new = dot(g_new, d);

  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g.clone();
  bool done = false;
  int ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  // Bracketing: grow t until an interval is known to hold a point satisfying the conditions.
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {t};
      bracket_f = {f_new};
      bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    double min_step = t + 0.01 * (t - t_prev);
    double max_step = t * 10;
    double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair(min_step, max_step));
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new.clone();
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = obj_func(t);
    ls_func_evals += 1;
    gtd_new = dot(g_new, d);
    ls_iter += 1;
  }
  if (ls_iter == max_ls) {
    bracket = {0, t};
    bracket_f = {f, f_new};
    bracket_g = {g, g_new};
  }

  // Zoom: shrink the bracket until a point satisfies the conditions.
  bool insuf_progress = false;
  size_t low_pos = 0, high_pos = 0;
  if (bracket.size() == 2) std::tie(low_pos, high_pos) = bracket_f[0] <= bracket_f[1] ? std::pair(0, 1) : std::pair(1, 0);
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // Keep t away from the bracket's ends unless progress there is sufficient.
    double hi = std::max(bracket[0], bracket[1]), lo = std::min(bracket[0], bracket[1]);
    double eps = 0.1 * (hi - lo);
    if (std::min(hi - t, t - lo) < eps) {
      if (insuf_progress || t >= hi || t <= lo) {
        t = std::abs(t - hi) < std::abs(t - lo) ? hi - eps : lo + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = obj_func(t);
    ls_func_evals += 1;
    gtd_new = dot(g_new, d);
    ls_iter += 1;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low_pos]) {
      bracket[high_pos] = t;
      bracket_f[high_pos] = f_new;
      bracket_g[high_pos] = g_new.clone();
      bracket_gtd[high_pos] = gtd_new;
      std::tie(low_pos, high_pos) = bracket_f[0] <= bracket_f[1] ? std::pair(0, 1) : std::pair(1, 0);
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0) {
        bracket[high_pos] = bracket[low_pos];
        bracket_f[high_pos] = bracket_f[low_pos];
        bracket_g[high_pos] = bracket_g[low_pos];
        bracket_gtd[high_pos] = bracket_gtd[low_pos];
      }
      bracket[low_pos] = t;
      bracket_f[low_pos] = f_new;
      bracket_g[low_pos] = g_new.clone();
      bracket_gtd[low_pos] = gtd_new;
    }
  }
  return {bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals};
}

}  // namespace

Tensor LBFGS::step(LossClosure closure) {
  EMBER_CHECK(closure != nullptr, "LBFGS requires a closure");
  NoGradGuard no_grad;
  const auto& group = static_cast<const LBFGSOptions&>(param_groups_[0].options());
  const double lr = group.lr();
  const int64_t max_iter = group.max_iter();
  const int64_t max_eval = group.max_eval().value_or(max_iter * 5 / 4);
  const double tolerance_grad = group.tolerance_grad();
  const double tolerance_change = group.tolerance_change();
  const size_t history_size = static_cast<size_t>(group.history_size());
  const auto& line_search_fn = group.line_search_fn();
  EMBER_CHECK(!line_search_fn || *line_search_fn == "strong_wolfe", "only 'strong_wolfe' is supported");
  EMBER_CHECK(!params().empty(), "LBFGS: the optimizer has no parameters");
  EMBER_CHECK(group.history_size() >= 1, "LBFGS: history_size must be positive, got ", group.history_size());

  // The state lives on the first parameter (PyTorch's self.state[self._params[0]]).
  auto& slot = state_[params()[0].unsafeGetTensorImpl()];
  if (!slot) slot = std::make_unique<LBFGSParamState>();
  auto& state = static_cast<LBFGSParamState&>(*slot);

  Tensor orig_loss = run_closure(closure);
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  state.func_evals(state.func_evals() + 1);

  Tensor flat_grad = gather_flat_grad();
  if (abs_max(flat_grad) <= tolerance_grad) return orig_loss;  // already optimal

  Tensor d = state.d();
  double t = state.t();
  std::deque<Tensor>& old_dirs = state.old_dirs();
  std::deque<Tensor>& old_stps = state.old_stps();
  std::deque<Tensor>& ro = state.ro();
  Tensor H_diag = state.H_diag();
  Tensor prev_flat_grad = state.prev_flat_grad();
  double prev_loss = state.prev_loss();

  // A loaded state must be one a step could have left (Optimizer::load accepts any tensors).
  EMBER_CHECK(old_dirs.size() == old_stps.size() && old_dirs.size() == ro.size() && old_dirs.size() <= history_size,
              "LBFGS: the state's histories do not fit together (old_dirs ", old_dirs.size(), ", old_stps ",
              old_stps.size(), ", ro ", ro.size(), ", history_size ", history_size, ")");
  EMBER_CHECK(state.n_iter() >= 0 && state.func_evals() >= 0, "LBFGS: the state's counters are negative (n_iter ",
              state.n_iter(), ", func_evals ", state.func_evals(), ")");
  if (state.n_iter() > 0)
    EMBER_CHECK(d.defined() && H_diag.defined() && prev_flat_grad.defined(), "LBFGS: the state lacks d, H_diag or "
                "prev_flat_grad after ", state.n_iter(), " iterations");

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    n_iter += 1;
    state.n_iter(state.n_iter() + 1);

    // The descent direction: steepest descent first, then the two-loop recursion.
    if (state.n_iter() == 1) {
      d = flat_grad.neg();
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      H_diag = scalar_tensor(1, flat_grad.options());
    } else {
      Tensor y = flat_grad.sub(prev_flat_grad);
      Tensor s = d.mul(t);
      Tensor ys = y.dot(s);
      if (ys.item<double>() > 1e-10) {  // update the memory only with positive curvature
        if (old_dirs.size() == history_size) {
          old_dirs.pop_front();
          old_stps.pop_front();
          ro.pop_front();
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(ys.reciprocal());
        H_diag = ys / y.dot(y);
      }
      const size_t num_old = old_dirs.size();
      std::vector<Tensor> al(history_size);
      Tensor q = flat_grad.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = old_stps[i].dot(q) * ro[i];
        q.add_(old_dirs[i], -al[i].item<double>());
      }
      d = q.mul(H_diag);
      Tensor& r = d;
      for (size_t i = 0; i < num_old; ++i) {
        Tensor be_i = old_dirs[i].dot(r) * ro[i];
        r.add_(old_stps[i], (al[i] - be_i).item<double>());
      }
      state.al(std::move(al));
    }

    if (!prev_flat_grad.defined())
      prev_flat_grad = flat_grad.clone();
    else
      prev_flat_grad.copy_(flat_grad);
    prev_loss = loss;

    // The step length: scaled by the gradient's size on the very first iteration.
    if (state.n_iter() == 1)
      t = std::min(1., 1. / flat_grad.abs().sum().item<double>()) * lr;
    else
      t = lr;

    double gtd = dot(flat_grad, d);  // directional derivative
    if (gtd > -tolerance_change) break;

    int64_t ls_func_evals = 0;
    bool opt_cond = false;
    if (line_search_fn) {
      std::vector<Tensor> x_init = clone_param();
      auto obj_func = [&](double step) { return directional_evaluate(closure, x_init, step, d); };
      LineSearchResult ls = strong_wolfe(obj_func, t, d, loss, flat_grad, gtd);
      loss = ls.loss;
      flat_grad = ls.flat_grad;
      t = ls.t;
      ls_func_evals = ls.func_evals;
      add_grad(t, d);
      opt_cond = abs_max(flat_grad) <= tolerance_grad;
    } else {
      add_grad(t, d);
      if (n_iter != max_iter) {
        // Re-evaluate (not needed on the last iteration).
        loss = run_closure(closure).item<double>();
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= tolerance_grad;
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    state.func_evals(state.func_evals() + ls_func_evals);

    // The stopping conditions, in PyTorch's order.
    if (n_iter == max_iter) break;
    if (current_evals >= max_eval) break;
    if (opt_cond) break;
    if (abs_max(d.mul(t)) <= tolerance_change) break;
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }

  state.d(d);
  state.t(t);
  state.H_diag(H_diag);
  state.prev_flat_grad(prev_flat_grad);
  state.prev_loss(prev_loss);
  return orig_loss;
}

}  // namespace ember::optim
