// Optimizers: trajectories against PyTorch 1.13 (fixtures/make_optim_fixtures.py), hand-worked
// first steps, zero_grad, parameter groups, the flat state dict (round trip, then stepping on
// bit-identically) and PyTorch's error messages.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/adamw.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sgd.h"
#include "op_check.h"
#include "optim/fixtures/optim_trajectories.h"

using namespace ember;
using namespace ember::optim;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::values;
namespace fx = ember::test::optim_fixtures;

namespace {

/// The fixture's two parameters ([3] and [2, 2]) as fresh leaves.
std::vector<Tensor> make_params(ScalarType dtype = kDouble) {
  std::vector<double> a(fx::kStart.begin(), fx::kStart.begin() + 3),
      b(fx::kStart.begin() + 3, fx::kStart.end());
  return {from_values(a, {3}, dtype).requires_grad_(), from_values(b, {2, 2}, dtype).requires_grad_()};
}

void set_grads(std::vector<Tensor>& params, int t) {
  const auto& g = fx::kGrads[t];
  params[0].mutable_grad() = from_values({g.begin(), g.begin() + 3}, {3}, params[0].dtype());
  params[1].mutable_grad() = from_values({g.begin() + 3, g.end()}, {2, 2}, params[1].dtype());
}

std::vector<double> flat(const std::vector<Tensor>& params) {
  std::vector<double> out;
  for (const Tensor& p : params)
    for (double v : values(p)) out.push_back(v);
  return out;
}

using Factory = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>&)>;

template <class Opt, class Options>
Factory single(Options o) {
  return [o](std::vector<Tensor>& p) { return std::make_unique<Opt>(p, o); };
}

/// The C++ spelling of each configuration in make_optim_fixtures.py.
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> f = {
      {"sgd_plain", single<SGD>(SGDOptions(0.1))},
      {"sgd_momentum", single<SGD>(SGDOptions(0.1).momentum(0.9))},
      {"sgd_dampening", single<SGD>(SGDOptions(0.1).momentum(0.9).dampening(0.3))},
      {"sgd_nesterov", single<SGD>(SGDOptions(0.1).momentum(0.9).nesterov(true))},
      {"sgd_weight_decay", single<SGD>(SGDOptions(0.1).momentum(0.5).weight_decay(0.01))},
      {"adam", single<Adam>(AdamOptions(0.01))},
      {"adam_amsgrad_wd",
       single<Adam>(AdamOptions(0.02).betas(std::make_tuple(0.8, 0.95)).weight_decay(0.1).amsgrad(true))},
      {"adamw", single<AdamW>(AdamWOptions(0.01))},
      {"adamw_amsgrad", single<AdamW>(AdamWOptions(0.01).weight_decay(0.1).amsgrad(true))},
      {"rmsprop", single<RMSprop>(RMSpropOptions(0.01))},
      {"rmsprop_momentum_wd", single<RMSprop>(RMSpropOptions(0.01).momentum(0.9).weight_decay(0.05))},
      {"rmsprop_centered", single<RMSprop>(RMSpropOptions(0.01).alpha(0.9).momentum(0.5).centered(true))},
      {"adagrad",
       single<Adagrad>(AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.5))},
      {"sgd_two_groups",
       [](std::vector<Tensor>& p) {
         std::vector<OptimizerParamGroup> groups;
         groups.emplace_back(std::vector<Tensor>{p[0]});
         groups.emplace_back(std::vector<Tensor>{p[1]},
                             std::make_unique<SGDOptions>(SGDOptions(0.01).momentum(0.5)));
         return std::make_unique<SGD>(std::move(groups), SGDOptions(0.1).momentum(0.9));
       }},
      {"adam_two_groups",
       [](std::vector<Tensor>& p) {
         std::vector<OptimizerParamGroup> groups;
         groups.emplace_back(std::vector<Tensor>{p[0]});
         groups.emplace_back(
             std::vector<Tensor>{p[1]},
             std::make_unique<AdamOptions>(AdamOptions(0.05).betas(std::make_tuple(0.5, 0.9))));
         return std::make_unique<Adam>(std::move(groups), AdamOptions(0.01));
       }},
      {"sgd_momentum_f32", single<SGD>(SGDOptions(0.1).momentum(0.9))},
      {"adam_f32", single<Adam>(AdamOptions(0.01))},
      {"rmsprop_centered_f32", single<RMSprop>(RMSpropOptions(0.01).alpha(0.9).momentum(0.5).centered(true))},
  };
  return f;
}

void check_trajectory(const fx::Trajectory& traj, ScalarType dtype, double tol) {
  INFO("optimizer config " << std::string(traj.name));
  auto params = make_params(dtype);
  auto opt = factories().at(traj.name)(params);
  for (int t = 0; t < fx::kSteps; ++t) {
    INFO("after step " << t + 1);
    set_grads(params, t);
    opt->step();
    check_close(from_values(flat(params), {fx::kNumel}), traj.after[t], tol, tol);
  }
}

}  // namespace

TEST_CASE("optimizer trajectories match PyTorch in float64") {
  for (const auto& traj : fx::kTrajectories) check_trajectory(traj, kDouble, 1e-12);
}

TEST_CASE("optimizer trajectories match PyTorch in float32") {
  for (const auto& traj : fx::kTrajectoriesF32) {
    check_trajectory(traj, kFloat, 1e-6);
    auto params = make_params(kFloat);
    auto opt = factories().at(traj.name)(params);
    set_grads(params, 0);
    opt->step();
    CHECK(params[0].dtype() == kFloat);  // updates stay in the parameter's dtype
  }
}

TEST_CASE("first steps by hand") {
  // SGD: p - lr g = 1 - 0.1 * 2 = 0.8.
  Tensor p = scalar_tensor(1.0, kDouble).requires_grad_();
  p.mutable_grad() = scalar_tensor(2.0, kDouble);
  SGD sgd({p}, SGDOptions(0.1));
  sgd.step();
  CHECK(p.item<double>() == doctest::Approx(0.8));

  // Adam's first step moves by lr * g / (|g| + eps') whatever |g| is: m^ = g, v^ = g^2.
  Tensor q = from_values({1.0, 1.0}, {2}).requires_grad_();
  q.mutable_grad() = from_values({3.0, -0.001}, {2});
  Adam adam({q}, AdamOptions(0.1));
  adam.step();
  check_close(q, {1.0 - 0.1 * 3.0 / (3.0 + 1e-8), 1.0 + 0.1 * 0.001 / (0.001 + 1e-8)}, 1e-12, 1e-12);

  // Adagrad with sum0 = 0: p - lr g / (|g| + eps) = 1 - 0.5 = 0.5 for g = 4.
  Tensor r = scalar_tensor(1.0, kDouble).requires_grad_();
  r.mutable_grad() = scalar_tensor(4.0, kDouble);
  Adagrad adagrad({r}, AdagradOptions(0.5));
  adagrad.step();
  CHECK(r.item<double>() == doctest::Approx(0.5));

  // RMSprop: v = (1 - 0.99) g^2, p - lr g / sqrt(v) = 1 - 0.01 / 0.1 = 0.9 (up to eps).
  Tensor s = scalar_tensor(1.0, kDouble).requires_grad_();
  s.mutable_grad() = scalar_tensor(2.0, kDouble);
  RMSprop rms({s}, RMSpropOptions(0.01));
  rms.step();
  CHECK(s.item<double>() == doctest::Approx(0.9).epsilon(1e-6));
}

TEST_CASE("updates are in place on the model's tensors and skip parameters without grad") {
  auto params = make_params();
  Tensor keep = params[0];
  void* data = params[0].data_ptr();
  std::vector<double> before1 = values(params[1]);
  Adam opt(params, AdamOptions(0.1));
  params[0].mutable_grad() = ember::ones({3}, kDouble);  // params[1] has no grad
  opt.step();
  CHECK(opt.parameters()[0].is_same(keep));
  CHECK(params[0].data_ptr() == data);
  CHECK(params[0].requires_grad());
  CHECK(params[0].is_leaf());
  CHECK(values(params[1]) == before1);
  CHECK(opt.state().count(params[0].unsafeGetTensorImpl()) == 1);
  CHECK(opt.state().count(params[1].unsafeGetTensorImpl()) == 0);
  auto& st = static_cast<AdamParamState&>(*opt.state().at(params[0].unsafeGetTensorImpl()));
  CHECK(st.step() == 1);
  check_close(st.exp_avg(), {0.1, 0.1, 0.1}, 1e-15);  // (1 - beta1) g
}

TEST_CASE("step runs the closure with grad mode on and returns its loss") {
  Tensor p = from_values({3.0}, {1}).requires_grad_();
  SGD opt({p}, SGDOptions(0.25));
  NoGradGuard outer;  // the closure still records its graph
  Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (p * p).sum();  // dl/dp = 2p = 6
    l.backward();
    return l;
  });
  CHECK(loss.item<double>() == 9.0);
  CHECK(p.item<double>() == doctest::Approx(3.0 - 0.25 * 6.0));
}

TEST_CASE("zero_grad resets or zeroes every gradient") {
  auto params = make_params();
  SGD opt(params, SGDOptions(0.1));
  set_grads(params, 0);
  opt.zero_grad();  // set_to_none = true by default, as PyTorch 2 and libtorch
  CHECK(!params[0].grad().defined());
  CHECK(!params[1].grad().defined());

  set_grads(params, 0);
  Tensor g = params[1].grad();
  opt.zero_grad(false);
  CHECK(params[1].grad().is_same(g));  // zeroed in place
  CHECK(values(params[1].grad()) == std::vector<double>(4, 0.0));
  opt.zero_grad(false);  // no error on grads already zero; undefined grads stay undefined
  params[0].mutable_grad().reset();
  opt.zero_grad(false);
  CHECK(!params[0].grad().defined());
}

TEST_CASE("parameter groups: add_param_group, per-group options, sizes") {
  auto params = make_params();
  SGD opt({params[0]}, SGDOptions(0.1).momentum(0.9));
  CHECK(opt.param_groups().size() == 1);
  CHECK(opt.size() == 1);
  opt.add_param_group(OptimizerParamGroup({params[1]}, std::make_unique<SGDOptions>(SGDOptions(0.5))));
  CHECK(opt.param_groups().size() == 2);
  CHECK(opt.size() == 2);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.5);
  CHECK(static_cast<SGDOptions&>(opt.defaults()).momentum() == 0.9);

  // Group 1 is plain SGD at lr 0.5: p - 0.5 * 1.
  params[0].mutable_grad() = ember::ones({3}, kDouble);
  params[1].mutable_grad() = ember::ones({2, 2}, kDouble);
  std::vector<double> b = values(params[1]);
  opt.step();
  for (size_t i = 0; i < b.size(); ++i) CHECK(values(params[1])[i] == doctest::Approx(b[i] - 0.5));

  // A group without options takes the defaults.
  Tensor extra = ember::zeros({2}, kDouble).requires_grad_();
  opt.add_param_group(OptimizerParamGroup({extra}));
  auto& o = static_cast<SGDOptions&>(opt.param_groups()[2].options());
  CHECK(o == SGDOptions(0.1).momentum(0.9));
  opt.param_groups()[2].options().set_lr(0.3);
  CHECK(opt.defaults().get_lr() == 0.1);  // groups hold copies of the defaults
}

TEST_CASE("add_param_group errors") {
  auto params = make_params();
  SGD opt({params[0]}, SGDOptions(0.1));
  check_error([&] { opt.add_param_group(OptimizerParamGroup({params[0]})); },
              "some parameters appear in more than one parameter group");
  check_error([&] { opt.add_param_group(OptimizerParamGroup({params[1] * 2})); },
              "can't optimize a non-leaf Tensor");
  check_error([&] { opt.add_param_group(OptimizerParamGroup({Tensor()})); },
              "optimizer can only optimize Tensors");
  CHECK(opt.param_groups().size() == 1);  // failed adds change nothing
  check_error([&] { SGD({params[0], params[0] * 1}, SGDOptions(0.1)); }, "can't optimize a non-leaf Tensor");
  check_error([&] { SGD(std::vector<Tensor>{}, SGDOptions(0.1)); }, "optimizer got an empty parameter list");
}

TEST_CASE("option errors use PyTorch's messages") {
  auto p = make_params();
  check_error([&] { SGD(p, SGDOptions(-1)); }, "Invalid learning rate: -1");
  check_error([&] { SGD(p, SGDOptions(0.1).momentum(-0.5)); }, "Invalid momentum value: -0.5");
  check_error([&] { SGD(p, SGDOptions(0.1).weight_decay(-1)); }, "Invalid weight_decay value: -1");
  check_error([&] { SGD(p, SGDOptions(0.1).nesterov(true)); },
              "Nesterov momentum requires a momentum and zero dampening");
  check_error([&] { SGD(p, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)); },
              "Nesterov momentum requires a momentum and zero dampening");
  check_error([&] { Adam(p, AdamOptions(-1)); }, "Invalid learning rate: -1");
  check_error([&] { Adam(p, AdamOptions(0.1).eps(-1)); }, "Invalid epsilon value: -1");
  check_error([&] { Adam(p, AdamOptions(0.1).betas(std::make_tuple(1.0, 0.9))); },
              "Invalid beta parameter at index 0: 1");
  check_error([&] { AdamW(p, AdamWOptions(0.1).betas(std::make_tuple(0.9, -0.1))); },
              "Invalid beta parameter at index 1: -0.1");
  check_error([&] { AdamW(p, AdamWOptions(0.1).weight_decay(-1)); }, "Invalid weight_decay value: -1");
  check_error([&] { RMSprop(p, RMSpropOptions(0.1).alpha(-1)); }, "Invalid alpha value: -1");
  check_error([&] { RMSprop(p, RMSpropOptions(-0.1)); }, "Invalid learning rate: -0.1");
  check_error([&] { Adagrad(p, AdagradOptions(0.1).lr_decay(-1)); }, "Invalid lr_decay value: -1");
  check_error([&] { Adagrad(p, AdagradOptions(0.1).initial_accumulator_value(-1)); },
              "Invalid initial_accumulator_value value: -1");
}

TEST_CASE("options defaults are PyTorch's") {
  CHECK(AdamOptions().lr() == 1e-3);
  CHECK(AdamOptions().betas() == std::make_tuple(0.9, 0.999));
  CHECK(AdamOptions().eps() == 1e-8);
  CHECK(AdamWOptions().weight_decay() == 1e-2);
  CHECK(RMSpropOptions().lr() == 1e-2);
  CHECK(RMSpropOptions().alpha() == 0.99);
  CHECK(AdagradOptions().eps() == 1e-10);
  CHECK(SGDOptions(0.1).momentum() == 0);
}

TEST_CASE("state_dict layout") {
  auto params = make_params();
  Adam opt(params, AdamOptions(0.01).amsgrad(true));
  set_grads(params, 0);
  opt.step();
  auto sd = opt.state_dict();
  std::vector<std::string> expected = {"state.0.step",
                                       "state.0.exp_avg",
                                       "state.0.exp_avg_sq",
                                       "state.0.max_exp_avg_sq",
                                       "state.1.step",
                                       "state.1.exp_avg",
                                       "state.1.exp_avg_sq",
                                       "state.1.max_exp_avg_sq",
                                       "param_groups.0.lr",
                                       "param_groups.0.betas.0",
                                       "param_groups.0.betas.1",
                                       "param_groups.0.eps",
                                       "param_groups.0.weight_decay",
                                       "param_groups.0.amsgrad",
                                       "param_groups.0.params"};
  CHECK(sd.keys() == expected);
  CHECK(sd["state.0.step"].dim() == 0);
  CHECK(sd["state.0.step"].dtype() == kFloat);
  CHECK(sd["state.0.step"].item<double>() == 1.0);
  CHECK(sd["param_groups.0.betas.1"].dtype() == kDouble);
  CHECK(sd["param_groups.0.betas.1"].item<double>() == 0.999);
  CHECK(sd["param_groups.0.amsgrad"].item<double>() == 1.0);
  CHECK(sd["param_groups.0.params"].dtype() == kLong);
  CHECK(values(sd["param_groups.0.params"]) == std::vector<double>{0, 1});
  CHECK(test::shape(sd["state.1.exp_avg"]) == std::vector<int64_t>{2, 2});

  // A snapshot: stepping on does not change it.
  std::vector<double> m = values(sd["state.0.exp_avg"]);
  set_grads(params, 1);
  opt.step();
  CHECK(values(sd["state.0.exp_avg"]) == m);

  // Indices count across groups; SGD without momentum has no state.
  SGD two({OptimizerParamGroup({params[0]}), OptimizerParamGroup({params[1]})}, SGDOptions(0.1));
  auto sd2 = two.state_dict();
  CHECK(values(sd2["param_groups.1.params"]) == std::vector<double>{1});
  CHECK(!sd2.contains("state.0.momentum_buffer"));
  CHECK(sd2["param_groups.1.nesterov"].item<double>() == 0.0);
}

TEST_CASE("state_dict round trip continues bit-identically") {
  for (const auto& traj : fx::kTrajectories) {
    INFO("optimizer config " << std::string(traj.name));
    const auto& make = factories().at(traj.name);
    auto params_a = make_params();
    auto a = make(params_a);
    for (int t = 0; t < 2; ++t) {
      set_grads(params_a, t);
      a->step();
    }
    auto sd = a->state_dict();
    // A fresh optimizer over fresh tensors holding the same values, its options changed so the
    // load must restore them.
    std::vector<Tensor> params_b;
    for (const Tensor& p : params_a) params_b.push_back(p.detach().clone().requires_grad_());
    auto b = make(params_b);
    for (auto& g : b->param_groups()) g.options().set_lr(123.0);
    b->load_state_dict(sd);
    for (int t = 2; t < fx::kSteps; ++t) {
      set_grads(params_a, t);
      set_grads(params_b, t);
      a->step();
      b->step();
      CHECK(flat(params_a) == flat(params_b));  // exact
      check_close(from_values(flat(params_b), {fx::kNumel}), traj.after[t], 1e-12, 1e-12);
    }
  }
}

TEST_CASE("load_state_dict casts state to the parameters' dtype and checks groups") {
  auto params64 = make_params();
  Adam a(params64, AdamOptions(0.01));
  set_grads(params64, 0);
  a.step();
  auto sd = a.state_dict();

  auto params32 = make_params(kFloat);
  Adam b(params32, AdamOptions(0.01));
  b.load_state_dict(sd);
  auto& st = static_cast<AdamParamState&>(*b.state().at(params32[0].unsafeGetTensorImpl()));
  CHECK(st.exp_avg().dtype() == kFloat);
  CHECK(st.step() == 1);

  auto p = make_params();
  Adam two({OptimizerParamGroup({p[0]}), OptimizerParamGroup({p[1]})}, AdamOptions(0.01));
  check_error([&] { two.load_state_dict(sd); },
              "loaded state dict has a different number of parameter groups");
  Adam one({p[0]}, AdamOptions(0.01));
  check_error(
      [&] { one.load_state_dict(sd); },
      "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
  auto broken = sd;
  broken.erase("param_groups.0.eps");
  Adam c(make_params(), AdamOptions(0.01));
  check_error([&] { c.load_state_dict(broken); }, "missing key 'param_groups.0.eps'");
  CHECK(c.state().empty());  // a failed load changes nothing
  auto wrong = sd;
  wrong.insert("state.0.bogus", scalar_tensor(1.0));
  check_error([&] { c.load_state_dict(wrong); }, "Adam state has no entry named 'bogus'");
}

TEST_CASE("state keeps libtorch's param-state types and clones") {
  auto params = make_params();
  RMSprop opt(params, RMSpropOptions(0.01).momentum(0.9).centered(true));
  set_grads(params, 0);
  opt.step();
  auto& st = static_cast<RMSpropParamState&>(*opt.state().at(params[1].unsafeGetTensorImpl()));
  CHECK(st.step() == 1);
  CHECK(st.momentum_buffer().defined());
  CHECK(st.grad_avg().defined());
  auto copy = st.clone();
  CHECK(dynamic_cast<RMSpropParamState*>(copy.get()) != nullptr);
  auto opts = opt.defaults().clone();
  CHECK(static_cast<RMSpropOptions&>(*opts) == static_cast<RMSpropOptions&>(opt.defaults()));
}
