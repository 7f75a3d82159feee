// L-BFGS (torch::optim::LBFGS): a quasi-Newton method that builds an inverse-Hessian estimate
// from the last history_size steps and gradients, optionally choosing each step length by a
// line search satisfying the strong Wolfe conditions. step(closure) runs up to max_iter
// iterations, re-evaluating the closure as PyTorch's torch.optim.LBFGS does, operation for
// operation, so trajectories match PyTorch's in float64 (tests/optim/fixtures/make_lbfgs_fixture.py).
//
// As in PyTorch: one parameter group only; the state lives on the first parameter; the
// closure is required. In float32 the line search's scalars (losses, directional
// derivatives, step lengths) are kept in double, where PyTorch keeps some as float32 tensors.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/core/arg.h"
#include "ember/optim/optimizer.h"

namespace ember::optim {

struct LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
  /* implicit */ LBFGSOptions(double lr = 1) : lr_(lr) {}
  EMBER_ARG(double, lr) = 1;
  /// Iterations per step() call.
  EMBER_ARG(int64_t, max_iter) = 20;
  /// Closure evaluations per step() call (default max_iter * 5 / 4).
  EMBER_ARG(std::optional<int64_t>, max_eval) = std::nullopt;
  /// Stop when the gradient's largest entry is at most this.
  EMBER_ARG(double, tolerance_grad) = 1e-7;
  /// Stop when the loss or the step changes by less than this.
  EMBER_ARG(double, tolerance_change) = 1e-9;
  EMBER_ARG(int64_t, history_size) = 100;
  /// "strong_wolfe", or none for a fixed step length of lr.
  EMBER_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  /// max_eval is -1 when unset; line_search_fn is 1 for "strong_wolfe", 0 for none.
  std::vector<std::pair<std::string, double>> named_values() const override;
  void set_named_value(const std::string& name, double value) override;
  friend bool operator==(const LBFGSOptions& a, const LBFGSOptions& b);
};

struct LBFGSParamState : public OptimizerCloneableParamState<LBFGSParamState> {
  EMBER_ARG(int64_t, func_evals) = 0;
  EMBER_ARG(int64_t, n_iter) = 0;
  EMBER_ARG(double, t) = 0;
  EMBER_ARG(double, prev_loss) = 0;
  EMBER_ARG(Tensor, d) = {};
  EMBER_ARG(Tensor, H_diag) = {};
  EMBER_ARG(Tensor, prev_flat_grad) = {};
  EMBER_ARG(std::deque<Tensor>, old_dirs);
  EMBER_ARG(std::deque<Tensor>, old_stps);
  EMBER_ARG(std::deque<Tensor>, ro);
  EMBER_ARG(std::optional<std::vector<Tensor>>, al) = std::nullopt;

 public:
  /// Scalars as 0-dim float64/int64 tensors; the histories as "old_dirs.<k>", "old_stps.<k>",
  /// "ro.<k>", "al.<k>".
  std::vector<std::pair<std::string, Tensor>> named_tensors() const override;
  void set_named_tensor(const std::string& name, const Tensor& value) override;
};

class LBFGS : public Optimizer {
 public:
  explicit LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults = {});
  explicit LBFGS(std::vector<Tensor> params, LBFGSOptions defaults = {});

  /// Up to max_iter iterations; returns the closure's first loss of this call.
  Tensor step(LossClosure closure) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<LBFGSParamState>();
  }

 private:
  std::vector<Tensor>& params() { return param_groups_[0].params(); }
  /// The parameters' gradients as one flat vector (zeros for a parameter without one).
  Tensor gather_flat_grad();
  /// params += step_size * update (update is flat, in parameter order).
  void add_grad(double step_size, const Tensor& update);
  /// The loss and flat gradient at params + t d, after which params are set back to x.
  std::pair<double, Tensor> directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                                                 const Tensor& d);
  void set_param(const std::vector<Tensor>& params_data);
  std::vector<Tensor> clone_param();
};

}  // namespace ember::optim
