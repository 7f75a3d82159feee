// CTC loss (core/ops/ctc_loss.h, F::ctc_loss, nn::CTCLoss): values against PyTorch's for
// padded and concatenated targets, each reduction, a non-zero blank and zero_infinity (from
// tests/nn/fixtures/make_loss_fixture.py), small cases by hand, the log_probs gradient against
// PyTorch's and by float64 gradcheck through log_softmax, and PyTorch's error texts.
#include <cmath>
#include <limits>

#include "ember/nn/functional/loss.h"
#include "ember/nn/modules/loss.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::from_values;
using ember::test::longs;
using ember::test::values;
namespace F = ember::nn::functional;

namespace {

/// The fixture's logits, T = 5, N = 2, C = 4.
Tensor logits() {
  return from_values({0.1,  0.6, -0.2, 0.3,  0.5, -0.1, 0.2,  0.9, -0.3, 0.2,  0.8, 0.1, 0.2, 0.4,
                      -0.6, 0.7, 0.4,  -0.5, 0.3, 0.6,  0.9,  0.1, 0.0,  -0.2, 0.0, 0.3, 0.5, -0.4,
                      -0.1, 0.3, 0.2,  0.8,  0.7, 0.1,  -0.1, 0.2, 0.3,  -0.4, 0.6, 0.1},
                     {5, 2, 4});
}
Tensor LP() { return logits().log_softmax(2); }
Tensor TG() { return longs({1, 2, 3, 3}).view({2, 2}); }
Tensor IL() { return longs({5, 4}); }
Tensor TL() { return longs({2, 2}); }

F::CTCLossFuncOptions with(nn::loss_reduction_t r) { return F::CTCLossFuncOptions().reduction(r); }

}  // namespace

TEST_CASE("ctc_loss: PyTorch's values for padded and concatenated targets, each reduction") {
  std::vector<double> none = {3.0994304961094445, 2.6769986640567183};
  check_close(F::ctc_loss(LP(), TG(), IL(), TL(), with(kNone)), none, 1e-12);
  check_close(F::ctc_loss(LP(), TG(), IL(), TL()), {1.4441072900415408}, 1e-12);
  check_close(F::ctc_loss(LP(), TG(), IL(), TL(), with(kSum)), {5.776429160166163}, 1e-12);
  // The same targets concatenated.
  check_close(F::ctc_loss(LP(), longs({1, 2, 3, 3}), IL(), TL(), with(kNone)), none, 1e-12);
  // Padding beyond the target lengths is never read.
  Tensor padded = longs({1, 2, 0, 3, 3, 2}).view({2, 3});
  check_close(F::ctc_loss(LP(), padded, IL(), TL(), with(kNone)), none, 1e-12);
  // The module, and float32 input.
  nn::CTCLoss m(nn::CTCLossOptions().reduction(kSum));
  check_close(m(LP(), TG(), IL(), TL()), {5.776429160166163}, 1e-12);
  Tensor f32 = F::ctc_loss(LP().to(kFloat), TG(), IL(), TL());
  CHECK(f32.dtype() == kFloat);
  check_close(f32, {1.4441072900415408}, 1e-5);
}

TEST_CASE("ctc_loss: another blank, and zero_infinity") {
  Tensor tg = longs({2, 0, 3, 3}).view({2, 2});
  Tensor tl = longs({1, 2});
  auto opt = [](nn::loss_reduction_t r) { return F::CTCLossFuncOptions().blank(1).reduction(r); };
  check_close(F::ctc_loss(LP(), tg, IL(), tl, opt(kNone)), {3.982141013634802, 3.3219303593283067}, 1e-12);
  // Mean divides each loss by its own target length: (3.98 / 1 + 3.32 / 2) / 2.
  check_close(F::ctc_loss(LP(), tg, IL(), tl, opt(kMean)), {2.8215530966494775}, 1e-12);
  check_close(F::ctc_loss(LP(), tg, IL(), tl, opt(kSum)), {7.304071372963109}, 1e-12);

  // Three labels with a repeat need four steps; sample 0 has three: infinite loss, or 0.
  Tensor tg2 = longs({1, 1, 2, 2, 0, 0}).view({2, 3});
  Tensor il2 = longs({3, 5}), tl2 = longs({3, 1});
  double inf = std::numeric_limits<double>::infinity();
  check_close(F::ctc_loss(LP(), tg2, il2, tl2, with(kNone)), {inf, 4.51147495013071}, 1e-12);
  auto zi = [](nn::loss_reduction_t r) { return F::CTCLossFuncOptions().zero_infinity(true).reduction(r); };
  check_close(F::ctc_loss(LP(), tg2, il2, tl2, zi(kNone)), {0.0, 4.51147495013071}, 1e-12);
  check_close(F::ctc_loss(LP(), tg2, il2, tl2, zi(kMean)), {2.255737475065355}, 1e-12);
  check_close(F::ctc_loss(LP(), tg2, il2, tl2, zi(kSum)), {4.51147495013071}, 1e-12);
  // zero_infinity also zeroes that sample's gradient.
  Tensor lp = LP().detach().requires_grad_(true);
  F::ctc_loss(lp, tg2, il2, tl2, zi(kSum)).backward();
  std::vector<double> g = values(lp.grad());
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t c = 0; c < 4; ++c) CHECK(g[static_cast<size_t>(t * 8 + c)] == 0.0);
  for (double v : g) CHECK(std::isfinite(v));
}

TEST_CASE("ctc_loss: small cases by hand") {
  // T = 1, target [1]: the one path emits label 1.
  Tensor lp1 = from_values({std::log(0.3), std::log(0.7)}, {1, 1, 2});
  check_close(F::ctc_loss(lp1, longs({1}), longs({1}), longs({1}), with(kNone)), {-std::log(0.7)}, 1e-12);
  // T = 2, target [1]: paths (1, 1), (b, 1), (1, b).
  double p0b = 0.4, p01 = 0.6, p1b = 0.3, p11 = 0.7;
  Tensor lp2 = from_values({std::log(p0b), std::log(p01), std::log(p1b), std::log(p11)}, {2, 1, 2});
  double p = p01 * p11 + p0b * p11 + p01 * p1b;
  check_close(F::ctc_loss(lp2, longs({1}), longs({2}), longs({1}), with(kNone)), {-std::log(p)}, 1e-12);
  // Target [1, 1] needs (1, b, 1): T = 3.
  Tensor lp3 = from_values(
      {std::log(0.2), std::log(0.8), std::log(0.5), std::log(0.5), std::log(0.1), std::log(0.9)}, {3, 1, 2});
  check_close(F::ctc_loss(lp3, longs({1, 1}), longs({3}), longs({2}), with(kNone)),
              {-std::log(0.8 * 0.5 * 0.9)}, 1e-12);
  // An empty target: all blanks; an empty input with an empty target: loss 0, with a
  // non-empty one: infinite (padded targets; a concatenated empty target is empty).
  Tensor pad = longs({1, 1}).view({1, 2});
  check_close(F::ctc_loss(lp3, pad, longs({3}), longs({0}), with(kNone)), {-std::log(0.2 * 0.5 * 0.1)},
              1e-12);
  check_close(F::ctc_loss(lp3, longs({}), longs({3}), longs({0}), with(kNone)), {-std::log(0.2 * 0.5 * 0.1)},
              1e-12);
  check_close(F::ctc_loss(lp3, pad, longs({0}), longs({0}), with(kNone)), {0.0}, 0);
  check_close(F::ctc_loss(lp3, pad, longs({0}), longs({1}), with(kNone)),
              {std::numeric_limits<double>::infinity()}, 0);
  // Unbatched: (T, C) log_probs, 1-d target, 0-d lengths.
  Tensor u = F::ctc_loss(lp3.squeeze(1), longs({1, 1}), tensor(int64_t{3}), tensor(int64_t{2}), with(kNone));
  CHECK(u.dim() == 0);
  check_close(u, {-std::log(0.8 * 0.5 * 0.9)}, 1e-12);
}

TEST_CASE("ctc_loss: the log_probs gradient is PyTorch's, and gradcheck passes through log_softmax") {
  // PyTorch's gradient of a log_probs leaf (reduction sum); rows past a sample's input
  // length are 0.
  Tensor lp = LP().detach().requires_grad_(true);
  F::ctc_loss(lp, TG(), IL(), TL(), with(kSum)).backward();
  check_close(lp.grad(),
              {-0.003418097464064851,
               -0.4221393857242763,
               0.16066525681498178,
               0.2648922263733592,
               0.002689830360303569,
               0.14513241616323921,
               0.19590827022273433,
               -0.3437305167462775,
               -0.04412847438289477,
               -0.2693942953161787,
               0.10472153330891804,
               0.2088012363901555,
               -0.11623247626971031,
               0.28276792458348365,
               0.10402450607698054,
               -0.27055995439075425,
               -0.07177724717248779,
               -0.0027606786990765075,
               -0.27119332344044816,
               0.3457312493120121,
               -0.4322281022262194,
               0.20528836933647385,
               0.18575259806322747,
               0.041187134826517785,
               -0.07676514631378137,
               0.2588643560540065,
               -0.32567050665985003,
               0.143571296919625,
               0.12664371646808387,
               0.23674922098681972,
               0.21421955383973873,
               -0.5776124912946423,
               -0.3176383286534781,
               0.21070284167456316,
               -0.1259271659957096,
               0.2328626529746248,
               0.0,
               0.0,
               0.0,
               0.0},
              1e-10);
  // Through log_softmax (what the formula assumes) the gradient of the logits is exact.
  for (auto r : {nn::loss_reduction_t(kNone), nn::loss_reduction_t(kMean), nn::loss_reduction_t(kSum)}) {
    check_grad(
        [r](const TensorList& in) { return F::ctc_loss(in[0].log_softmax(2), TG(), IL(), TL(), with(r)); },
        {logits().requires_grad_(true)});
  }
  check_grad(
      [](const TensorList& in) {
        return F::ctc_loss(in[0].log_softmax(2), longs({2, 3, 3}), IL(), longs({1, 2}),
                           F::CTCLossFuncOptions().blank(1));
      },
      {logits().requires_grad_(true)});
  // zero_infinity with an impossible sample: the other sample's gradient, no NaN.
  check_grad(
      [](const TensorList& in) {
        return F::ctc_loss(in[0].log_softmax(2), longs({1, 1, 2, 2, 0, 0}).view({2, 3}), longs({3, 5}),
                           longs({3, 1}), F::CTCLossFuncOptions().zero_infinity(true));
      },
      {logits().requires_grad_(true)});
}

TEST_CASE("ctc_loss: PyTorch's error texts") {
  const char* w = " (while checking arguments for ctc_loss_allocate_outputs)";
  check_error([] { F::ctc_loss(LP(), TG(), IL(), TL(), F::CTCLossFuncOptions().blank(4)); },
              "blank must be in label range");
  check_error([] { F::ctc_loss(LP(), TG(), IL(), TL(), F::CTCLossFuncOptions().blank(-1)); },
              "blank must be in label range");
  check_error(
      [] {
        F::ctc_loss(LP(), TG(), longs({5, 4, 3}), TL());
      },
      "input_lengths must be of size batch_size");
  check_error([] { F::ctc_loss(LP(), TG(), IL(), longs({2})); }, "target_lengths must be of size batch_size");
  check_error(
      [] {
        F::ctc_loss(LP(), TG(), longs({6, 4}), TL());
      },
      std::string("Expected input_lengths to have value at most 5, but got value 6") + w);
  check_error(
      [] {
        F::ctc_loss(LP(), TG(), longs({-1, 4}), TL());
      },
      std::string("Expected input_lengths to have value at least 0, but got value -1") + w);
  check_error(
      [] {
        F::ctc_loss(LP(), TG(), IL(), longs({3, 1}));
      },
      std::string("Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 "
                  "'targets'") +
          w);
  check_error(
      [] {
        F::ctc_loss(LP(), TG(), IL(), longs({-1, 1}));
      },
      std::string("Expected target_lengths to have value at least 0, but got value -1") + w);
  check_error(
      [] {
        F::ctc_loss(LP(), longs({1, 2, 3}), IL(), TL());
      },
      std::string("Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 'targets'") +
          w);
  check_error([] { F::ctc_loss(LP().to(kLong), TG(), IL(), TL()); },
              "\"ctc_loss_cpu\" not implemented for 'Long'");
  check_error([] { F::ctc_loss(LP().unsqueeze(3), TG(), IL(), TL()); },
              "Expected 3-dimensional tensor, but got 4-dimensional tensor for argument #1 'log_probs'");
  check_error(
      [] {
        F::ctc_loss(LP(), ones({2, 2, 2}, kLong), IL(), TL());
      },
      std::string("Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'") + w);
}

TEST_CASE("ctc_loss: on PyTorch's CPU float32 autocast list") {
  Tensor lp = LP().to(kBFloat16);
  AutocastGuard guard(kCPU);
  Tensor loss = F::ctc_loss(lp, TG(), IL(), TL());
  CHECK(loss.dtype() == kFloat);
  check_close(loss, {1.4441072900415408}, 2e-2);
}
