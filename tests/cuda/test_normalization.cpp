// CUDA parity of batch_norm, layer_norm and group_norm (core/ops/normalization.cpp; kernels
// in cuda/normalization.cu): outputs and the gradients of input, weight and bias through
// backward(), every floating dtype, with and without affine parameters; batch norm 1d and 2d
// in training (the running statistics' update too) and in evaluation; layer norm over the
// last one and two dims; group norm with 2 and 3 groups; shapes that take the block-per-row
// kernels and split channel sums; empty inputs; bitwise-repeatable backward; create_graph's
// composite backward on CUDA tensors; and dropout2d (feature_dropout), whose CUDA path is
// composite (core/ops/dropout.cpp).
#include <functional>

#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

using ResultsFn = std::function<TensorList(const TensorList&)>;

/// Runs f on leaves made from `inputs` on device d (floating ones require grad),
/// backpropagates fixed random weights through f's first result, and returns f's results
/// followed by every leaf's gradient.
TensorList run_with_grads(Device d, const TensorList& inputs, const ResultsFn& f) {
  TensorList leaves;
  for (const Tensor& x : inputs) {
    Tensor l = x.to(d).detach();
    if (is_floating_point(l.dtype())) l.requires_grad_(true);
    leaves.push_back(l);
  }
  TensorList out = f(leaves);
  manual_seed(99);
  Tensor w = rand(out[0].sizes(), TensorOptions().dtype(out[0].dtype())).to(d);
  (out[0] * w).sum().backward();
  for (const Tensor& l : leaves) out.push_back(l.requires_grad() ? l.grad() : Tensor());
  return out;
}

/// f's results and the gradients of its inputs agree on CPU and CUDA.
void check_results_and_grads(const ResultsFn& f, const TensorList& inputs, std::optional<Tol> tol = {}) {
  TensorList on_cpu = run_with_grads(kCPU, inputs, f);
  TensorList on_cuda = run_with_grads(cuda_device(), inputs, f);
  REQUIRE(on_cpu.size() == on_cuda.size());
  for (size_t i = 0; i < on_cpu.size(); ++i) check_same(on_cuda[i], on_cpu[i], tol, "result " + std::to_string(i));
}

/// {x}, {x, weight, bias} or {x, weight} for parameters of `pshape`.
TensorList with_params(const Tensor& x, IntArrayRef pshape, int affine) {
  TensorList in{x};
  if (affine >= 1) in.push_back(make_input(pshape, x.dtype(), 0.5, 1.5));
  if (affine >= 2) in.push_back(make_input(pshape, x.dtype()));
  return in;
}
std::optional<Tensor> param(const TensorList& in, size_t i) { return in.size() > i ? std::optional(in[i]) : std::nullopt; }

const char* kAffineNames[] = {"no affine", "weight only", "weight and bias"};

/// A running-statistics pair copied to `like`'s device (a fresh copy per run).
struct Running {
  Tensor mean, var;
  TensorList on(const Tensor& like) const {
    return {mean.to(like.device()).clone(), var.to(like.device()).clone()};
  }
};

Running make_running(int64_t C, ScalarType t) { return {make_input({C}, t, -0.5, 0.5), make_input({C}, t, 0.5, 2.0)}; }

}  // namespace

TEST_CASE("cuda layer_norm: over the last 1 and 2 dims, with and without affine, gradients") {
  for (ScalarType t : kFloatTypes)
    for (auto nshape : {std::vector<int64_t>{33}, std::vector<int64_t>{5, 33}})
      for (int affine : {0, 1, 2}) {
        INFO(scalar_type_name(t) << ", normalized over " << nshape.size() << " dims, " << kAffineNames[affine]);
        TensorList in = with_params(make_input({4, 5, 33}, t), nshape, affine);
        check_results_and_grads(
            [nshape](const TensorList& x) {
              return TensorList{layer_norm(x[0], nshape, param(x, 1), param(x, 2), 1e-5)};
            },
            in);
      }
}

TEST_CASE("cuda layer_norm: long rows (a block per row), a large mean, empty inputs") {
  for (ScalarType t : {kFloat, kHalf}) {
    INFO(scalar_type_name(t));
    check_results_and_grads(
        [](const TensorList& x) { return TensorList{layer_norm(x[0], {3000}, x[1], x[2])}; },
        with_params(make_input({6, 3000}, t), {3000}, 2));
  }
  // Shifted sums keep the variance when the mean dwarfs the spread.
  check_results_and_grads([](const TensorList& x) { return TensorList{layer_norm(x[0] + 1000.0, {64})}; },
                          {make_input({8, 64}, kFloat)}, Tol{1e-4, 1e-4});
  check_parity([](const TensorList& x) { return layer_norm(x[0], {33}); }, {make_input({0, 33}, kFloat)});
  check_parity([](const TensorList& x) { return layer_norm(x[0], {0}); }, {make_input({3, 0}, kFloat)});
}

TEST_CASE("cuda group_norm: 2 and 3 groups of (3, 6, 5, 7), with and without affine, gradients") {
  for (ScalarType t : kFloatTypes)
    for (int64_t groups : {2, 3})
      for (int affine : {0, 1, 2}) {
        INFO(scalar_type_name(t) << ", " << groups << " groups, " << kAffineNames[affine]);
        TensorList in = with_params(make_input({3, 6, 5, 7}, t), {6}, affine);
        check_results_and_grads(
            [groups](const TensorList& x) { return TensorList{group_norm(x[0], groups, param(x, 1), param(x, 2))}; },
            in);
      }
  // Long rows (2 channels of 40x40 a group: a block per row), one group, one channel a group.
  check_results_and_grads([](const TensorList& x) { return TensorList{group_norm(x[0], 2, x[1], x[2])}; },
                          with_params(make_input({2, 4, 40, 40}, kFloat), {4}, 2));
  check_results_and_grads([](const TensorList& x) { return TensorList{group_norm(x[0], 1, x[1], x[2])}; },
                          with_params(make_input({3, 6, 9}, kFloat), {6}, 2));
  check_results_and_grads([](const TensorList& x) { return TensorList{group_norm(x[0], 6, x[1], x[2])}; },
                          with_params(make_input({3, 6}, kDouble), {6}, 2));
}

TEST_CASE("cuda batch_norm: 1d and 2d, training, running statistics updated as on the CPU") {
  for (ScalarType t : kFloatTypes)
    for (auto shape : {std::vector<int64_t>{4, 6}, std::vector<int64_t>{4, 6, 9}, std::vector<int64_t>{4, 3, 5, 7}})
      for (int affine : {0, 2}) {
        INFO(scalar_type_name(t) << ", " << shape.size() << "-d input, " << kAffineNames[affine]);
        int64_t C = shape[1];
        Running running = make_running(C, t);
        check_results_and_grads(
            [&](const TensorList& x) {
              TensorList r = running.on(x[0]);
              Tensor out = batch_norm(x[0], param(x, 1), param(x, 2), r[0], r[1], /*training=*/true, 0.1, 1e-5);
              return TensorList{out, r[0], r[1]};
            },
            with_params(make_input(shape, t), {C}, affine));
        // Without running statistics.
        check_results_and_grads(
            [](const TensorList& x) {
              return TensorList{batch_norm(x[0], param(x, 1), param(x, 2), {}, {}, true, 0.1, 1e-5)};
            },
            with_params(make_input(shape, t), {C}, affine));
      }
  // float16 input, float32 running statistics (as a module converted to half keeps them).
  Running running = make_running(3, kFloat);
  check_results_and_grads(
      [&](const TensorList& x) {
        TensorList r = running.on(x[0]);
        return TensorList{batch_norm(x[0], x[1], x[2], r[0], r[1], true, 0.3, 1e-3), r[0], r[1]};
      },
      with_params(make_input({5, 3, 4, 4}, kHalf), {3}, 2));
}

TEST_CASE("cuda batch_norm: evaluation with running statistics, with and without affine") {
  for (ScalarType t : kFloatTypes)
    for (auto shape : {std::vector<int64_t>{4, 6}, std::vector<int64_t>{4, 3, 5, 7}})
      for (int affine : {0, 1, 2}) {
        INFO(scalar_type_name(t) << ", " << shape.size() << "-d input, " << kAffineNames[affine]);
        int64_t C = shape[1];
        Running running = make_running(C, t);
        check_results_and_grads(
            [&](const TensorList& x) {
              TensorList r = running.on(x[0]);
              Tensor out = batch_norm(x[0], param(x, 1), param(x, 2), r[0], r[1], /*training=*/false, 0.1, 1e-5);
              return TensorList{out, r[0], r[1]};  // the running statistics stay as they were
            },
            with_params(make_input(shape, t), {C}, affine));
      }
}

TEST_CASE("cuda batch_norm: large batches split the channel sums; the ResNet layer's shape") {
  Running r1 = make_running(5, kFloat);
  check_results_and_grads(
      [&](const TensorList& x) {
        TensorList r = r1.on(x[0]);
        return TensorList{batch_norm(x[0], x[1], x[2], r[0], r[1], true, 0.1, 1e-5), r[0], r[1]};
      },
      with_params(make_input({3000, 5}, kFloat), {5}, 2));
  Running r2 = make_running(16, kFloat);
  check_results_and_grads(
      [&](const TensorList& x) {
        TensorList r = r2.on(x[0]);
        return TensorList{batch_norm(x[0], x[1], x[2], r[0], r[1], true, 0.1, 1e-5), r[0], r[1]};
      },
      with_params(make_input({32, 16, 28, 28}, kFloat), {16}, 2));
  // An empty batch: an empty result, still tied to the parameters.
  check_parity([](const TensorList& x) { return batch_norm(x[0], {}, {}, {}, {}, true, 0.1, 1e-5); },
               {make_input({0, 3, 4}, kFloat)});
}

TEST_CASE("cuda normalization: backward gives the same bits every time") {
  Device dev = cuda_device();
  auto grads = [&](const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& f, const Tensor& x0,
                   const Tensor& w0, const Tensor& b0) {
    Tensor x = x0.to(dev).detach().requires_grad_(true), w = w0.to(dev).detach().requires_grad_(true);
    Tensor b = b0.to(dev).detach().requires_grad_(true);
    manual_seed(5);
    Tensor out = f(x, w, b);
    (out * rand(out.sizes(), TensorOptions().device(dev))).sum().backward();
    return TensorList{out, x.grad(), w.grad(), b.grad()};
  };
  auto check_twice = [&](const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& f,
                         const Tensor& x, int64_t c) {
    Tensor w = make_input({c}, kFloat), b = make_input({c}, kFloat);
    TensorList a = grads(f, x, w, b), z = grads(f, x, w, b);
    for (size_t i = 0; i < a.size(); ++i) check_same(a[i], z[i].cpu(), Tol{0, 0}, "result " + std::to_string(i));
  };
  check_twice([](const Tensor& x, const Tensor& w, const Tensor& b) { return layer_norm(x, {512}, w, b); },
              make_input({2000, 512}, kFloat), 512);
  check_twice([](const Tensor& x, const Tensor& w, const Tensor& b) { return group_norm(x, 4, w, b); },
              make_input({16, 8, 20, 20}, kFloat), 8);
  check_twice(
      [](const Tensor& x, const Tensor& w, const Tensor& b) { return batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5); },
      make_input({64, 8, 16, 16}, kFloat), 8);
}

TEST_CASE("cuda normalization: create_graph runs the composite backward on CUDA tensors") {
  // Second derivatives through the composite formulas (public ops) agree with the CPU's.
  auto second = [](const TensorList& x, const std::function<Tensor(const Tensor&)>& f) {
    Tensor out = f(x[0]);
    TensorList g = autograd::grad({(out * out).sum()}, {x[0]}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    return TensorList{g[0]};
  };
  check_results_and_grads(
      [&](const TensorList& x) { return second(x, [](const Tensor& t) { return layer_norm(t, {7}); }); },
      {make_input({3, 7}, kDouble)});
  check_results_and_grads(
      [&](const TensorList& x) { return second(x, [](const Tensor& t) { return group_norm(t, 2); }); },
      {make_input({2, 4, 3}, kDouble)});
  check_results_and_grads(
      [&](const TensorList& x) {
        return second(x, [](const Tensor& t) { return batch_norm(t, {}, {}, {}, {}, true, 0.1, 1e-5); });
      },
      {make_input({5, 3, 2}, kDouble)});
}

TEST_CASE("cuda normalization: running statistics on another device are refused") {
  Tensor x = make_input({4, 3}, kFloat).to(cuda_device());
  Tensor rm = zeros({3}), rv = ones({3});
  CHECK_THROWS_WITH_AS(batch_norm(x, {}, {}, rm, rv, true, 0.1, 1e-5),
                       doctest::Contains("Expected all tensors to be on the same device"), Error);
}

TEST_CASE("cuda dropout2d (feature_dropout): the CPU's channel mask for the same seed") {
  for (ScalarType t : {kFloat, kHalf, kDouble})
    check_parity(
        [](const TensorList& in) {
          manual_seed(17);
          return feature_dropout(in[0], 0.3, true);
        },
        {make_input({4, 6, 5, 5}, t)});
  check_results_and_grads(
      [](const TensorList& in) {
        manual_seed(18);
        return TensorList{nn::functional::dropout2d(in[0], nn::functional::Dropout2dFuncOptions().p(0.5))};
      },
      {make_input({3, 8, 4, 4}, kDouble)});
}
