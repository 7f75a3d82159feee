// CUDA parity of the losses (core/ops/loss.cpp, nn/functional/loss.h): cross_entropy with
// class indices (ignore_index, class weights, label_smoothing, every reduction, K-d targets)
// and with class probabilities, nll_loss (1-d input, empty batch, a sum long enough for the
// two-pass fold's grid-stride loop, bitwise reproducibility), the out-of-range target error
// and device mismatches, and mse / l1 / huber / smooth_l1 / bce / bce_with_logits (weight,
// pos_weight) / kl_div — values and gradients in float32 and float64, float16 where the CPU
// computes it.
#include "cuda/parity.h"

#include "ember/nn/functional/loss.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

const std::vector<int64_t> kReductions = {Reduction::None, Reduction::Mean, Reduction::Sum};
const std::vector<ScalarType> kLossTypes = {kFloat, kDouble, kHalf};

/// Losses add many rounded terms: a half result may differ from the CPU's by an ulp or two.
Tol loss_tol(ScalarType t) {
  if (t == kHalf) return {1e-3, 4e-3};
  if (t == kFloat) return {1e-5, 1e-5};
  return default_tol(t);
}

/// Class-index targets in [0, c) with every `every`-th one set to `ignore`.
Tensor targets(IntArrayRef shape, int64_t c, int64_t ignore = -100, int64_t every = 0) {
  Tensor t = make_input(shape, kLong, 0, static_cast<double>(c));
  if (every > 0) t.view({-1}).index_put_({indexing::Slice(0, indexing::None, every)}, ignore);
  return t;
}

/// `w` moved to the device of `like` (class weights do not take gradients, so they are not
/// parity inputs).
std::optional<Tensor> on(const Tensor& w, const Tensor& like) {
  if (!w.defined()) return std::nullopt;
  return w.to(like.device());
}

}  // namespace

TEST_CASE("cuda cross_entropy: class indices, weights, ignore_index, every reduction, gradients") {
  for (ScalarType t : kLossTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({37, 11}, t), target = targets({37}, 11, 3, 5);
    for (bool weighted : {false, true}) {
      Tensor w = weighted ? make_input({11}, t, 0.2, 2) : Tensor();
      for (int64_t r : kReductions) {
        INFO("weighted " << weighted << ", reduction " << r);
        auto f = [&](const TensorList& a) { return cross_entropy_loss(a[0], a[1], on(w, a[0]), r, 3); };
        check_grad_parity(f, {x, target}, loss_tol(t));
        auto nll = [&](const TensorList& a) { return nll_loss(a[0], a[1], on(w, a[0]), r, 3); };
        check_grad_parity(nll, {x, target}, loss_tol(t));
      }
    }
  }
}

TEST_CASE("cuda cross_entropy: label smoothing with and without weights and ignored targets") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    Tensor x = make_input({20, 6}, t), target = targets({20}, 6, -100, 4), w = make_input({6}, t, 0.5, 1.5);
    for (bool weighted : {false, true})
      for (int64_t r : kReductions) {
        INFO("weighted " << weighted << ", reduction " << r);
        check_grad_parity(
            [&](const TensorList& a) {
              return cross_entropy_loss(a[0], a[1], weighted ? on(w, a[0]) : std::nullopt, r, -100, 0.15);
            },
            {x, target}, loss_tol(t));
      }
  }
}

TEST_CASE("cuda cross_entropy and nll_loss: K-dimensional targets (N, C, H, W) and (N, C, D)") {
  for (ScalarType t : kLossTypes) {
    INFO("dtype " << t);
    Tensor x4 = make_input({3, 5, 4, 6}, t), t4 = targets({3, 4, 6}, 5, 1, 7);
    Tensor x3 = make_input({2, 4, 9}, t), t3 = targets({2, 9}, 4);
    Tensor w = make_input({5}, t, 0.5, 2);
    for (int64_t r : kReductions) {
      INFO("reduction " << r);
      check_grad_parity(
          [&](const TensorList& a) { return cross_entropy_loss(a[0], a[1], on(w, a[0]), r, 1); }, {x4, t4},
          loss_tol(t));
      check_grad_parity([&](const TensorList& a) { return cross_entropy_loss(a[0], a[1], std::nullopt, r); },
                        {x3, t3}, loss_tol(t));
      check_grad_parity([&](const TensorList& a) { return nll_loss(a[0], a[1], std::nullopt, r, 1); },
                        {x4, t4}, loss_tol(t));
    }
  }
}

TEST_CASE("cuda cross_entropy: class-probability targets with weights and label smoothing") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    Tensor x = make_input({9, 5, 3}, t), p = softmax(make_input({9, 5, 3}, t), 1),
           w = make_input({5}, t, 0.5, 2);
    for (int64_t r : kReductions)
      for (double ls : {0.0, 0.2}) {
        INFO("reduction " << r << ", label_smoothing " << ls);
        check_grad_parity(
            [&](const TensorList& a) { return cross_entropy_loss(a[0], a[1], on(w, a[0]), r, -100, ls); },
            {x, p}, loss_tol(t));
      }
  }
}

TEST_CASE("cuda nll_loss: 1-d input, empty batch, every target ignored") {
  Tensor x1 = make_input({7}, kFloat);
  for (int64_t r : kReductions) {
    check_grad_parity([&](const TensorList& a) { return nll_loss(a[0], a[1], std::nullopt, r); },
                      {x1, tensor(int64_t{4})});
    // (0, C): the sum is 0, the mean 0 / 0 = NaN, as on the CPU.
    check_parity([&](const TensorList& a) { return nll_loss(a[0], a[1], std::nullopt, r); },
                 {make_input({0, 4}, kFloat), zeros({0}, kLong)});
    check_grad_parity([&](const TensorList& a) { return nll_loss(a[0], a[1], std::nullopt, r, 2); },
                      {make_input({5, 3}, kDouble), full({5}, 2, kLong)});
  }
}

TEST_CASE("cuda nll_loss: a long sum (grid-stride loop, second pass) is the CPU's, and reproducible") {
  // 300000 targets: more than the 1024 x 256 threads of the first pass.
  Tensor x = make_input({300000, 3}, kDouble), target = targets({300000}, 3, -100, 11);
  Tensor w = make_input({3}, kDouble, 0.5, 2);
  for (int64_t r : {Reduction::Mean, Reduction::Sum}) {
    check_grad_parity([&](const TensorList& a) { return nll_loss(a[0], a[1], on(w, a[0]), r); }, {x, target});
    Tensor xc = x.to(cuda_device()), tc = target.to(cuda_device()), wc = w.to(cuda_device());
    Tensor once = nll_loss(xc, tc, wc, r), again = nll_loss(xc, tc, wc, r);
    CHECK(once.item<double>() == again.item<double>());
  }
  Tensor xf = make_input({300000, 3}, kFloat);
  check_parity([&](const TensorList& a) { return nll_loss(a[0], a[1]); }, {xf, target}, Tol{1e-5, 1e-5});
}

TEST_CASE("cuda nll_loss: out-of-range targets raise the CPU's error before any kernel reads") {
  Tensor x = make_input({4, 5}, kFloat);
  for (std::vector<int64_t> bad : {std::vector<int64_t>{1, 7, 2, 0}, {0, -1, 9, 3}, {-100, 4, 5, 1}}) {
    check_error_parity([](const TensorList& a) { return nll_loss(a[0], a[1]); }, {x, tensor(bad)});
    check_error_parity([](const TensorList& a) { return cross_entropy_loss(a[0], a[1]); }, {x, tensor(bad)});
  }
  // The ignored value is not checked: -100 with ignore_index -100 is fine.
  check_parity([](const TensorList& a) { return nll_loss(a[0], a[1]); },
               {x, tensor(std::vector<int64_t>{-100, 4, 0, -100})});
  // Targets and weights on another device than the input.
  Tensor xc = x.to(cuda_device());
  CHECK_THROWS_WITH_AS(
      nll_loss(xc, tensor(std::vector<int64_t>{1, 2, 3, 4})),
      "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
      Error);
  CHECK_THROWS_AS(nll_loss(xc, tensor(std::vector<int64_t>{1, 2, 3, 4}).to(cuda_device()), ones({5})), Error);
}

TEST_CASE("cuda regression losses: mse, l1, huber, smooth_l1, every reduction, gradients") {
  for (ScalarType t : kLossTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({6, 7}, t), y = make_input({6, 7}, t);
    for (int64_t r : kReductions) {
      INFO("reduction " << r);
      check_grad_parity([&](const TensorList& a) { return mse_loss(a[0], a[1], r); }, {x, y}, loss_tol(t));
      check_grad_parity([&](const TensorList& a) { return l1_loss(a[0], a[1], r); }, {x, y}, loss_tol(t));
      check_grad_parity([&](const TensorList& a) { return huber_loss(a[0], a[1], r, 0.7); }, {x, y},
                        loss_tol(t));
      for (double beta : {0.0, 0.5, 1.0})
        check_grad_parity([&](const TensorList& a) { return smooth_l1_loss(a[0], a[1], r, beta); }, {x, y},
                          loss_tol(t));
    }
  }
}

TEST_CASE("cuda binary_cross_entropy: weights, every reduction, inputs at 0 and 1, gradients") {
  for (ScalarType t : kLossTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({5, 8}, t, 0.02, 0.98), y = make_input({5, 8}, t, 0, 1),
           w = make_input({8}, t, 0, 2);
    for (int64_t r : kReductions) {
      INFO("reduction " << r);
      check_grad_parity(
          [&](const TensorList& a) { return binary_cross_entropy(a[0], a[1], std::nullopt, r); }, {x, y},
          loss_tol(t));
      check_grad_parity([&](const TensorList& a) { return binary_cross_entropy(a[0], a[1], a[2], r); },
                        {x, y, w}, loss_tol(t));
    }
    // The clamped logs: inputs exactly 0 and 1 give finite losses (100 per element).
    Tensor edge = tensor(std::vector<double>{0, 1, 0, 1, 0.5}).to(t);
    Tensor tgt = tensor(std::vector<double>{1, 0, 0, 1, 0.3}).to(t);
    check_parity(
        [](const TensorList& a) { return binary_cross_entropy(a[0], a[1], std::nullopt, Reduction::None); },
        {edge, tgt});
  }
  check_error_parity([](const TensorList& a) { return binary_cross_entropy(a[0], a[1]); },
                     {make_input({4}, kFloat, 0.5, 1.5), make_input({4}, kFloat, 0, 1)});
}

TEST_CASE("cuda binary_cross_entropy_with_logits: weight and pos_weight, gradients") {
  for (ScalarType t : kLossTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({4, 6}, t, -30, 30), y = make_input({4, 6}, t, 0, 1);
    Tensor w = make_input({6}, t, 0, 2), pw = make_input({6}, t, 0.5, 3);
    for (int64_t r : kReductions) {
      INFO("reduction " << r);
      check_grad_parity(
          [&](const TensorList& a) { return binary_cross_entropy_with_logits(a[0], a[1], a[2], a[3], r); },
          {x, y, w, pw}, loss_tol(t));
      check_grad_parity(
          [&](const TensorList& a) {
            return binary_cross_entropy_with_logits(a[0], a[1], std::nullopt, std::nullopt, r);
          },
          {x, y}, loss_tol(t));
    }
  }
}

TEST_CASE("cuda kl_div: probability and log targets, zeros in the target, batchmean, gradients") {
  for (ScalarType t : {kFloat, kDouble}) {
    INFO("dtype " << t);
    Tensor x = log_softmax(make_input({5, 4}, t), 1), p = softmax(make_input({5, 4}, t), 1);
    p.index_put_({0, 1}, 0.0);
    Tensor lp = log_softmax(make_input({5, 4}, t), 1);
    for (int64_t r : kReductions) {
      INFO("reduction " << r);
      check_grad_parity([&](const TensorList& a) { return kl_div(a[0], a[1], r, false); }, {x, p});
      check_grad_parity([&](const TensorList& a) { return kl_div(a[0], a[1], r, true); }, {x, lp});
    }
    check_grad_parity(
        [](const TensorList& a) {
          return F::kl_div(a[0], a[1], F::KLDivFuncOptions().reduction(kBatchMean));
        },
        {x, p});
  }
}
