// LR schedulers: lr (and OneCycleLR momentum) sequences against PyTorch 1.13
// (fixtures/make_optim_fixtures.py), hand-worked sequences, resuming from a state dict, and
// PyTorch's error messages.
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numbers>
#include <string>

#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/one_cycle_lr.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/sequential_lr.h"
#include "ember/optim/sgd.h"
#include "op_check.h"
#include "optim/fixtures/optim_trajectories.h"

using namespace ember;
using namespace ember::optim;
using ember::test::check_error;
namespace fx = ember::test::optim_fixtures;

namespace {

/// The optimizer a fixture schedule drives: one zero parameter per group, SGD with momentum
/// 0.9 (or Adam), each group at its own lr.
std::unique_ptr<Optimizer> make_optimizer(const std::string& kind, const std::vector<double>& lrs) {
  std::vector<OptimizerParamGroup> groups;
  for (double lr : lrs) {
    Tensor p = ember::zeros({1}).requires_grad_();
    if (kind == "adam")
      groups.emplace_back(std::vector<Tensor>{p}, std::make_unique<AdamOptions>(AdamOptions(lr)));
    else
      groups.emplace_back(std::vector<Tensor>{p}, std::make_unique<SGDOptions>(SGDOptions(lr).momentum(0.9)));
  }
  if (kind == "adam") return std::make_unique<Adam>(std::move(groups), AdamOptions(lrs[0]));
  return std::make_unique<SGD>(std::move(groups), SGDOptions(lrs[0]).momentum(0.9));
}

double momentum_of(Optimizer& opt) {
  OptimizerOptions& o = opt.param_groups()[0].options();
  if (auto* adam = dynamic_cast<AdamOptions*>(&o)) return std::get<0>(adam->betas());
  return static_cast<SGDOptions&>(o).momentum();
}

/// One fixture schedule in C++: its optimizer and either an LRScheduler or a plateau scheduler.
struct Run {
  std::unique_ptr<Optimizer> opt;
  std::shared_ptr<LRScheduler> sched;
  std::unique_ptr<ReduceLROnPlateau> plateau;

  void step(int t) {
    if (plateau)
      plateau->step(fx::kPlateauMetrics[t]);
    else
      sched->step();
  }
  OrderedDict<std::string, Tensor> state_dict() const {
    return plateau ? plateau->state_dict() : sched->state_dict();
  }
  void load_state_dict(const OrderedDict<std::string, Tensor>& d) {
    if (plateau)
      plateau->load_state_dict(d);
    else
      sched->load_state_dict(d);
  }
  std::vector<double> lrs() const {
    std::vector<double> out;
    for (const auto& g : opt->param_groups()) out.push_back(g.options().get_lr());
    return out;
  }
};

/// The C++ spelling of each schedule in make_optim_fixtures.py.
Run make_run(const std::string& name) {
  Run r;
  auto sgd = [&](std::vector<double> lrs = {0.1}) { r.opt = make_optimizer("sgd", lrs); };
  if (name == "step_lr") {
    sgd();
    r.sched = std::make_shared<StepLR>(*r.opt, 7, 0.5);
  } else if (name == "multistep_lr") {
    sgd();
    r.sched = std::make_shared<MultiStepLR>(*r.opt, std::vector<int64_t>{5, 12, 12, 20}, 0.5);
  } else if (name == "exponential_lr") {
    sgd();
    r.sched = std::make_shared<ExponentialLR>(*r.opt, 0.9);
  } else if (name == "cosine_lr") {
    sgd({0.1, 0.02});
    r.sched = std::make_shared<CosineAnnealingLR>(*r.opt, 10, 0.001);
  } else if (name == "warm_restarts") {
    sgd();
    r.sched = std::make_shared<CosineAnnealingWarmRestarts>(*r.opt, 4, 2, 0.001);
  } else if (name == "warm_restarts_t1") {
    sgd();
    r.sched = std::make_shared<CosineAnnealingWarmRestarts>(*r.opt, 5);
  } else if (name == "one_cycle_cos") {
    sgd();
    r.sched = std::make_shared<OneCycleLR>(*r.opt, 1.0, 30);
  } else if (name == "one_cycle_linear_3phase") {
    r.opt = make_optimizer("adam", {0.1});
    r.sched =
        std::make_shared<OneCycleLR>(*r.opt, 0.5, 30, 0.25, "linear", true, 0.85, 0.95, 25.0, 1e4, true);
  } else if (name == "linear_lr") {
    sgd();
    r.sched = std::make_shared<LinearLR>(*r.opt, 0.25, 1.0, 8);
  } else if (name == "linear_lr_default") {
    sgd();
    r.sched = std::make_shared<LinearLR>(*r.opt);
  } else if (name == "lambda_lr") {
    sgd({0.1, 0.3});
    r.sched =
        std::make_shared<LambdaLR>(*r.opt, [](int64_t e) { return std::pow(0.95, static_cast<double>(e)); });
  } else if (name == "sequential_linear_cosine") {
    sgd();
    auto a = std::make_shared<LinearLR>(*r.opt, 0.1, 1.0, 5);
    auto b = std::make_shared<CosineAnnealingLR>(*r.opt, 20);
    r.sched = std::make_shared<SequentialLR>(*r.opt, std::vector<std::shared_ptr<LRScheduler>>{a, b},
                                             std::vector<int64_t>{5});
  } else if (name == "sequential_three") {
    sgd();
    auto a = std::make_shared<ExponentialLR>(*r.opt, 0.9);
    auto b = std::make_shared<StepLR>(*r.opt, 3, 0.5);
    auto c = std::make_shared<LambdaLR>(*r.opt, [](int64_t e) { return 1.0 / static_cast<double>(1 + e); });
    r.sched = std::make_shared<SequentialLR>(*r.opt, std::vector<std::shared_ptr<LRScheduler>>{a, b, c},
                                             std::vector<int64_t>{4, 15});
  } else if (name == "plateau_min_rel") {
    sgd();
    r.plateau = std::make_unique<ReduceLROnPlateau>(*r.opt, ReduceLROnPlateau::min, 0.5, 2, 0.01,
                                                    ReduceLROnPlateau::rel, 1, std::vector<double>{0.01});
  } else if (name == "plateau_max_abs") {
    sgd();
    r.plateau = std::make_unique<ReduceLROnPlateau>(*r.opt, ReduceLROnPlateau::max, 0.3, 1, 0.1,
                                                    ReduceLROnPlateau::abs);
  } else {
    FAIL("no C++ spelling for fixture schedule " << name);
  }
  return r;
}

void check_row(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t g = 0; g < got.size(); ++g) {
    INFO("group " << g << ": got " << got[g] << ", expected " << expected[g]);
    CHECK(std::fabs(got[g] - expected[g]) <= 1e-14 * std::fabs(expected[g]) + 1e-300);
  }
}

}  // namespace

TEST_CASE("scheduler sequences match PyTorch") {
  for (const auto& s : fx::kSchedules) {
    INFO("schedule " << std::string(s.name));
    Run r = make_run(s.name);
    for (int t = 0; t <= fx::kSchedSteps; ++t) {
      INFO("after step " << t);
      if (t > 0) r.step(t - 1);
      check_row(r.lrs(), s.lrs[t]);
      if (r.sched)
        check_row(r.sched->get_last_lr(), s.lrs[t]);
      else
        check_row(r.plateau->get_last_lr(), s.lrs[t]);
      CHECK(momentum_of(*r.opt) == doctest::Approx(s.momentum[t]).epsilon(1e-14));
    }
  }
}

TEST_CASE("a scheduler resumed from its state dict continues identically") {
  for (const auto& s : fx::kSchedules) {
    for (int split : {1, 12}) {
      INFO("schedule " << std::string(s.name) << ", resumed after step " << split);
      Run a = make_run(s.name);
      for (int t = 0; t < split; ++t) a.step(t);
      auto opt_sd = a.opt->state_dict();
      auto sched_sd = a.state_dict();
      Run b = make_run(s.name);  // a fresh run, as after a restart
      b.opt->load_state_dict(opt_sd);
      b.load_state_dict(sched_sd);
      CHECK(b.lrs() == a.lrs());
      for (int t = split; t < fx::kSchedSteps; ++t) {
        a.step(t);
        b.step(t);
        CHECK(b.lrs() == a.lrs());  // exact
        CHECK(momentum_of(*b.opt) == momentum_of(*a.opt));
        check_row(b.lrs(), s.lrs[t + 1]);
      }
    }
  }
}

TEST_CASE("hand-worked sequences") {
  auto opt = make_optimizer("sgd", {1.0});
  // StepLR(step_size 2, gamma 0.5), as libtorch's example: 1, 1, 0.5, 0.5, 0.25.
  StepLR step(*opt, 2, 0.5);
  std::vector<double> seen{opt->param_groups()[0].options().get_lr()};
  for (int i = 0; i < 4; ++i) {
    step.step();
    seen.push_back(step.get_last_lr()[0]);
  }
  CHECK(seen == std::vector<double>{1, 1, 0.5, 0.5, 0.25});
  CHECK(step.last_epoch() == 4);
  CHECK(step.base_lrs() == std::vector<double>{1.0});
  CHECK(opt->param_groups()[0].initial_lr() == 1.0);

  // LinearLR(0.5, 1, 4) on lr 0.05 (PyTorch's docstring): 0.025, 0.03125, 0.0375, 0.04375, 0.05, 0.05.
  auto opt2 = make_optimizer("sgd", {0.05});
  LinearLR lin(*opt2, 0.5, 1.0, 4);
  std::vector<double> expect{0.025, 0.03125, 0.0375, 0.04375, 0.05, 0.05};
  for (size_t i = 0; i < expect.size(); ++i) {
    if (i > 0) lin.step();
    CHECK(lin.get_last_lr()[0] == doctest::Approx(expect[i]).epsilon(1e-15));
  }

  // CosineAnnealingLR(T_max 2) from 1 to 0: 1, 0.5, 0, then back up 0.5, 1.
  auto opt3 = make_optimizer("sgd", {1.0});
  CosineAnnealingLR cos(*opt3, 2);
  std::vector<double> expect3{1, 0.5, 0, 0.5, 1};
  for (size_t i = 0; i < expect3.size(); ++i) {
    if (i > 0) cos.step();
    CHECK(cos.get_last_lr()[0] == doctest::Approx(expect3[i]).epsilon(1e-12));
  }
}

TEST_CASE("step(epoch) uses the closed form") {
  auto opt = make_optimizer("sgd", {1.0});
  ExponentialLR e(*opt, 0.5);
  e.step(3);  // 1 * 0.5^3
  CHECK(e.get_last_lr()[0] == 0.125);
  CHECK(e.last_epoch() == 3);
  auto opt2 = make_optimizer("sgd", {1.0});
  CosineAnnealingWarmRestarts w(*opt2, 2, 2);
  w.step(4.0);  // periods 2, 4: epoch 4 is 2 into the second period of 4 -> cos(pi/2) -> 0.5
  CHECK(w.T_cur() == 2.0);
  CHECK(w.get_last_lr()[0] == doctest::Approx(0.5).epsilon(1e-12));
  w.step(0.5);  // fractional epochs: (1 + cos(pi/4)) / 2
  CHECK(w.get_last_lr()[0] == doctest::Approx((1 + std::cos(std::numbers::pi / 4)) / 2).epsilon(1e-12));
}

TEST_CASE("OneCycleLR cycles momentum and Adam's beta1") {
  auto opt = make_optimizer("adam", {0.1});
  OneCycleLR one(*opt, 1.0, 10);
  CHECK(opt->param_groups()[0].options().get_lr() == doctest::Approx(1.0 / 25));
  CHECK(momentum_of(*opt) == doctest::Approx(0.95));
  for (int i = 0; i < 2; ++i) one.step();  // the warm-up ends at step pct_start * 10 - 1 = 2
  CHECK(opt->param_groups()[0].options().get_lr() == doctest::Approx(1.0));
  CHECK(momentum_of(*opt) == doctest::Approx(0.85));
  for (int i = 0; i < 7; ++i) one.step();  // the last scheduled step, 9, reaches min_lr
  CHECK(opt->param_groups()[0].options().get_lr() == doctest::Approx(1.0 / 25 / 1e4));
  CHECK(momentum_of(*opt) == doctest::Approx(0.95));
  one.step();  // PyTorch allows one step past the schedule
  check_error([&] { one.step(); }, "Tried to step 12 times. The specified number of total steps is 10");

  auto plain = make_optimizer("sgd", {0.1});
  OneCycleLR no_momentum(*plain, 1.0, 10, 0.3, "cos", false);
  CHECK(momentum_of(*plain) == 0.9);  // left alone
}

TEST_CASE("ReduceLROnPlateau by hand") {
  auto opt = make_optimizer("sgd", {1.0});
  ReduceLROnPlateauScheduler plateau(*opt, ReduceLROnPlateauScheduler::min, 0.5, 1);
  // Best 1.0; two epochs without improvement exceed patience 1 -> lr halves.
  for (double m : {1.0, 1.0, 1.0}) plateau.step(m);
  CHECK(plateau.get_last_lr()[0] == 0.5);
  CHECK(plateau.num_bad_epochs() == 0);
  plateau.step(0.5);  // an improvement resets the count
  CHECK(plateau.best() == 0.5);
  CHECK(plateau.is_better(0.49, 0.5));
  CHECK(!plateau.is_better(0.49999, 0.5));  // within the relative threshold 1e-4
  // min_lr caps the reductions; changes below eps are skipped.
  auto opt2 = make_optimizer("sgd", {1.0});
  ReduceLROnPlateau capped(*opt2, ReduceLROnPlateau::min, 0.1, 0, 1e-4, ReduceLROnPlateau::rel, 0, {0.05});
  for (int i = 0; i < 5; ++i) capped.step(1.0);
  CHECK(capped.get_last_lr()[0] == 0.05);
}

TEST_CASE("scheduler errors use PyTorch's messages") {
  auto opt = make_optimizer("sgd", {0.1, 0.2});
  check_error([&] { LinearLR(*opt, 1.5); }, "Starting multiplicative factor expected to be between 0 and 1.");
  check_error([&] { LinearLR(*opt, 0.5, -1); },
              "Ending multiplicative factor expected to be between 0 and 1.");
  check_error([&] { CosineAnnealingWarmRestarts(*opt, 0); }, "Expected positive integer T_0, but got 0");
  check_error([&] { CosineAnnealingWarmRestarts(*opt, 2, 0); }, "Expected integer T_mult >= 1, but got 0");
  check_error([&] { OneCycleLR(*opt, 1.0, 0); }, "Expected positive integer total_steps, but got 0");
  check_error([&] { OneCycleLR(*opt, 1.0, 10, 1.5); },
              "Expected float between 0 and 1 pct_start, but got 1.5");
  check_error([&] { OneCycleLR(*opt, 1.0, 10, 0.3, "exp"); },
              "anneal_strategy must by one of 'cos' or 'linear', instead got exp");
  check_error(
      [&] {
        OneCycleLR(*opt, std::vector<double>{1, 2, 3}, 10);
      },
      "expected 2 values for max_lr, got 3");
  check_error([&] { ReduceLROnPlateau(*opt, ReduceLROnPlateau::min, 1.0); }, "Factor should be < 1.0.");
  check_error(
      [&] {
        ReduceLROnPlateau(*opt, ReduceLROnPlateau::min, 0.1, 10, 1e-4, ReduceLROnPlateau::rel, 0, {1, 2, 3});
      },
      "expected 2 min_lrs, got 3");
  check_error([&] { LambdaLR(*opt, std::vector<LambdaLR::LambdaFn>{[](int64_t) { return 1.0; }}); },
              "Expected 2 lr_lambdas, but got 1");

  Tensor p = ember::zeros({1}).requires_grad_();
  Adagrad adagrad({p}, AdagradOptions(0.1));
  check_error([&] { OneCycleLR(adagrad, 1.0, 10); },
              "optimizer must support momentum with `cycle_momentum` option enabled");

  auto a = std::make_shared<ExponentialLR>(*opt, 0.9);
  auto other = make_optimizer("sgd", {0.1, 0.2});
  auto b = std::make_shared<ExponentialLR>(*other, 0.9);
  check_error(
      [&] {
        SequentialLR(*opt, {a, b}, {3});
      },
      "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at "
      "index 1 to be different than the optimizer passed in.");
  check_error(
      [&] { SequentialLR(*opt, {a}, {3}); },
      "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
      "milestone points, but got number of schedulers 1 and the number of milestones to be equal to 1");
  StepLR s(*opt, 2);
  check_error([&] { s.load_state_dict(OrderedDict<std::string, Tensor>()); },
              "missing key 'base_lrs.0' in scheduler state dict");
}
