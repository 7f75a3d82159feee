// batch_norm, layer_norm, group_norm (core/ops/normalization.cpp): values against plain
// loops, running statistics against hand computation, gradients against float64 gradcheck
// and against autograd through a composition of elementary ops, double backward, errors.
#include <cmath>

#include "ember/core/ops/normalization.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::from_values;
using ember::test::rand_leaf;
using ember::test::values;

namespace {

/// Normalises x (R rows of D, as row-major values) row by row with the affine parameter of
/// element (r, d) at index (r % G) * (D / S) + d / S: layer norm (G = S = 1) and group norm.
std::vector<double> ref_rows(const std::vector<double>& x, int64_t R, int64_t D, int64_t G, int64_t S,
                             const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < R; ++r) {
    double mean = 0, var = 0;
    for (int64_t d = 0; d < D; ++d) mean += x[r * D + d] / D;
    for (int64_t d = 0; d < D; ++d) var += (x[r * D + d] - mean) * (x[r * D + d] - mean) / D;
    for (int64_t d = 0; d < D; ++d) {
      int64_t k = (r % G) * (D / S) + d / S;
      double wk = w.empty() ? 1 : w[k], bk = b.empty() ? 0 : b[k];
      out[r * D + d] = (x[r * D + d] - mean) / std::sqrt(var + eps) * wk + bk;
    }
  }
  return out;
}

/// Per-channel statistics of x seen as [N, C, S]: mean and biased variance.
void ref_channel_stats(const std::vector<double>& x, int64_t N, int64_t C, int64_t S,
                       std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(C, 0);
  var.assign(C, 0);
  double n = static_cast<double>(N * S);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t i = 0; i < N; ++i)
      for (int64_t s = 0; s < S; ++s) mean[c] += x[(i * C + c) * S + s] / n;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t s = 0; s < S; ++s) var[c] += std::pow(x[(i * C + c) * S + s] - mean[c], 2) / n;
  }
}

std::vector<double> ref_batch_norm(const std::vector<double>& x, int64_t N, int64_t C, int64_t S,
                                   const std::vector<double>& mean, const std::vector<double>& var,
                                   const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        int64_t k = (i * C + c) * S + s;
        out[k] = (x[k] - mean[c]) / std::sqrt(var[c] + eps) * (w.empty() ? 1 : w[c]) + (b.empty() ? 0 : b[c]);
      }
  return out;
}

/// Batch norm by composition of elementary ops (the oracle for gradients).
Tensor composite_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  DimVector pshape(x.dim(), 1);
  pshape[1] = x.size(1);
  Tensor mu = x.mean(dims, true), var = x.var(dims, false, true);
  return (x - mu) / (var + eps).sqrt() * w.view(pshape) + b.view(pshape);
}

Tensor composite_layer_norm(const Tensor& x, int64_t nd, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - nd; d < x.dim(); ++d) dims.push_back(d);
  Tensor mu = x.mean(dims, true), var = x.var(dims, false, true);
  return (x - mu) / (var + eps).sqrt() * w + b;
}

/// The gradients of sum(out * weights) w.r.t. inputs, by autograd.
TensorList grads_of(const Tensor& out, const TensorList& inputs, bool create_graph = false) {
  Tensor gw = ember::test::from_values(values(ember::cos(ember::arange(out.numel(), kDouble))), out.sizes());
  return autograd::grad({(out * gw.to(out.dtype())).sum()}, inputs, {}, true, create_graph);
}

}  // namespace

TEST_CASE("batch_norm training normalises with batch statistics (plain loop)") {
  manual_seed(1);
  for (ScalarType dt : {kDouble, kFloat}) {
    Tensor x = (randn({3, 2, 4, 5}) * 3 + 7).to(dt);  // a large mean tests the variance pass
    Tensor w = tensor({1.5, -0.5}).to(dt), b = tensor({0.25, 2.0}).to(dt);
    Tensor out = batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5);
    std::vector<double> mean, var;
    ref_channel_stats(values(x), 3, 2, 20, mean, var);
    check_close(out, ref_batch_norm(values(x), 3, 2, 20, mean, var, values(w), values(b), 1e-5), 1e-4, 1e-4);
    CHECK(out.dtype() == dt);
  }
  // Hand-worked: channel 0 holds {1, 3}: mean 2, biased var 1, so (x - 2) / sqrt(1 + eps).
  Tensor x = tensor({{1.0, 10.0}, {3.0, 30.0}}, kDouble);
  double s = 1 / std::sqrt(1 + 1e-5);
  check_close(batch_norm(x, {}, {}, {}, {}, true, 0.1, 1e-5), {-s, -s, s, s});
}

TEST_CASE("batch_norm updates running statistics in place, variance unbiased") {
  // Channel 0: {1, 3} -> mean 2, unbiased var 2; channel 1: {10, 30} -> mean 20, var 200.
  Tensor x = tensor({{1.0, 10.0}, {3.0, 30.0}}, kDouble);
  Tensor rm = tensor({0.5, 1.0}, kDouble), rv = tensor({1.0, 4.0}, kDouble);
  uint32_t v0 = rm._version();
  batch_norm(x, {}, {}, rm, rv, true, 0.1, 1e-5);
  check_close(rm, {0.9 * 0.5 + 0.1 * 2, 0.9 * 1.0 + 0.1 * 20});
  check_close(rv, {0.9 * 1.0 + 0.1 * 2, 0.9 * 4.0 + 0.1 * 200});
  CHECK(rm._version() > v0);
  // momentum 1 replaces them; running stats in float with double input are fine too.
  Tensor rmf = zeros({2}), rvf = ones({2});
  batch_norm(x, {}, {}, rmf, rvf, true, 1.0, 1e-5);
  check_close(rmf, {2, 20});
  check_close(rvf, {2, 200});
  // An input that requires grad does not make the update part of the graph.
  Tensor xg = x.clone().requires_grad_(true);
  batch_norm(xg, {}, {}, rm, rv, true, 0.1, 1e-5);
  CHECK_FALSE(rm.requires_grad());
}

TEST_CASE("batch_norm in evaluation uses the running statistics and leaves them alone") {
  manual_seed(2);
  Tensor x = randn({4, 3, 2}, kDouble);
  Tensor rm = tensor({0.1, -0.2, 0.3}, kDouble), rv = tensor({1.5, 0.5, 2.0}, kDouble);
  Tensor w = tensor({2.0, 1.0, -1.0}, kDouble), b = tensor({0.0, 1.0, 0.5}, kDouble);
  Tensor out = batch_norm(x, w, b, rm, rv, false, 0.1, 1e-3);
  check_close(out, ref_batch_norm(values(x), 4, 3, 2, values(rm), values(rv), values(w), values(b), 1e-3));
  check_close(rm, {0.1, -0.2, 0.3});
  check_close(rv, {1.5, 0.5, 2.0});
  check_error([&] { batch_norm(x, w, b, {}, {}, false, 0.1, 1e-5); }, "must be defined in evaluation mode");
}

TEST_CASE("batch_norm on 2-d input, empty batch and float16") {
  manual_seed(3);
  Tensor x = randn({6, 4}, kDouble);
  std::vector<double> mean, var;
  ref_channel_stats(values(x), 6, 4, 1, mean, var);
  check_close(batch_norm(x, {}, {}, {}, {}, true, 0.1, 1e-5),
              ref_batch_norm(values(x), 6, 4, 1, mean, var, {}, {}, 1e-5));
  // An empty batch: empty result, running stats untouched.
  Tensor rm = zeros({4});
  Tensor e = batch_norm(empty({0, 4}), ones({4}), zeros({4}), rm, ones({4}), true, 0.1, 1e-5);
  CHECK(e.sizes().vec() == std::vector<int64_t>{0, 4});
  check_close(rm, {0, 0, 0, 0});
  Tensor h = batch_norm(x.to(kHalf), {}, {}, {}, {}, true, 0.1, 1e-5);
  CHECK(h.dtype() == kHalf);
  check_close(h, ref_batch_norm(values(x), 6, 4, 1, mean, var, {}, {}, 1e-5), 1e-2, 1e-2);
}

TEST_CASE("layer_norm normalises the trailing dims (plain loop)") {
  manual_seed(4);
  Tensor x = randn({2, 3, 4, 5}, kDouble) * 2 + 1;
  Tensor w = randn({4, 5}, kDouble), b = randn({4, 5}, kDouble);
  check_close(layer_norm(x, {4, 5}, w, b, 1e-5),
              ref_rows(values(x), 6, 20, 1, 1, values(w), values(b), 1e-5));
  check_close(layer_norm(x, {5}, {}, {}, 1e-3), ref_rows(values(x), 24, 5, 1, 1, {}, {}, 1e-3));
  // Float32, only a weight, non-contiguous input.
  Tensor xt = x.to(kFloat).transpose(0, 1);
  Tensor w5 = tensor({1.0, 2.0, 3.0, 4.0, 5.0});
  check_close(layer_norm(xt, {5}, w5), ref_rows(values(xt), 24, 5, 1, 1, values(w5), {}, 1e-5), 1e-5, 1e-4);
  // Hand-worked: {1, 3} has mean 2 and variance 1 -> {-1, 1} / sqrt(1 + eps).
  double s = 1 / std::sqrt(1 + 1e-5);
  check_close(layer_norm(tensor({1.0, 3.0}, kDouble), {2}), {-s, s});
  // Zero rows is fine.
  CHECK(layer_norm(empty({0, 5}), {5}).sizes().vec() == std::vector<int64_t>{0, 5});
}

TEST_CASE("group_norm normalises groups of channels (plain loop)") {
  manual_seed(5);
  Tensor x = randn({2, 6, 3, 2}, kDouble) + 3;
  Tensor w = randn({6}, kDouble), b = randn({6}, kDouble);
  // 3 groups of 2 channels: rows of 2 * 6 elements, each channel covering 6 of them.
  check_close(group_norm(x, 3, w, b, 1e-5), ref_rows(values(x), 6, 12, 3, 6, values(w), values(b), 1e-5));
  check_close(group_norm(x, 6), ref_rows(values(x), 12, 6, 6, 6, {}, {}, 1e-5));  // instance-norm-like
  check_close(group_norm(x.to(kFloat), 1, w.to(kFloat), {}),
              ref_rows(values(x), 2, 36, 1, 6, values(w), {}, 1e-5), 1e-5, 1e-4);
  Tensor x3 = randn({2, 4}, kDouble);  // no spatial dims
  check_close(group_norm(x3, 2), ref_rows(values(x3), 4, 2, 2, 1, {}, {}, 1e-5));
}

TEST_CASE("group_norm of an input with no elements: empty output, zero parameter gradients") {
  // A zero-size spatial dimension once divided by zero in the row kernels (SIGFPE).
  for (auto shape : {std::vector<int64_t>{2, 4, 0}, std::vector<int64_t>{0, 4, 3}}) {
    Tensor x = empty(shape, kDouble).requires_grad_(true);
    Tensor w = ones({4}, kDouble).requires_grad_(true), b = zeros({4}, kDouble).requires_grad_(true);
    Tensor y = group_norm(x, 2, w, b, 1e-5);
    CHECK(y.sizes().vec() == shape);
    y.sum().backward();
    CHECK(x.grad().sizes().vec() == shape);
    check_close(w.grad(), zeros({4}, kDouble));
    check_close(b.grad(), zeros({4}, kDouble));
    CHECK(group_norm(empty(shape, kFloat), 4).sizes().vec() == shape);
  }
}

TEST_CASE("normalization gradients: gradcheck in float64, contiguous and not") {
  manual_seed(6);
  Tensor x = rand_leaf({3, 2, 2, 2}), w = rand_leaf({2}), b = rand_leaf({2});
  Tensor rm = tensor({0.1, 0.2}, kDouble), rv = tensor({0.8, 1.3}, kDouble);
  check_grad([](const TensorList& t) { return batch_norm(t[0], t[1], t[2], {}, {}, true, 0.1, 1e-5); },
             {x, w, b});
  check_grad([&](const TensorList& t) { return batch_norm(t[0], t[1], t[2], rm, rv, false, 0.1, 1e-5); },
             {x, w, b});
  check_grad([](const TensorList& t) { return batch_norm(t[0], {}, {}, {}, {}, true, 0.1, 1e-5); }, {x});
  Tensor xt = rand_leaf({2, 3, 4});  // seen transposed: non-contiguous (3, 2, 4) input
  check_grad(
      [](const TensorList& t) {
        return batch_norm(t[0].transpose(0, 1), t[1], t[2], {}, {}, true, 0.1, 1e-5);
      },
      {xt, w, b});

  Tensor lx = rand_leaf({3, 2, 4}), lw = rand_leaf({2, 4}), lb = rand_leaf({2, 4});
  check_grad([](const TensorList& t) { return layer_norm(t[0], {2, 4}, t[1], t[2]); }, {lx, lw, lb});
  check_grad([](const TensorList& t) { return layer_norm(t[0].transpose(0, 2), {3}, {}, t[1]); },
             {lx, rand_leaf({3})});

  Tensor gx = rand_leaf({2, 4, 3}), gw = rand_leaf({4}), gb = rand_leaf({4});
  check_grad([](const TensorList& t) { return group_norm(t[0], 2, t[1], t[2]); }, {gx, gw, gb});
  check_grad([](const TensorList& t) { return group_norm(t[0].transpose(1, 2), 3, t[1], {}); },
             {rand_leaf({2, 4, 6}), rand_leaf({6})});
}

TEST_CASE("fused backward equals autograd through the composition, and the create_graph path") {
  manual_seed(7);
  Tensor x = rand_leaf({4, 3, 5}), w = rand_leaf({3}), b = rand_leaf({3});
  TensorList fused = grads_of(batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5), {x, w, b});
  TensorList composite = grads_of(composite_batch_norm(x, w, b, 1e-5), {x, w, b});
  TensorList graph = grads_of(batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5), {x, w, b}, true);
  for (int i = 0; i < 3; ++i) {
    check_close(fused[i], composite[i], 1e-9);
    check_close(graph[i], composite[i], 1e-9);
  }
  Tensor lw = rand_leaf({5}), lb = rand_leaf({5});
  fused = grads_of(layer_norm(x, {5}, lw, lb), {x, lw, lb});
  composite = grads_of(composite_layer_norm(x, 1, lw, lb, 1e-5), {x, lw, lb});
  graph = grads_of(layer_norm(x, {5}, lw, lb), {x, lw, lb}, true);
  for (int i = 0; i < 3; ++i) {
    check_close(fused[i], composite[i], 1e-9);
    check_close(graph[i], composite[i], 1e-9);
  }
  // float32 kernels against the float64 composition.
  Tensor xf = x.detach().to(kFloat).requires_grad_(true), wf = w.detach().to(kFloat).requires_grad_(true);
  TensorList f32 = grads_of(batch_norm(xf, wf, {}, {}, {}, true, 0.1, 1e-5), {xf, wf});
  TensorList ref = grads_of(composite_batch_norm(x, w, zeros({3}, kDouble), 1e-5), {x, w});
  check_close(f32[0], ref[0], 1e-4, 1e-3);
  check_close(f32[1], ref[1], 1e-4, 1e-3);
  CHECK(batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5).grad_fn()->name() == "NativeBatchNormBackward0");
  CHECK(layer_norm(x, {5}, lw, lb).grad_fn()->name() == "NativeLayerNormBackward0");
}

TEST_CASE("normalization double backward (gradgradcheck)") {
  manual_seed(8);
  check_gradgrad([](const TensorList& t) { return batch_norm(t[0], t[1], t[2], {}, {}, true, 0.1, 1e-5); },
                 {rand_leaf({3, 2, 2}), rand_leaf({2}), rand_leaf({2})});
  Tensor rm = tensor({0.1, 0.2}, kDouble), rv = tensor({0.8, 1.3}, kDouble);
  check_gradgrad([&](const TensorList& t) { return batch_norm(t[0], t[1], {}, rm, rv, false, 0.1, 1e-5); },
                 {rand_leaf({3, 2}), rand_leaf({2})});
  check_gradgrad([](const TensorList& t) { return layer_norm(t[0], {3}, t[1], t[2]); },
                 {rand_leaf({2, 3}), rand_leaf({3}), rand_leaf({3})});
  check_gradgrad([](const TensorList& t) { return group_norm(t[0], 2, t[1], t[2]); },
                 {rand_leaf({2, 4, 2}), rand_leaf({4}), rand_leaf({4})});
}

TEST_CASE("normalization errors use PyTorch's words") {
  Tensor x = ones({2, 3});
  check_error([&] { batch_norm(x, {}, {}, zeros({4}), ones({3}), true, 0.1, 1e-5); },
              "running_mean should contain 3 elements not 4");
  check_error([&] { batch_norm(x, {}, {}, zeros({3}), ones({2}), true, 0.1, 1e-5); },
              "running_var should contain 3 elements not 2");
  check_error([&] { batch_norm(x, ones({2}), {}, {}, {}, true, 0.1, 1e-5); },
              "weight should contain 3 elements not 2");
  check_error([&] { layer_norm(x, {4}); },
              "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]");
  check_error([&] { layer_norm(x, {3}, ones({4})); },
              "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] and "
              "normalized_shape = [3]");
  check_error(
      [&] {
        group_norm(ones({2, 3, 4}), 2);
      },
      "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 3, 4] "
      "and num_groups=2");
  check_error(
      [&] {
        group_norm(ones({2, 4}), 2, ones({3}));
      },
      "Expected weight to be a vector of size equal to the number of channels in input");
  check_error([&] { layer_norm(ones({2, 3}, kLong), {3}); }, "not implemented for 'Long'");
}
