// InstanceNorm1d/2d/3d, LocalResponseNorm and CrossMapLRN2d (nn/modules/{instancenorm,
// normalization}.h) with their functional forms: hand-worked statistics, PyTorch numbers
// (tests/nn/fixtures/make_norm_expected.py), float64 gradcheck, parameter and buffer names,
// reprs, option defaults and errors.
#include "ember/core/ops/instance_norm.h"
#include "ember/nn/functional/instancenorm.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/modules/instancenorm.h"
#include "ember/nn/modules/normalization.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::keys_of;
using ember::test::rand_leaf;
using ember::test::repr;
using ember::test::seq;
using ember::test::shape;
namespace F = ember::nn::functional;

TEST_CASE("instance_norm: each (n, c) plane by its own statistics") {
  // Plane {0, 1, 2, 3}: mean 1.5, biased variance 1.25.
  Tensor x = seq({2, 3, 4});
  Tensor y = F::instance_norm(x, F::InstanceNormFuncOptions().eps(0));
  const double s = std::sqrt(1.25);
  check_close(y[0][0], {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, 1e-12);
  check_close(y[1][2], {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, 1e-12);
  // weight and bias per channel.
  Tensor w = tensor(std::vector<double>{1, 2, 3}), b = tensor(std::vector<double>{0, -1, 1});
  Tensor yw = F::instance_norm(x, F::InstanceNormFuncOptions().weight(w).bias(b).eps(0));
  check_close(yw[1][1], {-3 / s - 1, -1 / s - 1, 1 / s - 1, 3 / s - 1}, 1e-12);
  // Running statistics: the batch average of the instance means and unbiased variances.
  Tensor rm = zeros({3}, kDouble), rv = ones({3}, kDouble);
  F::instance_norm(x, F::InstanceNormFuncOptions().running_mean(rm).running_var(rv).momentum(0.5));
  // Channel 0: means 1.5 and 13.5, unbiased variance 5 / 3 each.
  CHECK(rm[0].item<double>() == doctest::Approx(0.5 * 7.5));
  CHECK(rv[0].item<double>() == doctest::Approx(0.5 + 0.5 * 5.0 / 3.0));
  // use_input_stats(false) normalises by the running statistics.
  Tensor e = F::instance_norm(
      x, F::InstanceNormFuncOptions().running_mean(rm).running_var(rv).use_input_stats(false).eps(0));
  check_close(e, (x - rm.view({1, 3, 1})) / rv.view({1, 3, 1}).sqrt(), 1e-12);
}

TEST_CASE("InstanceNorm1d: PyTorch's outputs and running statistics") {
  // tests/nn/fixtures/make_norm_expected.py
  Tensor x = seq({2, 3, 4}).pow(1.5) / 10;
  nn::InstanceNorm1d m(nn::InstanceNorm1dOptions(3).momentum(0.3).track_running_stats(true));
  m->to(kDouble);
  check_close(m(x), {-1.140863310528, -0.635193964037, 0.289385585238,  1.486671689327,  -1.299142803766,
                     -0.488904671053, 0.407000282192,  1.381047192627,  -1.31752345191,  -0.471048579558,
                     0.423860500956,  1.364711530512,  -1.324794071397, -0.463913785934, 0.43074776439,
                     1.357960092941,  -1.328694436212, -0.460068660087, 0.434495738662,  1.354267357637,
                     -1.331127732011, -0.457663440968, 0.436853217129,  1.35193795585},
              1e-10);
  check_close(m->running_mean, {0.7797896966928157, 1.2962885454471387, 1.938386800274756}, 1e-12);
  check_close(m->running_var, {0.7837066635969441, 0.8292108681695238, 0.8742714971940364}, 1e-12);
  CHECK(m->num_batches_tracked.item<int64_t>() == 0);  // PyTorch's instance norms do not count
  m->eval();
  check_close(m(x), {-0.880841873795, -0.7678829725,  -0.561345853391, -0.293890205165, -0.545003310242,
                     -0.195751693963, 0.190426443451, 0.610287523874,  0.346892426992,  0.81453325253,
                     1.308931887224,  1.828711465498, 3.814771475243,  4.41378656451,   5.036307230252,
                     5.681477279021,  5.604682321947, 6.273767639438,  6.962832966769,  7.671314919086,
                     7.492683145901,  8.219009462156, 8.96284180398,   9.723777464604},
              1e-10);
  // Without running statistics evaluation still uses the instance's own.
  nn::InstanceNorm1d plain(3);
  plain->eval();
  check_close(plain(x.to(kFloat)), F::instance_norm(x, {}), 1e-5);
}

TEST_CASE("InstanceNorm2d/3d: unbatched input, parameters and buffers by PyTorch's names") {
  manual_seed(4);
  nn::InstanceNorm2d m(nn::InstanceNorm2dOptions(3).affine(true).track_running_stats(true));
  CHECK(keys_of(m->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(keys_of(m->named_buffers()) ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  check_close(m->weight, {1, 1, 1});
  check_close(m->bias, {0, 0, 0});
  Tensor x = rand({3, 4, 5});
  check_close(m(x), m(x.unsqueeze(0))[0], 1e-6);
  nn::InstanceNorm3d plain(2);
  CHECK(plain->parameters().empty());
  CHECK(plain->buffers().empty());
  CHECK(shape(plain(rand({2, 2, 3, 4, 5}))) == std::vector<int64_t>{2, 2, 3, 4, 5});
  // reset() brings the running statistics back.
  {
    NoGradGuard g;
    m->running_mean.fill_(3);
    m->weight.fill_(2);
  }
  m->reset_parameters();
  check_close(m->running_mean, {0, 0, 0});
  check_close(m->weight, {1, 1, 1});
}

TEST_CASE("instance_norm: gradcheck") {
  manual_seed(5);
  Tensor x = rand_leaf({2, 3, 4}), w = rand_leaf({3}), b = rand_leaf({3});
  check_grad(
      [](const TensorList& t) {
        return F::instance_norm(t[0], F::InstanceNormFuncOptions().weight(t[1]).bias(t[2]));
      },
      {x, w, b});
  check_gradgrad(
      [](const TensorList& t) { return F::instance_norm(t[0], F::InstanceNormFuncOptions().weight(t[1])); },
      {x, w});
  Tensor x3 = rand_leaf({2, 2, 2, 3, 2});
  check_grad([](const TensorList& t) { return F::instance_norm(t[0], {}); }, {x3});
  // Evaluation mode: an affine map of the input.
  Tensor rm = rand({3}, kDouble), rv = rand({3}, kDouble) + 0.5;
  check_grad(
      [&](const TensorList& t) {
        return F::instance_norm(
            t[0], F::InstanceNormFuncOptions().running_mean(rm).running_var(rv).use_input_stats(false));
      },
      {x});
}

TEST_CASE("instance norms: reprs, option defaults, PyTorch's errors") {
  CHECK(repr(*nn::InstanceNorm2d(3)) ==
        "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
  CHECK(repr(*nn::InstanceNorm1d(
            nn::InstanceNorm1dOptions(4).eps(1e-3).momentum(0.2).affine(true).track_running_stats(true))) ==
        "InstanceNorm1d(4, eps=0.001, momentum=0.2, affine=True, track_running_stats=True)");
  nn::InstanceNormOptions o(5);
  CHECK(o.eps() == 1e-5);
  CHECK(o.momentum() == 0.1);
  CHECK(!o.affine());
  CHECK(!o.track_running_stats());
  F::InstanceNormFuncOptions f;
  CHECK(f.use_input_stats());
  CHECK(!f.running_mean().defined());
  CHECK(f.momentum() == 0.1);
  check_error([] { nn::InstanceNorm1d(3)(seq({2, 3, 4, 5})); }, "expected 2D or 3D input (got 4D input)");
  check_error([] { nn::InstanceNorm2d(3)(seq({2, 3})); }, "expected 3D or 4D input (got 2D input)");
  check_error([] { nn::InstanceNorm3d(3)(seq({2, 3, 3})); }, "expected 4D or 5D input (got 3D input)");
  check_error(
      [] {
        nn::InstanceNorm2d(nn::InstanceNorm2dOptions(3).affine(true))(seq({2, 4, 3, 3}, kFloat));
      },
      "expected input's size at dim=1 to match num_features (3), but got: 4.");
  check_error(
      [] {
        F::instance_norm(seq({2, 3, 1}));
      },
      "Expected more than 1 spatial element when training, got input size [2, 3, 1]");
  check_error(
      [] {
        F::instance_norm(seq({2, 3, 4}), F::InstanceNormFuncOptions().use_input_stats(false));
      },
      "Expected running_mean and running_var to be defined when use_input_stats is false");
}

TEST_CASE("local_response_norm and CrossMapLRN2d: PyTorch numbers") {
  // tests/nn/fixtures/make_norm_expected.py
  Tensor x = (seq({1, 6, 1, 2}) - 5) / 3;
  check_close(F::local_response_norm(x, F::LocalResponseNormFuncOptions(3).alpha(0.5).beta(0.75).k(1.5)),
              {-0.9454110830267523, -0.8336677975501641, -0.5635751404628427, -0.41683389877508203,
               -0.22352864970778893, 0.0, 0.22352864970778893, 0.41683389877508203, 0.5635751404628427,
               0.6632750043119614, 0.9454110830267523, 1.017270814589567},
              1e-12);
  check_close(
      nn::LocalResponseNorm(nn::LocalResponseNormOptions(4).alpha(0.5).beta(0.75).k(1.5))(x.view({1, 6, 2})),
      {-1.0014559787364188, -0.8660254037844387, -0.5977193895345638, -0.43301270189221935,
       -0.19820118583378685, 0.0, 0.21650635094610968, 0.42313374800080794, 0.5946035575013605,
       0.7191263840612023, 0.9961989825576063, 1.0786895760918036},
      1e-12);
  check_close(nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(3).alpha(0.5).beta(0.75).k(2))(x),
              {-0.8071008620963039, -0.6979536443265746, -0.481718462746324, -0.3489768221632873,
               -0.1597357760615681, 0.0, 0.1597357760615681, 0.3194715521231362, 0.42688742182824163,
               0.5404800619228137, 0.7146719157955367, 0.8245002936762509},
              1e-12);
  check_close(nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(4).alpha(0.5).beta(0.75).k(2))(x),
              {-0.8453433103561169, -0.7191263840612023, -0.5050793339479747, -0.35956319203060116,
               -0.16765779062439137, 0.0, 0.16765779062439137, 0.33531558124878275, 0.4579064350045649,
               0.584921783534441, 0.7659952799135324, 0.8897694131419117},
              1e-12);
  // Channel 0 stays in the sums of later channels: 1 / (1 + (4 + 1) / 3) at channel 5.
  Tensor y = zeros({1, 6, 1, 1}, kDouble);
  y.index_put_({0, 0}, 2.0);
  y.index_put_({0, 5}, 1.0);
  check_close(nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(3).alpha(1).beta(1).k(1))(y),
              {0.8571428571428572, 0, 0, 0, 0, 0.375}, 1e-12);
}

TEST_CASE("local_response_norm and CrossMapLRN2d: gradcheck, reprs, defaults, errors") {
  manual_seed(6);
  Tensor x = rand_leaf({2, 5, 3}), x4 = rand_leaf({2, 5, 2, 2}), x5 = rand_leaf({1, 4, 2, 2, 2});
  auto o = F::LocalResponseNormFuncOptions(3).alpha(0.3).beta(0.75).k(1.2);
  check_grad([&](const TensorList& t) { return F::local_response_norm(t[0], o); }, {x});
  check_grad(
      [&](const TensorList& t) { return F::local_response_norm(t[0], F::LocalResponseNormFuncOptions(2)); },
      {x5});
  check_gradgrad([&](const TensorList& t) { return F::local_response_norm(t[0], o); }, {x4});
  nn::CrossMapLRN2d cm(nn::CrossMapLRN2dOptions(3).alpha(0.3).k(2));
  check_grad([&](const TensorList& t) { return cm(t[0]); }, {x4});

  CHECK(repr(*nn::LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
  CHECK(repr(*nn::LocalResponseNorm(nn::LocalResponseNormOptions(3).alpha(0.001).beta(0.5).k(2))) ==
        "LocalResponseNorm(3, alpha=0.001, beta=0.5, k=2.0)");
  CHECK(repr(*nn::CrossMapLRN2d(3)) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)");
  CHECK(repr(*nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(5).alpha(1e-3).beta(0.5).k(2))) ==
        "CrossMapLRN2d(5, alpha=0.001, beta=0.5, k=2)");
  nn::LocalResponseNormOptions lo(4);
  CHECK(lo.alpha() == 1e-4);
  CHECK(lo.beta() == 0.75);
  CHECK(lo.k() == 1.0);
  nn::CrossMapLRN2dOptions co(4);
  CHECK(co.k() == 1);
  CHECK(nn::LocalResponseNorm(2)->parameters().empty());
  check_error(
      [] {
        F::local_response_norm(seq({2, 3}), F::LocalResponseNormFuncOptions(2));
      },
      "Expected 3D or higher dimensionality input (got 2 dimensions)");
  check_error(
      [] {
        nn::CrossMapLRN2d(3)(seq({2, 3, 4}));
      },
      "CrossMapLRN2d: Expected input to be 4D, got 3D instead.");
}
