// Losses (core/ops/loss.cpp): nll_loss / cross_entropy against plain double loops written
// here (every reduction, weights, ignore_index, label smoothing, probability targets, 1-d and
// (N, C, d1) inputs), PyTorch 1.13 fixture values (fixtures/make_loss_fixtures.py) for every
// loss, float64 gradcheck for each loss and gradgradcheck for cross_entropy, error texts.
#include <cmath>
#include <limits>

#include "ember/core/ops/loss.h"
#include "ember/core/ops/softmax.h"
#include "fixtures/loss_fixtures.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::longs;
using ember::test::rand_leaf;
using ember::test::seq;
using ember::test::shape;
using ember::test::values;
namespace fx = ember::test::loss_fixtures;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The fixture inputs, rebuilt exactly as make_loss_fixtures.py builds them.
Tensor logits() { return (seq({3, 4}) * 0.37).sin() * 2; }
Tensor probs() { return ((seq({3, 4}) * 0.5).cos()).softmax(1); }
Tensor class_weight() { return tensor({0.5, 1.0, 2.0, 1.5}, kDouble); }
Tensor targets() { return longs({1, 0, 3}); }

/// nll_loss by the book on (N, C) input: per-sample -w[t] x[n, t], mean divided by the
/// summed weights of the counted samples.
double nll_ref(const Tensor& x, const std::vector<int64_t>& t, const std::vector<double>& w, int64_t reduction,
               int64_t ignore, std::vector<double>* per_sample = nullptr) {
  std::vector<double> v = values(x);
  int64_t c = x.size(1);
  double sum = 0, wsum = 0;
  for (size_t n = 0; n < t.size(); ++n) {
    double l = 0;
    if (t[n] != ignore) {
      double wn = w.empty() ? 1.0 : w[t[n]];
      l = -wn * v[n * c + t[n]];
      wsum += wn;
    }
    sum += l;
    if (per_sample) per_sample->push_back(l);
  }
  return reduction == Reduction::Mean ? sum / wsum : sum;
}

/// log_softmax of (N, C) rows in double.
std::vector<double> log_softmax_ref(const Tensor& x) {
  std::vector<double> v = values(x), out(v.size());
  int64_t r = x.size(0), c = x.size(1);
  for (int64_t i = 0; i < r; ++i) {
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(v[i * c + j]);
    for (int64_t j = 0; j < c; ++j) out[i * c + j] = v[i * c + j] - std::log(s);
  }
  return out;
}

}  // namespace

TEST_CASE("nll_loss: every reduction, weights and ignore_index against the loop") {
  Tensor x = randn({5, 4}, kDouble);
  std::vector<int64_t> t{3, 0, 2, 2, 1};
  std::vector<double> w{0.2, 1.5, 0.7, 2.0};
  Tensor tt = longs(t), wt = tensor(w, kDouble);
  for (int64_t ignore : {-100L, 2L}) {
    std::vector<double> per;
    double mean = nll_ref(x, t, w, Reduction::Mean, ignore, &per);
    check_close(nll_loss(x, tt, wt, Reduction::Mean, ignore), {mean}, 1e-12);
    check_close(nll_loss(x, tt, wt, Reduction::Sum, ignore), {nll_ref(x, t, w, Reduction::Sum, ignore)}, 1e-12);
    check_close(nll_loss(x, tt, wt, Reduction::None, ignore), per, 1e-12);
    check_close(nll_loss(x, tt, std::nullopt, Reduction::Mean, ignore), {nll_ref(x, t, {}, Reduction::Mean, ignore)}, 1e-12);
  }
  // Float input, non-contiguous input and target.
  Tensor xt = randn({4, 5}, kDouble).t();
  check_close(nll_loss(xt.to(kFloat), tt), {nll_ref(xt, t, {}, Reduction::Mean, -100)}, 1e-6);
  Tensor t2 = longs({3, 9, 0, 9, 2, 9, 2, 9, 1, 9}).slice(0, 0, 10, 2);
  check_close(nll_loss(x, t2, wt), {nll_ref(x, t, w, Reduction::Mean, -100)}, 1e-12);
}

TEST_CASE("nll_loss: 1-d input, K-dim input, all ignored, empty batch") {
  // 1-d input (C) with a 0-dim target: -x[t].
  Tensor x1 = tensor({0.5, -1.0, 2.0}, kDouble);
  check_close(nll_loss(x1, scalar_tensor(1, kLong)), {1.0});
  CHECK(shape(nll_loss(x1, scalar_tensor(1, kLong), std::nullopt, Reduction::None)).empty());
  check_close(nll_loss(x1, scalar_tensor(2, kLong), tensor({1.0, 1.0, 3.0}, kDouble), Reduction::Sum), {-6.0});
  // All targets ignored: mean is 0/0 = NaN, sum is 0 (PyTorch).
  Tensor x = seq({2, 3});
  check_close(nll_loss(x, longs({-100, -100})), {kNan});
  check_close(nll_loss(x1, scalar_tensor(-100, kLong)), {kNan});
  check_close(nll_loss(x, longs({-100, -100}), std::nullopt, Reduction::Sum), {0.0});
  // Empty batch: mean NaN, sum 0, none empty.
  check_close(nll_loss(zeros({0, 3}, kDouble), zeros({0}, kLong)), {kNan});
  check_close(nll_loss(zeros({0, 3}, kDouble), zeros({0}, kLong), std::nullopt, Reduction::Sum), {0.0});
  CHECK(shape(nll_loss(zeros({0, 3}, kDouble), zeros({0}, kLong), std::nullopt, Reduction::None)) ==
        std::vector<int64_t>{0});
  // (N, C, d1): fixture values, and the (N, C, d1, d2) case against a permuted 2-d call.
  Tensor x3 = (seq({2, 3, 2}) * 0.61).cos() * 1.5;
  Tensor t3 = tensor({{2, 0}, {1, -100}});
  check_close(nll_loss(x3, t3, std::nullopt, Reduction::None), fx::nll3d_none, 1e-12);
  check_close(nll_loss(x3, t3, tensor({0.3, 1.2, 2.0}, kDouble)), fx::nll3d_weight_mean, 1e-12);
  Tensor x4 = randn({2, 3, 2, 2}, kDouble);
  Tensor t4 = randint(3, {2, 2, 2});
  Tensor flat = x4.permute({0, 2, 3, 1}).reshape({8, 3});
  check_close(nll_loss(x4, t4, std::nullopt, Reduction::None), values(nll_loss(flat, t4.reshape({8}), std::nullopt, Reduction::None)), 1e-12);
  check_close(nll_loss(x4, t4), values(nll_loss(flat, t4.reshape({8}))), 1e-12);
}

TEST_CASE("nll_loss: gradients and the fused backward") {
  // d/dx mean nll = -w[t] / sum(w[t]) at [n, t]: with w = [1, 2, 3], t = [2, 1]: divisor 5.
  Tensor x = zeros({2, 3}, kDouble).requires_grad_();
  Tensor l = nll_loss(x, longs({2, 1}), tensor({1.0, 2.0, 3.0}, kDouble));
  CHECK(l.grad_fn()->name() == "NllLossBackward0");
  l.backward();
  check_close(x.grad(), {0, 0, -0.6, 0, -0.4, 0}, 1e-15);
  Tensor w = tensor({0.2, 1.5, 0.7, 2.0}, kDouble);
  for (int64_t red : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    check_grad([&](const TensorList& in) { return nll_loss(in[0], longs({3, 0, 2, 2}), w, red, 2); },
               {rand_leaf({4, 4})});
    check_grad([&](const TensorList& in) { return nll_loss(in[0].t(), longs({1, 0, -100}), std::nullopt, red); },
               {rand_leaf({4, 3})});
    check_grad([&](const TensorList& in) { return nll_loss(in[0], tensor({{2, 0}, {1, -100}}), std::nullopt, red); },
               {rand_leaf({2, 3, 2})});
    check_grad([&](const TensorList& in) { return nll_loss(in[0], scalar_tensor(2, kLong), w.slice(0, 0, 3), red); },
               {rand_leaf({3})});
  }
  // nll is linear, so gradgrad checks the backward op's own backward (nll of the gradient).
  check_gradgrad([&](const TensorList& in) { return nll_loss(in[0], longs({3, 0, 2}), w, Reduction::Mean) * 1.0; },
                 {rand_leaf({3, 4})});
  check_gradgrad([&](const TensorList& in) { return nll_loss(in[0], longs({3, 0, 2}), w, Reduction::None); },
                 {rand_leaf({3, 4})});
}

TEST_CASE("cross_entropy: class indices against log_softmax + loop, fixtures") {
  Tensor x = logits();
  std::vector<double> ls = log_softmax_ref(x);
  Tensor lsx = from_values(ls, {3, 4});
  check_close(cross_entropy_loss(x, targets()), {nll_ref(lsx, {1, 0, 3}, {}, Reduction::Mean, -100)}, 1e-12);
  check_close(cross_entropy_loss(x, targets()), fx::ce_mean, 1e-12);
  check_close(cross_entropy_loss(x, targets(), class_weight(), Reduction::Mean, 0), fx::ce_weight_ignore_mean, 1e-12);
  std::vector<double> per;
  nll_ref(lsx, {1, 0, 3}, {0.5, 1.0, 2.0, 1.5}, Reduction::None, -100, &per);
  check_close(cross_entropy_loss(x, targets(), class_weight(), Reduction::None), per, 1e-12);
  CHECK(cross_entropy_loss(x.to(kFloat), targets()).dtype() == kFloat);
}

TEST_CASE("cross_entropy: label smoothing with and without weights and ignore_index") {
  Tensor x = logits();
  std::vector<double> ls = log_softmax_ref(x);
  // By the formula: (1 - e) nll + e / C * smooth, smooth_n = -sum_c w_c ls[n, c] for counted n;
  // mean divides both by the summed weights of the counted targets.
  std::vector<int64_t> t{1, 0, 3};
  std::vector<double> w{0.5, 1.0, 2.0, 1.5};
  double e = 0.2, nll = 0, smooth = 0, wsum = 0;
  for (int n = 0; n < 3; ++n) {
    if (t[n] == 0) continue;  // ignore_index 0
    nll += -w[t[n]] * ls[n * 4 + t[n]];
    for (int c = 0; c < 4; ++c) smooth += -w[c] * ls[n * 4 + c];
    wsum += w[t[n]];
  }
  double expected = (1 - e) * nll / wsum + e / 4 * smooth / wsum;
  Tensor got = cross_entropy_loss(x, targets(), class_weight(), Reduction::Mean, 0, e);
  check_close(got, {expected}, 1e-12);
  check_close(got, fx::ce_ls_weight_ignore_mean, 1e-12);
  check_close(cross_entropy_loss(x, targets(), std::nullopt, Reduction::None, -100, 0.3), fx::ce_ls_none, 1e-12);
  // Sum without weights: per-sample (1 - e)(-ls[t]) + e/C * -sum_c ls.
  double sum = 0;
  for (int n = 0; n < 3; ++n) {
    double s = 0;
    for (int c = 0; c < 4; ++c) s -= ls[n * 4 + c];
    sum += (1 - e) * -ls[n * 4 + t[n]] + e / 4 * s;
  }
  check_close(cross_entropy_loss(x, targets(), std::nullopt, Reduction::Sum, -100, e), {sum}, 1e-12);
  // (N, C, d1) with weights, ignore_index and smoothing = the permuted 2-d call.
  Tensor xk = randn({2, 4, 3}, kDouble);
  Tensor tk = tensor({{1, 0, 3}, {2, 2, 0}});
  Tensor x2 = xk.permute({0, 2, 1}).reshape({6, 4}), t2 = tk.reshape({6});
  for (int64_t red : {Reduction::Mean, Reduction::Sum})
    check_close(cross_entropy_loss(xk, tk, class_weight(), red, 0, 0.25),
                values(cross_entropy_loss(x2, t2, class_weight(), red, 0, 0.25)), 1e-12);
  check_close(cross_entropy_loss(xk, tk, class_weight(), Reduction::None, 0, 0.25),
              values(cross_entropy_loss(x2, t2, class_weight(), Reduction::None, 0, 0.25)), 1e-12);
  // All ignored with smoothing: NaN for mean.
  check_close(cross_entropy_loss(x, longs({-100, -100, -100}), std::nullopt, Reduction::Mean, -100, 0.1), {kNan});
}

TEST_CASE("cross_entropy: probability targets") {
  Tensor x = logits(), p = probs();
  std::vector<double> ls = log_softmax_ref(x), pv = values(p);
  std::vector<double> per(3, 0.0);
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 4; ++c) per[n] -= pv[n * 4 + c] * ls[n * 4 + c];
  check_close(cross_entropy_loss(x, p, std::nullopt, Reduction::None), per, 1e-12);
  check_close(cross_entropy_loss(x, p, std::nullopt, Reduction::None), fx::ce_prob_none, 1e-12);
  check_close(cross_entropy_loss(x, p), {(per[0] + per[1] + per[2]) / 3}, 1e-12);
  check_close(cross_entropy_loss(x, p, class_weight(), Reduction::Mean, -100, 0.1), fx::ce_prob_ls_weight_mean, 1e-12);
  // 1-d input with a probability vector.
  Tensor x1 = tensor({1.0, 2.0, 3.0}, kDouble), p1 = tensor({0.2, 0.3, 0.5}, kDouble);
  std::vector<double> l1 = log_softmax_ref(x1.view({1, 3}));
  check_close(cross_entropy_loss(x1, p1), {-(0.2 * l1[0] + 0.3 * l1[1] + 0.5 * l1[2])}, 1e-12);
  check_close(cross_entropy_loss(zeros({0, 3}, kDouble), zeros({0, 3}, kDouble)), {kNan});
  // 1-d input with a class index, K-dim input with class indices = permuted 2-d call.
  check_close(cross_entropy_loss(x1, scalar_tensor(2, kLong)), {-l1[2]}, 1e-12);
  Tensor xk = randn({2, 3, 4}, kDouble);
  Tensor tk = randint(3, {2, 4});
  check_close(cross_entropy_loss(xk, tk), values(cross_entropy_loss(xk.permute({0, 2, 1}).reshape({8, 3}), tk.reshape({8}))), 1e-12);
}

TEST_CASE("cross_entropy: gradcheck and gradgradcheck") {
  Tensor w = tensor({0.5, 1.0, 2.0, 1.5}, kDouble);
  for (int64_t red : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    check_grad([&](const TensorList& in) { return cross_entropy_loss(in[0], longs({1, 0, 3}), w, red, 0); },
               {rand_leaf({3, 4})});
    check_grad([&](const TensorList& in) { return cross_entropy_loss(in[0], longs({1, 0, 3}), w, red, 0, 0.2); },
               {rand_leaf({3, 4})});
    check_grad([&](const TensorList& in) { return cross_entropy_loss(in[0].t(), in[1].softmax(1), w, red, -100, 0.1); },
               {rand_leaf({4, 3}), rand_leaf({3, 4})});
    check_grad([&](const TensorList& in) { return cross_entropy_loss(in[0], tensor({{2, 0}, {1, 1}}), std::nullopt, red); },
               {rand_leaf({2, 3, 2})});
  }
  check_gradgrad([&](const TensorList& in) { return cross_entropy_loss(in[0], longs({1, 0, 3}), w); }, {rand_leaf({3, 4})});
  check_gradgrad([&](const TensorList& in) { return cross_entropy_loss(in[0], longs({1, 0, 3}), std::nullopt, Reduction::Sum, -100, 0.2); },
                 {rand_leaf({3, 4})});
  check_gradgrad([&](const TensorList& in) { return cross_entropy_loss(in[0], in[1].softmax(1)); },
                 {rand_leaf({3, 4}), rand_leaf({3, 4})});
}

TEST_CASE("nll_loss / cross_entropy: errors") {
  Tensor x = zeros({3, 4});
  check_error([&] { nll_loss(x, longs({1, 2})); }, "Expected input batch_size (3) to match target batch_size (2).");
  check_error([&] { nll_loss(x, longs({1, 2, 5})); }, "Target 5 is out of bounds.");
  check_error([&] { nll_loss(x, longs({1, 2, -3})); }, "Target -3 is out of bounds.");
  check_error([] { nll_loss(zeros({3, 3}), longs({1, 2, 0}), ones({2})); },
              "weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [2]");
  check_error([] { nll_loss(zeros({3, 3}), zeros({3, 2}, kLong)); }, "0D or 1D target tensor expected, multi-target not supported");
  check_error([] { nll_loss(zeros({3, 3, 2}), zeros({3, 3}, kLong)); }, "Expected target size [3, 2], got [3, 3]");
  check_error([] { nll_loss(zeros({3, 3, 2, 2}), zeros({3, 3}, kLong)); },
              "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2");
  check_error([] { nll_loss(zeros({3}), longs({1})); }, "size mismatch (got input: [3], target: [1])");
  check_error([] { nll_loss(scalar_tensor(3.0), scalar_tensor(1, kLong)); }, "Expected 1 or more dimensions (got 0)");
  check_error([] { nll_loss(zeros({3, 3}), zeros({3})); }, "expected scalar type Long but found Float");
  check_error([] { nll_loss(zeros({3, 3}, kLong), longs({1, 2, 0})); }, "\"nll_loss_out_frame\" not implemented for 'Long'");
  check_error([] { nll_loss(zeros({3, 3}), longs({1, 2, 0}), ones({3}, kDouble)); }, "expected scalar type Float but found Double");
  check_error([] { nll_loss(zeros({2, 3}), longs({0, 1}), ones({3}).requires_grad_()); },
              "is not differentiable with respect to argument 'weight'");
  check_error([] { cross_entropy_loss(zeros({3, 3}), longs({1, 2, 0}), std::nullopt, Reduction::Mean, -100, 1.5); },
              "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
  check_error([] { cross_entropy_loss(zeros({3, 3}), zeros({3, 3}, kLong)); },
              "Expected floating point type for target with class probabilities, got Long");
  check_error([] { cross_entropy_loss(zeros({3, 3}), zeros({3, 3}), std::nullopt, Reduction::Mean, 1); },
              "ignore_index is not supported for floating point target");
  check_error([] { cross_entropy_loss(zeros({3, 3}), zeros({3, 3}), ones({2})); },
              "cross_entropy: weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [2]");
}

TEST_CASE("regression losses: values against loops and fixtures") {
  Tensor a = (seq({2, 3}) * 0.7).sin() * 2, b = (seq({2, 3}) * 0.3).cos();
  std::vector<double> av = values(a), bv = values(b);
  std::vector<double> sq, ab, hub, sl1;
  for (size_t i = 0; i < av.size(); ++i) {
    double d = av[i] - bv[i], z = std::fabs(d);
    sq.push_back(d * d);
    ab.push_back(z);
    hub.push_back(z < 0.5 ? 0.5 * d * d : 0.5 * (z - 0.25));
    sl1.push_back(z < 0.5 ? 0.5 * d * d / 0.5 : z - 0.25);
  }
  auto sum = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s; };
  check_close(mse_loss(a, b, Reduction::None), sq, 1e-12);
  check_close(mse_loss(a, b, Reduction::Sum), {sum(sq)}, 1e-12);
  check_close(mse_loss(a, b, Reduction::Sum), fx::mse_sum, 1e-12);
  check_close(mse_loss(a, b), {sum(sq) / 6}, 1e-12);
  check_close(l1_loss(a, b), {sum(ab) / 6}, 1e-12);
  check_close(l1_loss(a, b), fx::l1_mean, 1e-12);
  check_close(huber_loss(a, b, Reduction::None, 0.5), hub, 1e-12);
  check_close(huber_loss(a, b, Reduction::None, 0.5), fx::huber_delta_half_none, 1e-12);
  check_close(smooth_l1_loss(a, b, Reduction::Mean, 0.5), {sum(sl1) / 6}, 1e-12);
  check_close(smooth_l1_loss(a, b, Reduction::Mean, 0.5), fx::smooth_l1_beta_half_mean, 1e-12);
  check_close(smooth_l1_loss(a, b, Reduction::Sum, 0.0), {sum(ab)}, 1e-12);  // beta 0: l1
  check_close(mse_loss(zeros({0}), zeros({0})), {kNan});
  // Broadcasting target (PyTorch warns; the values broadcast).
  check_close(mse_loss(a, b.select(0, 0), Reduction::Sum),
              {sum(values((a - b.select(0, 0)).pow(2)))}, 1e-12);
}

TEST_CASE("binary losses and kl_div: values against loops and fixtures") {
  Tensor q = ((seq({2, 3}) * 0.9).sin() + 1) / 2.2 + 0.02;
  Tensor y = tensor({{1.0, 0.0, 0.5}, {0.0, 1.0, 0.25}}, kDouble);
  Tensor w = tensor({1.0, 2.0, 0.5}, kDouble);
  std::vector<double> qv = values(q), yv = values(y), per;
  for (size_t i = 0; i < qv.size(); ++i)
    per.push_back(-(yv[i] * std::log(qv[i]) + (1 - yv[i]) * std::log(1 - qv[i])) * values(w)[i % 3]);
  check_close(binary_cross_entropy(q, y, w, Reduction::None), per, 1e-12);
  check_close(binary_cross_entropy(q, y, w), fx::bce_weight_mean, 1e-12);
  // log clamped at -100: x = 0 with target 1 costs 100, not inf.
  check_close(binary_cross_entropy(tensor({0.0, 1.0}, kDouble), tensor({1.0, 0.0}, kDouble)), {100.0});
  // with logits: loss = (1 - t) x + (1 + (pw - 1) t) log(1 + e^{-x}).
  Tensor a = (seq({2, 3}) * 0.7).sin() * 2;
  Tensor pw = tensor({2.0, 0.5, 1.0}, kDouble);
  std::vector<double> av = values(a);
  double s = 0;
  for (size_t i = 0; i < av.size(); ++i)
    s += (1 - yv[i]) * av[i] + (1 + (values(pw)[i % 3] - 1) * yv[i]) * std::log1p(std::exp(-av[i]));
  check_close(binary_cross_entropy_with_logits(a, y, std::nullopt, pw, Reduction::Sum), {s}, 1e-12);
  check_close(binary_cross_entropy_with_logits(a, y, std::nullopt, pw, Reduction::Sum), fx::bce_logits_pos_weight_sum, 1e-12);
  // Stable for large logits: x = -800 with t = 1 costs 800 (log(1 + e^800) overflows naively).
  check_close(binary_cross_entropy_with_logits(tensor({-800.0}, kDouble), tensor({1.0}, kDouble)), {800.0});
  // kl_div: sum t (log t - x); t = 0 contributes 0.
  Tensor lp = (seq({3, 4}) * 0.37).sin().mul(2).log_softmax(1), p = (seq({3, 4}) * 0.5).cos().softmax(1);
  check_close(kl_div(lp, p, Reduction::Sum) / 3, fx::kl_batchmean, 1e-12);
  check_close(kl_div(lp, p.log(), Reduction::Sum, true), fx::kl_log_target_sum, 1e-12);
  check_close(kl_div(tensor({-1.0, -2.0}, kDouble), tensor({0.0, 0.5}, kDouble), Reduction::None),
              {0.0, 0.5 * (std::log(0.5) + 2.0)}, 1e-15);
}

TEST_CASE("losses: gradcheck for each, every reduction") {
  Tensor w = tensor({1.0, 2.0, 0.5}, kDouble), pw = tensor({2.0, 0.5, 1.0}, kDouble);
  for (int64_t red : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    auto grad2 = [&](auto f) { check_grad([&](const TensorList& in) { return f(in[0].t(), in[1]); }, {rand_leaf({3, 2}), rand_leaf({2, 3})}); };
    grad2([&](const Tensor& x, const Tensor& t) { return mse_loss(x, t, red); });
    grad2([&](const Tensor& x, const Tensor& t) { return l1_loss(x, t, red); });
    grad2([&](const Tensor& x, const Tensor& t) { return huber_loss(x, t, red, 0.4); });
    grad2([&](const Tensor& x, const Tensor& t) { return smooth_l1_loss(x, t, red, 0.4); });
    grad2([&](const Tensor& x, const Tensor& t) { return binary_cross_entropy_with_logits(x, t.sigmoid(), w, pw, red); });
    grad2([&](const Tensor& x, const Tensor& t) { return kl_div(x, t.sigmoid(), red); });
    grad2([&](const Tensor& x, const Tensor& t) { return kl_div(x, t, red, true); });
    check_grad([&](const TensorList& in) { return binary_cross_entropy(in[0].t().sigmoid(), in[1].sigmoid(), w, red); },
               {rand_leaf({3, 2}), rand_leaf({2, 3})});
  }
  check_gradgrad([&](const TensorList& in) { return binary_cross_entropy(in[0].sigmoid(), in[1].sigmoid(), w); },
                 {rand_leaf({2, 3}), rand_leaf({2, 3})});
  check_gradgrad([&](const TensorList& in) { return binary_cross_entropy_with_logits(in[0], in[1], w, pw); },
                 {rand_leaf({2, 3}), rand_leaf({2, 3})});
}

TEST_CASE("losses: errors") {
  check_error([] { binary_cross_entropy(rand({2, 1}), rand({2})); },
              "Using a target size (torch.Size([2])) that is different to the input size (torch.Size([2, 1])) is deprecated. "
              "Please ensure they have the same size.");
  check_error([] { binary_cross_entropy(tensor({1.5}), rand({1})); }, "all elements of input should be between 0 and 1");
  check_error([] { binary_cross_entropy(zeros({2}, kDouble), zeros({2})); }, "Found dtype Float but expected Double");
  check_error([] { binary_cross_entropy_with_logits(rand({2, 1}), rand({2})); },
              "Target size (torch.Size([2])) must be the same as input size (torch.Size([2, 1]))");
  check_error([] { mse_loss(rand({2, 3}), rand({4})); },
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  check_error([] { mse_loss(zeros({2}, kLong), zeros({2}, kLong)); }, "\"mse_cpu\" not implemented for 'Long'");
  check_error([] { huber_loss(rand({2}), rand({2}), Reduction::Mean, -1); },
              "huber_loss does not support non-positive values for delta.");
  check_error([] { smooth_l1_loss(rand({2}), rand({2}), Reduction::Mean, -1); },
              "smooth_l1_loss does not support negative values for beta.");
}
