// LBFGS: trajectories against PyTorch's torch.optim.LBFGS (fixtures/make_lbfgs_fixture.py),
// with and without the strong-Wolfe line search; exact convergence on a quadratic (a
// hand-checkable reference); its state dict; PyTorch's errors. Also a user's optimizer written
// against libtorch's Optimizer / OptimizerCloneableOptions / OptimizerCloneableParamState
// signatures, which must compile and run unchanged.
#include <cmath>
#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/archive.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/optim/lbfgs.h"
#include "op_check.h"
#include "optim/fixtures/lbfgs_trajectories.h"
#include "temp_dir.h"

using namespace ember;
using namespace ember::optim;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::values;
namespace fx = ember::test::lbfgs_fixtures;

namespace {

struct Problem {
  Tensor a, b;  // shapes [2] and [2, 2], as the fixture's
};

Problem make_problem(ScalarType dtype = kDouble) {
  std::vector<double> a(fx::kStart.begin(), fx::kStart.begin() + 2), b(fx::kStart.begin() + 2, fx::kStart.end());
  return {from_values(a, {2}, dtype).requires_grad_(), from_values(b, {2, 2}, dtype).requires_grad_()};
}

/// The fixture's objective: sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, x = cat(a, b.flatten()).
Tensor objective(const Problem& p) {
  Tensor x = cat({p.a, p.b.reshape({-1})}, 0);
  Tensor head = x.slice(0, 0, 5), tail = x.slice(0, 1, 6);
  Tensor r = tail.sub(head.mul(head));
  Tensor s = head.neg().add(1);
  return r.mul(r).mul(100).add(s.mul(s)).sum();
}

std::vector<double> flat(const Problem& p) {
  std::vector<double> out = values(p.a), b = values(p.b);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

LBFGSOptions fixture_options(const std::string& name) {
  static const std::map<std::string, LBFGSOptions> options = {
      {"fixed_step", LBFGSOptions(1).max_iter(20)},
      {"fixed_step_small_lr", LBFGSOptions(0.25).max_iter(7).history_size(4)},
      {"strong_wolfe", LBFGSOptions(1).max_iter(20).line_search_fn("strong_wolfe")},
      {"strong_wolfe_short_history",
       LBFGSOptions(1).max_iter(15).max_eval(30).history_size(2).line_search_fn("strong_wolfe")},
  };
  auto it = options.find(name);
  REQUIRE_MESSAGE(it != options.end(), "no C++ options for fixture " << name);
  return it->second;
}

}  // namespace

TEST_CASE("LBFGS follows PyTorch's trajectories, with and without the strong-Wolfe line search") {
  for (const auto& traj : fx::kTrajectories) {
    CAPTURE(traj.name);
    Problem p = make_problem();
    LBFGS opt(std::vector<Tensor>{p.a, p.b}, fixture_options(traj.name));
    auto closure = [&] {
      opt.zero_grad();
      Tensor loss = objective(p);
      loss.backward();
      return loss;
    };
    for (const auto& expected : traj.steps) {
      Tensor loss = opt.step(closure);
      CHECK(loss.item<double>() == doctest::Approx(expected.loss).epsilon(1e-9));
      std::vector<double> got = flat(p);
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected.params[i]).epsilon(1e-7));
      auto& state = static_cast<LBFGSParamState&>(*opt.state().at(p.a.unsafeGetTensorImpl()));
      CHECK(state.func_evals() == expected.func_evals);
      CHECK(state.n_iter() == expected.n_iter);
    }
  }
}

TEST_CASE("LBFGS solves an n-dimensional quadratic in about n iterations") {
  // f(x) = 1/2 x^T A x - b^T x with A symmetric positive definite: the minimiser solves A x = b.
  // A = [[4, 1, 0], [1, 3, 1], [0, 1, 2]], b = (1, 2, 3): x* = (2/9, 1/9, 13/9) by hand (the
  // first row gives x1 = 1 - 4 x0, the last x2 = 1 + 2 x0, the middle then x0 = 2/9). The loss
  // stops changing in double once x is within ~1e-8 of x*, which bounds the accuracy.
  for (bool wolfe : {false, true}) {
    CAPTURE(wolfe);
    Tensor A = from_values({4, 1, 0, 1, 3, 1, 0, 1, 2}, {3, 3});
    Tensor b = from_values({1, 2, 3}, {3});
    Tensor x = zeros({3}, kDouble).requires_grad_();
    LBFGSOptions o = LBFGSOptions(1).max_iter(50).tolerance_grad(1e-12).tolerance_change(1e-15);
    if (wolfe) o.line_search_fn("strong_wolfe");
    LBFGS opt(std::vector<Tensor>{x}, o);
    opt.step([&] {
      opt.zero_grad();
      Tensor loss = x.matmul(A.matmul(x)).mul(0.5).sub(b.dot(x));
      loss.backward();
      return loss;
    });
    std::vector<double> got = values(x);
    CHECK(got[0] == doctest::Approx(2.0 / 9).epsilon(1e-6));
    CHECK(got[1] == doctest::Approx(1.0 / 9).epsilon(1e-6));
    CHECK(got[2] == doctest::Approx(13.0 / 9).epsilon(1e-6));
  }
}

TEST_CASE("LBFGS stepping on after a state-dict round trip matches uninterrupted stepping") {
  auto run = [](bool round_trip) {
    Problem p = make_problem();
    auto make = [&] { return std::make_unique<LBFGS>(std::vector<Tensor>{p.a, p.b}, fixture_options("strong_wolfe")); };
    auto opt = make();
    auto closure = [&] {
      opt->zero_grad();
      Tensor loss = objective(p);
      loss.backward();
      return loss;
    };
    opt->step(closure);
    if (round_trip) {
      auto dict = opt->state_dict();
      CHECK(dict.contains("state.0.old_dirs.0"));
      CHECK(dict.contains("param_groups.0.history_size"));
      opt = make();
      opt->load_state_dict(dict);
    }
    opt->step(closure);
    return flat(p);
  };
  CHECK(run(true) == run(false));

  // A damaged dict cannot grow the history at will.
  Problem p = make_problem();
  LBFGS opt(std::vector<Tensor>{p.a, p.b});
  auto dict = opt.state_dict();
  dict.insert("state.0.old_dirs.5", zeros({6}, kDouble));
  check_error([&] { opt.load_state_dict(dict); }, "LBFGS state entry 'old_dirs.5' arrives before the 5 entries");
  dict = opt.state_dict();
  dict.insert("state.0.ro.123456789012345", zeros({}, kDouble));
  check_error([&] { opt.load_state_dict(dict); }, "LBFGS state entry 'ro.123456789012345' has an index out of range");
}

TEST_CASE("LBFGS state round-trips through an archive file") {
  Problem p = make_problem();
  LBFGS opt(std::vector<Tensor>{p.a, p.b}, LBFGSOptions(0.5).history_size(3));
  opt.step([&] {
    opt.zero_grad();
    Tensor loss = objective(p);
    loss.backward();
    return loss;
  });
  ember::test::TempDir dir;
  serialize::OutputArchive out;
  opt.save(out);
  out.save_to(dir / "lbfgs.safetensors");

  LBFGS restored(std::vector<Tensor>{p.a, p.b}, LBFGSOptions(0.1));
  serialize::InputArchive in;
  in.load_from(dir / "lbfgs.safetensors");
  restored.load(in);
  CHECK(restored.param_groups()[0].options().get_lr() == 0.5);
  const auto& a = static_cast<const LBFGSParamState&>(*opt.state().at(p.a.unsafeGetTensorImpl()));
  const auto& b = static_cast<const LBFGSParamState&>(*restored.state().at(p.a.unsafeGetTensorImpl()));
  CHECK(b.func_evals() == a.func_evals());
  CHECK(b.n_iter() == a.n_iter());
  CHECK(b.t() == a.t());
  REQUIRE(b.old_dirs().size() == a.old_dirs().size());
  for (size_t k = 0; k < a.old_dirs().size(); ++k) CHECK(values(b.old_dirs()[k]) == values(a.old_dirs()[k]));
  CHECK(values(b.d()) == values(a.d()));
}

TEST_CASE("LBFGS raises PyTorch's errors") {
  Problem p = make_problem();
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p.a});
  groups.emplace_back(std::vector<Tensor>{p.b});
  check_error([&] { LBFGS(std::move(groups)); }, "LBFGS doesn't support per-parameter options (parameter groups)");
  LBFGS opt(std::vector<Tensor>{p.a, p.b}, LBFGSOptions().line_search_fn("backtracking"));
  check_error([&] { opt.step([&] { return objective(p); }); }, "only 'strong_wolfe' is supported");
  LBFGS plain(std::vector<Tensor>{p.a, p.b});
  check_error([&] { plain.step(nullptr); }, "LBFGS requires a closure");
  CHECK(static_cast<const LBFGSOptions&>(plain.defaults()).max_eval() == 25);  // max_iter * 5 / 4
}

// ---- a user's optimizer, written as for libtorch --------------------------------------------

namespace torch = ember;  // what a libtorch program says once (or gets from <torch/torch.h>)
namespace at = ember;
namespace c10 = ember;

namespace user_code {

// Sign descent with momentum: p -= lr * sign(m), m = beta m + (1 - beta) g. Everything below is
// spelled as a libtorch user writes it against torch::optim.
struct SignumOptions : public torch::optim::OptimizerCloneableOptions<SignumOptions> {
  SignumOptions(double lr = 0.01) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr) = 0.01;
  TORCH_ARG(double, beta) = 0.9;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
  void serialize(torch::serialize::OutputArchive& archive) const override {
    archive.write("lr", lr());
    archive.write("beta", beta());
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    c10::IValue lr, beta;
    archive.read("lr", lr);
    archive.read("beta", beta);
    this->lr(lr.toDouble());
    this->beta(beta.toDouble());
  }
};

struct SignumParamState : public torch::optim::OptimizerCloneableParamState<SignumParamState> {
  TORCH_ARG(int64_t, step) = 0;
  TORCH_ARG(torch::Tensor, momentum);

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    archive.write("step", step());
    archive.write("momentum", momentum());
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    c10::IValue step;
    archive.read("step", step);
    step_ = step.toInt();
    archive.read("momentum", momentum_);
  }
};

class Signum : public torch::optim::Optimizer {
 public:
  explicit Signum(std::vector<torch::optim::OptimizerParamGroup> param_groups, SignumOptions defaults = {})
      : Optimizer(std::move(param_groups), std::make_unique<SignumOptions>(defaults)) {}
  explicit Signum(std::vector<torch::Tensor> params, SignumOptions defaults = {})
      : Signum({torch::optim::OptimizerParamGroup(std::move(params))}, defaults) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    torch::NoGradGuard no_grad;
    torch::Tensor loss = {};
    if (closure != nullptr) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    for (auto& group : param_groups_) {
      auto& options = static_cast<SignumOptions&>(group.options());
      for (auto& p : group.params()) {
        if (!p.grad().defined()) continue;
        auto& slot = state_[c10::guts::to_string(p.unsafeGetTensorImpl())];  // libtorch's key
        if (!slot) {
          auto state = std::make_unique<SignumParamState>();
          state->momentum(torch::zeros_like(p));
          slot = std::move(state);
        }
        auto& state = static_cast<SignumParamState&>(*slot);
        state.step(state.step() + 1);
        state.momentum().mul_(options.beta()).add_(p.grad(), 1 - options.beta());
        p.add_(state.momentum().sign(), -options.lr());
      }
    }
    return loss;
  }
};

}  // namespace user_code

TEST_CASE("an optimizer written against libtorch's signatures compiles and steps") {
  Tensor w = from_values({0.5, -0.25, 0}, {3}).requires_grad_();
  user_code::Signum opt({w}, user_code::SignumOptions(0.1).beta(0.5));
  // Step 1: g = (1, -2, 4) -> m = 0.5 g = (0.5, -1, 2), w -= 0.1 sign(m).
  w.mutable_grad() = from_values({1, -2, 4}, {3});
  opt.step();
  std::vector<double> first = values(w);
  CHECK(first[0] == doctest::Approx(0.4));
  CHECK(first[1] == doctest::Approx(-0.15));
  CHECK(first[2] == doctest::Approx(-0.1));
  // Step 2: g = (-3, -2, 0) -> m = (0.25 - 1.5, -0.5 - 1, 1) = (-1.25, -1.5, 1).
  w.mutable_grad() = from_values({-3, -2, 0}, {3});
  opt.step();
  std::vector<double> got = values(w);
  CHECK(got[0] == doctest::Approx(0.5));
  CHECK(got[1] == doctest::Approx(-0.05));
  CHECK(got[2] == doctest::Approx(-0.2));

  // The user's serialize overrides are reached through the base classes.
  serialize::OutputArchive out;
  opt.param_groups()[0].options().serialize(out);
  opt.state().at(w.unsafeGetTensorImpl())->serialize(out);
  CHECK(out.tensors().contains("beta"));
  CHECK(out.tensors().contains("momentum"));
  // ... and read back through c10::IValue, as libtorch code reads them.
  std::ostringstream bytes;
  out.save_to(bytes);
  std::istringstream read(bytes.str());
  serialize::InputArchive in;
  in.load_from(read);
  user_code::SignumOptions options;
  static_cast<OptimizerOptions&>(options).serialize(in);
  CHECK(options.beta() == 0.5);
  CHECK(options.lr() == 0.1);
  // The state the user's optimizer stored under libtorch's string key is found by pointer too.
  CHECK(opt.state().count(w.unsafeGetTensorImpl()) == 1);
  CHECK(opt.state().count(guts::to_string(w.unsafeGetTensorImpl())) == 1);
  check_error([&] { opt.state().count("not a pointer"); }, "is not a parameter's TensorImpl address");
  // And the built-in state-dict machinery still works for it (lr through get_lr/set_lr).
  auto dict = opt.state_dict();
  CHECK(dict.contains("param_groups.0.lr"));
}
