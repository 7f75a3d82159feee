// Loss and Softmax modules (nn/modules/loss.h, nn/modules/softmax.h) and their functional
// forms: each module equals its core function with the same options, reprs are Python's,
// weights are buffers, option defaults are PyTorch's, kBatchMean divides by the batch size.
#include <sstream>

#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/softmax.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/softmax.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::longs;
using ember::test::seq;
using ember::test::values;
namespace F = ember::nn::functional;

namespace {
template <class M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}
}  // namespace

TEST_CASE("loss modules: option defaults are PyTorch's") {
  nn::CrossEntropyLossOptions ce;
  CHECK(ce.ignore_index() == -100);
  CHECK(ce.label_smoothing() == 0.0);
  CHECK(holds<enumtype::kMean>(ce.reduction()));
  CHECK(!ce.weight().defined());
  CHECK(nn::HuberLossOptions().delta() == 1.0);
  CHECK(nn::SmoothL1LossOptions().beta() == 1.0);
  CHECK(!nn::KLDivLossOptions().log_target());
  CHECK(holds<enumtype::kBatchMean>(nn::KLDivLossOptions(kBatchMean).reduction()));
  CHECK(holds<enumtype::kSum>(nn::MSELossOptions(kSum).reduction()));
  CHECK(enum_name(nn::L1LossOptions(kNone).reduction()) == "none");
  CHECK(nn::reduction_enum(nn::MSELossOptions().reduction()) == Reduction::Mean);
}

TEST_CASE("loss modules: forward equals the core functions") {
  Tensor x = randn({4, 3}, kDouble), t = longs({2, 0, 1, 1});
  Tensor w = tensor({0.5, 2.0, 1.0}, kDouble);
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.1).reduction(kSum));
  check_close(ce(x, t), values(cross_entropy_loss(x, t, w, Reduction::Sum, -100, 0.1)), 1e-12);
  nn::NLLLoss nll(nn::NLLLossOptions().ignore_index(1));
  Tensor lp = x.log_softmax(1);
  check_close(nll(lp, t), values(nll_loss(lp, t, std::nullopt, Reduction::Mean, 1)), 1e-12);
  check_close(nll->forward(lp, t), values(F::nll_loss(lp, t, F::NLLLossFuncOptions().ignore_index(1))), 1e-12);

  Tensor a = randn({2, 3}, kDouble), b = randn({2, 3}, kDouble);
  check_close(nn::MSELoss()(a, b), values(mse_loss(a, b)), 1e-12);
  check_close(nn::MSELoss(nn::MSELossOptions(kNone))(a, b), values(mse_loss(a, b, Reduction::None)), 1e-12);
  check_close(nn::L1Loss(kSum)(a, b), values(l1_loss(a, b, Reduction::Sum)), 1e-12);
  check_close(nn::HuberLoss(nn::HuberLossOptions().delta(0.3))(a, b), values(huber_loss(a, b, Reduction::Mean, 0.3)), 1e-12);
  check_close(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.3))(a, b),
              values(smooth_l1_loss(a, b, Reduction::Mean, 0.3)), 1e-12);
  Tensor p = a.sigmoid(), q = b.sigmoid();
  check_close(nn::BCELoss(nn::BCELossOptions().weight(w))(p, q), values(binary_cross_entropy(p, q, w)), 1e-12);
  nn::BCEWithLogitsLoss bl(nn::BCEWithLogitsLossOptions().pos_weight(w).reduction(kNone));
  check_close(bl(a, q), values(binary_cross_entropy_with_logits(a, q, std::nullopt, w, Reduction::None)), 1e-12);
  // KLDiv: batchmean = sum / N; mean = sum / numel.
  Tensor lx = a.log_softmax(1), pt = b.softmax(1);
  double sum = values(kl_div(lx, pt, Reduction::Sum))[0];
  check_close(nn::KLDivLoss(kBatchMean)(lx, pt), {sum / 2}, 1e-12);
  check_close(nn::KLDivLoss()(lx, pt), {sum / 6}, 1e-12);
  check_close(F::kl_div(lx, pt.log(), F::KLDivFuncOptions(kSum).log_target(true)), {sum}, 1e-12);
  check_close(F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(0.1)),
              values(cross_entropy_loss(x, t, std::nullopt, Reduction::Mean, -100, 0.1)), 1e-12);
}

TEST_CASE("loss modules: weights are buffers, reprs are Python's, errors pass through") {
  Tensor w = tensor({0.5, 2.0, 1.0}, kDouble);
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(w));
  CHECK(ce->named_buffers().size() == 1);
  CHECK(ce->parameters().empty());
  CHECK(ce->state_dict().contains("weight"));
  CHECK(nn::CrossEntropyLoss()->state_dict().size() == 0);
  CHECK(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(w))->state_dict().contains("pos_weight"));
  CHECK(repr(*ce) == "CrossEntropyLoss()");
  CHECK(repr(*nn::NLLLoss()) == "NLLLoss()");
  CHECK(repr(*nn::MSELoss()) == "MSELoss()");
  CHECK(repr(*nn::L1Loss()) == "L1Loss()");
  CHECK(repr(*nn::HuberLoss()) == "HuberLoss()");
  CHECK(repr(*nn::SmoothL1Loss()) == "SmoothL1Loss()");
  CHECK(repr(*nn::BCELoss()) == "BCELoss()");
  CHECK(repr(*nn::BCEWithLogitsLoss()) == "BCEWithLogitsLoss()");
  CHECK(repr(*nn::KLDivLoss()) == "KLDivLoss()");
  check_error([&] { ce(zeros({3, 3}, kDouble), longs({1, 2})); },
              "Expected input batch_size (3) to match target batch_size (2).");
  // A clone keeps its weight.
  auto copy = std::dynamic_pointer_cast<nn::CrossEntropyLossImpl>(ce->clone());
  REQUIRE(copy);
  check_close(copy->weight, values(w));
}

TEST_CASE("softmax modules and functional") {
  Tensor x = (seq({2, 3}) * 0.4).sin();
  nn::Softmax sm(1);
  nn::LogSoftmax lsm(0);
  check_close(sm(x), values(softmax(x, 1)), 1e-15);
  check_close(lsm(x), values(log_softmax(x, 0)), 1e-15);
  CHECK(repr(*sm) == "Softmax(dim=1)");
  CHECK(repr(*lsm) == "LogSoftmax(dim=0)");
  check_close(F::softmax(x, F::SoftmaxFuncOptions(-1)), values(softmax(x, 1)), 1e-15);
  Tensor f = F::log_softmax(x, F::LogSoftmaxFuncOptions(1).dtype(kFloat));
  CHECK(f.dtype() == kFloat);
  check_close(f, values(log_softmax(x, 1)), 1e-6);
  CHECK(F::softmax(tensor({1, 2}), F::SoftmaxFuncOptions(0).dtype(kDouble)).dtype() == kDouble);
  CHECK(nn::Softmax(nn::SoftmaxOptions(0))->options.dim() == 0);
}
