// The margin, embedding, Poisson and triplet losses and the distances (core/ops/margin_loss.h,
// core/ops/distance.h, their F:: forms and modules): values for every reduction against
// PyTorch's (from tests/nn/fixtures/make_loss_fixture.py, which defines the same X, Y, Z,
// targets), float64 gradcheck of each functional form, option defaults, reprs, and
// PyTorch's error texts.
#include <sstream>

#include "ember/nn/functional/distance.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/modules/distance.h"
#include "ember/nn/modules/loss.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::from_values;
using ember::test::longs;
using ember::test::rand_leaf;
using ember::test::repr;
namespace F = ember::nn::functional;

namespace {

// The fixture script's tensors.
Tensor X() { return from_values({0.2, -0.5, 1.1, 0.3, -0.7, 0.4, 0.05, -1.2, 0.9, 0.1, -0.3, 0.6}, {3, 4}); }
Tensor Y() { return from_values({0.5, 0.1, -0.4, 0.8, 0.3, -0.9, 0.6, 0.2, -0.1, 0.7, 0.4, -0.5}, {3, 4}); }
Tensor Z() { return from_values({0.1, 0.2, 0.3, 0.4, -0.6, 0.5, 0.0, -1.0, 1.5, -0.2, 0.2, 0.1}, {3, 4}); }
Tensor SIGN() { return from_values({1.0, -1.0, 1.0}, {3}); }
Tensor SIGN2() { return from_values({1, -1, -1, 1, -1, -1, 1, 1, 1, 1, -1, -1}, {3, 4}); }
Tensor MM_T() { return longs({2, 0, 3}); }
Tensor MM_W() { return from_values({0.5, 1.0, 1.5, 2.0}, {4}); }
Tensor ML_T() { return longs({2, 0, -1, 1, 3, -1, 0, 0, 1, 2, 3, 0}).view({3, 4}); }
Tensor MLS_T() { return from_values({1, 0, 1, 0, 0, 0.5, 1, 0, 1, 1, 0, 0}, {3, 4}); }
Tensor COUNTS() { return from_values({0, 1, 2, 3, 4, 0, 1, 0, 2, 5, 1, 1}, {3, 4}); }

struct Expected {
  std::vector<double> none, mean, sum;
};

/// fn(reduction) against PyTorch's values for kNone, kMean and kSum.
template <class Fn>
void check_reductions(Fn fn, const Expected& e, double tol = 1e-12) {
  {
    INFO("reduction none");
    check_close(fn(nn::loss_reduction_t(kNone)), e.none, tol, tol);
  }
  {
    INFO("reduction mean");
    Tensor m = fn(nn::loss_reduction_t(kMean));
    CHECK(m.dim() == 0);
    check_close(m, e.mean, tol, tol);
  }
  {
    INFO("reduction sum");
    check_close(fn(nn::loss_reduction_t(kSum)), e.sum, tol, tol);
  }
}

}  // namespace

TEST_CASE("margin losses: option defaults are PyTorch's") {
  CHECK(nn::HingeEmbeddingLossOptions().margin() == 1.0);
  nn::MultiMarginLossOptions mm;
  CHECK(mm.p() == 1);
  CHECK(mm.margin() == 1.0);
  CHECK(!mm.weight().defined());
  CHECK(holds<enumtype::kMean>(mm.reduction()));
  CHECK(nn::CosineEmbeddingLossOptions().margin() == 0.0);
  CHECK(holds<enumtype::kSum>(nn::MultiLabelMarginLossOptions(kSum).reduction()));
  CHECK(holds<enumtype::kNone>(nn::SoftMarginLossOptions(kNone).reduction()));
  CHECK(!nn::MultiLabelSoftMarginLossOptions().weight().defined());
  nn::TripletMarginLossOptions tm;
  CHECK(tm.margin() == 1.0);
  CHECK(tm.p() == 2.0);
  CHECK(tm.eps() == 1e-6);
  CHECK(!tm.swap());
  nn::TripletMarginWithDistanceLossOptions twd;
  CHECK(!twd.distance_function().has_value());
  CHECK(twd.margin() == 1.0);
  CHECK(!twd.swap());
  nn::CTCLossOptions ctc;
  CHECK(ctc.blank() == 0);
  CHECK(!ctc.zero_infinity());
  CHECK(holds<enumtype::kMean>(ctc.reduction()));
  nn::PoissonNLLLossOptions pn;
  CHECK(pn.log_input());
  CHECK(!pn.full());
  CHECK(pn.eps() == 1e-8);
  CHECK(nn::MarginRankingLossOptions().margin() == 0.0);
  CHECK(nn::CosineSimilarityOptions().dim() == 1);
  CHECK(nn::CosineSimilarityOptions().eps() == 1e-8);
  nn::PairwiseDistanceOptions pd;
  CHECK(pd.p() == 2.0);
  CHECK(pd.eps() == 1e-6);
  CHECK(!pd.keepdim());
}

TEST_CASE("margin losses: reprs are Python's") {
  CHECK(repr(*nn::HingeEmbeddingLoss()) == "HingeEmbeddingLoss()");
  CHECK(repr(*nn::MultiMarginLoss()) == "MultiMarginLoss()");
  CHECK(repr(*nn::CosineEmbeddingLoss()) == "CosineEmbeddingLoss()");
  CHECK(repr(*nn::MultiLabelMarginLoss()) == "MultiLabelMarginLoss()");
  CHECK(repr(*nn::SoftMarginLoss()) == "SoftMarginLoss()");
  CHECK(repr(*nn::MultiLabelSoftMarginLoss()) == "MultiLabelSoftMarginLoss()");
  CHECK(repr(*nn::TripletMarginLoss()) == "TripletMarginLoss()");
  CHECK(repr(*nn::TripletMarginWithDistanceLoss()) == "TripletMarginWithDistanceLoss()");
  CHECK(repr(*nn::CTCLoss()) == "CTCLoss()");
  CHECK(repr(*nn::PoissonNLLLoss()) == "PoissonNLLLoss()");
  CHECK(repr(*nn::MarginRankingLoss()) == "MarginRankingLoss()");
  CHECK(repr(*nn::CosineSimilarity()) == "CosineSimilarity()");
  CHECK(repr(*nn::PairwiseDistance()) == "PairwiseDistance()");
  std::ostringstream os;
  os << nn::MarginRankingLoss();
  CHECK(os.str() == "MarginRankingLoss()");
}

TEST_CASE("hinge_embedding_loss and soft_margin_loss: PyTorch's values") {
  check_reductions(
      [](auto r) {
        return F::hinge_embedding_loss(X(), SIGN2(),
                                       F::HingeEmbeddingLossFuncOptions().margin(0.5).reduction(r));
      },
      {{0.2, 1.0, 0.0, 0.3, 1.2, 0.09999999999999998, 0.05, -1.2, 0.9, 0.1, 0.8, 0.0},
       {0.2875},
       {3.4499999999999997}});
  check_reductions(
      [](auto r) { return nn::SoftMarginLoss(nn::SoftMarginLossOptions().reduction(r))(X(), SIGN2()); },
      {{0.5981388693815918, 0.4740769841801067, 1.3873353251154308, 0.5543552444685271, 0.4031860488854579,
        0.9130152523999526, 0.6684596480132863, 1.4632824673380311, 0.3411538747320878, 0.6443966600735709,
        0.5543552444685271, 1.0374879504858856},
       {0.7532702974618712},
       {9.039243569542455}});
  // The module equals the functional form.
  nn::HingeEmbeddingLoss h(nn::HingeEmbeddingLossOptions().margin(0.5));
  check_close(h(X(), SIGN2()), {0.2875}, 1e-12);
}

TEST_CASE("margin_ranking_loss and cosine_embedding_loss: PyTorch's values") {
  Tensor x0 = X().select(1, 0), y0 = Y().select(1, 0);
  check_reductions(
      [&](auto r) {
        return nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.1).reduction(r))(x0, y0, SIGN());
      },
      {{0.4, 0.0, 0.0}, {0.13333333333333333}, {0.4}});
  check_reductions(
      [](auto r) {
        return F::cosine_embedding_loss(X(), Y(), SIGN(),
                                        F::CosineEmbeddingLossFuncOptions().margin(-0.2).reduction(r));
      },
      {{1.1155419689991157, 0.0, 1.409289044378071}, {0.8416103377923956}, {2.5248310133771867}});
  nn::CosineEmbeddingLoss ce(nn::CosineEmbeddingLossOptions().margin(-0.2));
  check_close(ce(X(), Y(), SIGN()), {0.8416103377923956}, 1e-12);
  // A 0-d target with 1-d inputs.
  check_close(F::cosine_embedding_loss(X()[0], Y()[0], tensor(1.0, kDouble),
                                       F::CosineEmbeddingLossFuncOptions().reduction(kNone)),
              {1.1155419689991157}, 1e-12);
}

TEST_CASE("multi_margin_loss and multilabel_margin_loss: PyTorch's values") {
  check_reductions(
      [](auto r) { return nn::MultiMarginLoss(nn::MultiMarginLossOptions().reduction(r))(X(), MM_T()); },
      {{0.07499999999999996, 1.0875, 0.47500000000000003}, {0.5458333333333333}, {1.6375}});
  check_reductions(
      [](auto r) {
        return F::multi_margin_loss(
            X(), MM_T(), F::MultiMarginLossFuncOptions().p(2).margin(0.7).weight(MM_W()).reduction(r));
      },
      {{0.0, 0.6728124999999999, 0.52}, {0.3976041666666667}, {1.1928125}});
  // The third row names every class as a target: no non-target class, loss 0.
  check_reductions(
      [](auto r) {
        return nn::MultiLabelMarginLoss(nn::MultiLabelMarginLossOptions().reduction(r))(X(), ML_T());
      },
      {{0.4, 1.5875000000000001, 0.0}, {0.6625000000000001}, {1.9875000000000003}});
  // 1-d input: one sample; none gives a 0-d loss for a 1-d target (multilabel) or 0-d
  // target (multi margin), a (1) loss for multi margin's (1) target.
  Tensor row = X()[1];
  Tensor ml = F::multilabel_margin_loss(row, longs({3, -1, 0, 0}), F::MultilabelMarginLossFuncOptions(kNone));
  CHECK(ml.dim() == 0);
  check_close(ml, {1.5875000000000001}, 1e-12);
  Tensor mm0 =
      F::multi_margin_loss(row, tensor(int64_t{0}), F::MultiMarginLossFuncOptions().reduction(kNone));
  CHECK(mm0.dim() == 0);
  check_close(mm0, {1.0875}, 1e-12);
  CHECK(
      F::multi_margin_loss(row, longs({0}), F::MultiMarginLossFuncOptions().reduction(kNone)).sizes().vec() ==
      std::vector<int64_t>{1});
  // An empty batch: nothing to sum (PyTorch leaves such outputs uninitialised).
  Tensor e = empty({0, 4}, kDouble);
  CHECK(F::multi_margin_loss(e, longs({}), F::MultiMarginLossFuncOptions().reduction(kNone)).sizes().vec() ==
        std::vector<int64_t>{0});
  check_close(F::multi_margin_loss(e, longs({}), F::MultiMarginLossFuncOptions().reduction(kSum)), {0.0}, 0);
  check_close(F::multilabel_margin_loss(e, empty({0, 4}, kLong), F::MultilabelMarginLossFuncOptions(kSum)),
              {0.0}, 0);
  // The module's weight is a buffer.
  nn::MultiMarginLoss mmw(nn::MultiMarginLossOptions().weight(MM_W()));
  CHECK(mmw->named_buffers().size() == 1);
}

TEST_CASE("multilabel_soft_margin_loss and poisson_nll_loss: PyTorch's values") {
  check_reductions(
      [](auto r) {
        return nn::MultiLabelSoftMarginLoss(
            nn::MultiLabelSoftMarginLossOptions().weight(MM_W()).reduction(r))(X(), MLS_T());
      },
      {{0.7282149738702758, 0.6109656708846684, 0.9303705912785442},
       {0.7565170786778294},
       {2.269551236033488}});
  check_reductions(
      [](auto r) { return nn::PoissonNLLLoss(nn::PoissonNLLLossOptions().reduction(r))(X(), COUNTS()); },
      {{1.2214027581601699, 1.1065306597126334, 0.8041660239464332, 0.4498588075760033, 3.2965853037914092,
        1.4918246976412703, 1.001271096376024, 0.30119421191220214, 0.6596031111569498, 0.6051709180756477,
        1.0408182206817178, 1.222118800390509},
       {1.1000453841184143},
       {13.200544609420971}});
  check_reductions(
      [](auto r) {
        return F::poisson_nll_loss(X().exp(), COUNTS(),
                                   F::PoissonNLLLossFuncOptions().log_input(false).full(true).reduction(r));
      },
      {{1.2214027581601699, 1.1065306432254207, 1.4559725018935474, 2.2139403288945134, 6.453848381485482,
        1.4918246976412703, 1.00127108686373, 0.30119421191220214, 1.3114095876300924, 5.376017924426002,
        1.0408182071831298, 1.2221187949023926},
       {2.016362427018163},
       {24.196349124217956}});
}

TEST_CASE("triplet_margin_loss and triplet_margin_with_distance_loss: PyTorch's values") {
  check_reductions(
      [](auto r) {
        return nn::TripletMarginLoss(nn::TripletMarginLossOptions().reduction(r))(X(), Y(), Z());
      },
      {{1.6451758392264784, 2.975421966990842, 1.7746068990948398}, {2.13173490177072}, {6.39520470531216}});
  check_reductions(
      [](auto r) {
        return F::triplet_margin_loss(
            X(), Y(), Z(), F::TripletMarginLossFuncOptions().margin(0.5).p(1).swap(true).reduction(r));
      },
      {{1.7999979999999995, 4.3, 1.9999999999999996}, {2.699999333333333}, {8.099998}});
  auto cosine_distance = [](const Tensor& a, const Tensor& b) { return 1 - F::cosine_similarity(a, b); };
  check_reductions(
      [&](auto r) {
        return nn::TripletMarginWithDistanceLoss(nn::TripletMarginWithDistanceLossOptions()
                                                     .distance_function(cosine_distance)
                                                     .margin(0.3)
                                                     .swap(true)
                                                     .reduction(r))(X(), Y(), Z());
      },
      {{0.9512677350736588, 1.7644980736849212, 1.4807995634611542},
       {1.3988551240732445},
       {4.196565372219734}});
  // Without a distance function it is triplet_margin_loss with its defaults.
  check_close(F::triplet_margin_with_distance_loss(X(), Y(), Z()), {2.13173490177072}, 1e-12);
}

TEST_CASE("cosine_similarity and pairwise_distance: PyTorch's values") {
  check_close(nn::CosineSimilarity()(X(), Y()),
              {-0.11554196899920655, -0.47292273573861365, -0.4092890443784569}, 1e-12);
  check_close(F::cosine_similarity(X(), Y(), F::CosineSimilarityFuncOptions().dim(0)),
              {-0.2920408301622846, -0.45837257358210953, -0.5631609686558229, -0.22628141110071018}, 1e-12);
  check_close(nn::PairwiseDistance()(X(), Y()), {1.717556461955181, 2.225420566994922, 1.749286025784234},
              1e-12);
  Tensor d = F::pairwise_distance(X(), Y(), F::PairwiseDistanceFuncOptions().p(1).keepdim(true));
  CHECK(d.sizes().vec() == std::vector<int64_t>{3, 1});
  check_close(d, {2.8999979999999996, 4.249998, 3.3999999999999995}, 1e-12);
  // Broadcasting: one row against three; the similarity of a vector with itself is 1, and
  // a zero vector's norm is clamped at eps (similarity 0, not NaN).
  check_close(F::cosine_similarity(X()[0].unsqueeze(0), X()),
              {1.0, -0.35361315990220465, -0.01407438973779529}, 1e-12);
  check_close(F::cosine_similarity(zeros({1, 4}, kDouble), X()), {0.0, 0.0, 0.0}, 0);
}

TEST_CASE("margin losses: float64 gradcheck of each functional form") {
  Tensor a = rand_leaf({3, 4}), b = rand_leaf({3, 4}), c = rand_leaf({3, 4});
  Tensor a1 = rand_leaf({5}), b1 = rand_leaf({5});
  check_grad(
      [](const TensorList& in) {
        return F::hinge_embedding_loss(in[0], SIGN2(), F::HingeEmbeddingLossFuncOptions().margin(0.5));
      },
      {a});
  check_grad([](const TensorList& in) { return F::soft_margin_loss(in[0], SIGN2()); }, {a});
  check_grad(
      [](const TensorList& in) {
        return F::margin_ranking_loss(in[0], in[1], from_values({1, -1, 1, -1, 1}, {5}),
                                      F::MarginRankingLossFuncOptions().margin(0.1));
      },
      {a1, b1});
  check_grad(
      [](const TensorList& in) {
        return F::cosine_embedding_loss(in[0], in[1], SIGN(),
                                        F::CosineEmbeddingLossFuncOptions().margin(-0.5).reduction(kSum));
      },
      {a, b});
  check_grad([](const TensorList& in) { return F::multi_margin_loss(in[0], MM_T()); }, {a});
  check_grad(
      [](const TensorList& in) {
        return F::multi_margin_loss(in[0], MM_T(),
                                    F::MultiMarginLossFuncOptions().p(2).weight(MM_W()).reduction(kNone));
      },
      {a});
  check_grad(
      [](const TensorList& in) {
        return F::multilabel_margin_loss(in[0], ML_T(), F::MultilabelMarginLossFuncOptions(kSum));
      },
      {a});
  check_grad(
      [](const TensorList& in) {
        return F::multilabel_soft_margin_loss(in[0], in[1],
                                              F::MultilabelSoftMarginLossFuncOptions().weight(MM_W()));
      },
      {a, (MLS_T() * 1.0).requires_grad_(true)});
  check_grad([](const TensorList& in) { return F::poisson_nll_loss(in[0], in[1]); }, {a, b});
  check_grad(
      [](const TensorList& in) {
        return F::poisson_nll_loss(
            in[0], in[1], F::PoissonNLLLossFuncOptions().log_input(false).full(true).reduction(kSum));
      },
      {(X().exp()).requires_grad_(true), (COUNTS() + 0.5).requires_grad_(true)});
  check_grad([](const TensorList& in) { return F::triplet_margin_loss(in[0], in[1], in[2]); }, {a, b, c});
  check_grad(
      [](const TensorList& in) {
        return F::triplet_margin_loss(in[0], in[1], in[2],
                                      F::TripletMarginLossFuncOptions().margin(3).p(3).swap(true));
      },
      {a, b, c});
  check_grad(
      [](const TensorList& in) {
        auto dist = [](const Tensor& u, const Tensor& v) { return 1 - F::cosine_similarity(u, v); };
        return F::triplet_margin_with_distance_loss(
            in[0], in[1], in[2],
            F::TripletMarginWithDistanceLossFuncOptions().distance_function(dist).margin(2).swap(true));
      },
      {a, b, c});
  check_grad([](const TensorList& in) { return F::cosine_similarity(in[0], in[1]); }, {a, b});
  check_grad(
      [](const TensorList& in) {
        return F::cosine_similarity(in[0], in[1], F::CosineSimilarityFuncOptions().dim(0));
      },
      {a, b});
  check_grad([](const TensorList& in) { return F::pairwise_distance(in[0], in[1]); }, {a, b});
  check_grad(
      [](const TensorList& in) {
        return F::pairwise_distance(in[0], in[1], F::PairwiseDistanceFuncOptions().p(1.5));
      },
      {a, b});
}

TEST_CASE("margin losses: PyTorch's error texts") {
  check_error([] { F::margin_ranking_loss(X().select(1, 0), Y(), SIGN()); },
              "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
              "torch.Size([3]), input2: torch.Size([3, 4]), target: torch.Size([3])");
  check_error([] { F::margin_ranking_loss(randn({3}, kDouble), randn({4}, kDouble), SIGN()); },
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0");
  check_error([] { F::multi_margin_loss(X(), MM_T(), F::MultiMarginLossFuncOptions().p(3)); },
              "only p == 1 and p == 2 supported");
  check_error(
      [] {
        F::multi_margin_loss(X(), longs({0, 1}));
      },
      "inconsistent target size, expected 3 but got [2]");
  check_error([] { F::multi_margin_loss(X(), longs({0, 1, 4})); }, "target out of range");
  check_error(
      [] {
        F::multi_margin_loss(randn({3, 4, 2}, kDouble), MM_T());
      },
      "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [3, 4, 2]");
  check_error(
      [] { F::multi_margin_loss(X(), MM_T(), F::MultiMarginLossFuncOptions().weight(ones({3}, kDouble))); },
      "inconsistent weight size, expected 4 but got [3]");
  check_error([] { F::multi_margin_loss(X(), MM_T().to(kDouble)); },
              "expected scalar type Long but found Double");
  check_error([] { F::multilabel_margin_loss(X(), ML_T().narrow(0, 0, 2)); },
              "inconsistent target size: [2, 4] for input of size: [3, 4]");
  check_error([] { F::multilabel_margin_loss(X(), ML_T() + 2); }, "argument #2 'target' is out of range");
  check_error([] { F::multilabel_margin_loss(X()[0], ML_T().narrow(0, 0, 1)); },
              "inconsistent target size: [1, 4] for input of size: [4]");
  check_error(
      [] {
        F::multilabel_margin_loss(randn({3, 4, 2}, kDouble), ML_T());
      },
      "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [3, 4, 2]");
  check_error(
      [] {
        F::soft_margin_loss(X(), randn({3, 5}, kDouble));
      },
      "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1");
  check_error([] { F::cosine_embedding_loss(X(), Y(), ones({2}, kDouble)); },
              "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  check_error(
      [] {
        F::cosine_embedding_loss(randn({3, 4, 2}, kDouble), randn({3, 4, 2}, kDouble), SIGN());
      },
      "1D target tensor expects 2D input tensors, but found inputs with sizes [3, 4, 2] and [3, 4, 2].");
  check_error([] { F::cosine_embedding_loss(X()[0], Y()[0], SIGN().narrow(0, 0, 1)); },
              "1D target tensor expects 2D input tensors, but found inputs with sizes [4] and [4].");
  check_error(
      [] {
        F::cosine_embedding_loss(X(), Y(), ones({3, 1}, kDouble));
      },
      "0D or 1D target tensor expected, multi-target not supported");
  check_error(
      [] { F::triplet_margin_loss(X(), Y(), SIGN()); },
      "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
      "got: anchor 2D, positive 2D, and negative 1D inputs");
  check_error(
      [] { F::triplet_margin_with_distance_loss(X(), Y(), SIGN()); },
      "The anchor, positive, and negative tensors are expected to have the same number of dimensions");
  check_error(
      [] {
        F::triplet_margin_with_distance_loss(X(), Y(), Z(),
                                             F::TripletMarginWithDistanceLossFuncOptions().margin(-1));
      },
      "margin must be greater than 0, got -1");
  check_error(
      [] {
        F::cosine_similarity(X(), randn({3, 5}, kDouble));
      },
      "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1");
  check_error(
      [] {
        F::cosine_similarity(ones({2, 3}, kLong), ones({2, 3}, kLong));
      },
      "expected common dtype to be floating point, yet common dtype is Long");
  check_error(
      [] {
        F::pairwise_distance(X(), randn({2, 4}, kDouble));
      },
      "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
}

TEST_CASE("margin losses: PyTorch's CPU autocast policies (float32 for the losses, none for the distances)") {
  // torch.autocast('cpu') with bfloat16 inputs: the losses compute in float32, the
  // distances stay bfloat16 (cosine_similarity is on the CUDA float32 list only).
  Tensor a = X().to(kBFloat16), b = Y().to(kBFloat16), c = Z().to(kBFloat16), s = SIGN().to(kBFloat16);
  AutocastGuard guard(kCPU);
  CHECK(F::margin_ranking_loss(a.select(1, 0), b.select(1, 0), s).dtype() == kFloat);
  CHECK(F::cosine_embedding_loss(a, b, s).dtype() == kFloat);
  CHECK(F::hinge_embedding_loss(a, SIGN2().to(kBFloat16)).dtype() == kFloat);
  CHECK(F::soft_margin_loss(a, SIGN2().to(kBFloat16)).dtype() == kFloat);
  CHECK(F::multi_margin_loss(a, MM_T()).dtype() == kFloat);
  CHECK(F::multilabel_margin_loss(a, ML_T()).dtype() == kFloat);
  CHECK(F::poisson_nll_loss(a, b).dtype() == kFloat);
  CHECK(F::triplet_margin_loss(a, b, c).dtype() == kFloat);
  CHECK(F::cosine_similarity(a, b).dtype() == kBFloat16);
  CHECK(F::pairwise_distance(a, b).dtype() == kBFloat16);
}
