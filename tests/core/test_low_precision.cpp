// float16 and bfloat16 on the CPU, op family by op family: each op runs on Half/BFloat16
// inputs and, as the reference, in float32 on the same (already rounded) values; the
// output dtype, the forward values and every input's gradient must agree within PyTorch's
// torch.testing default tolerance for the dtype (float16 rtol 1e-3 atol 1e-5, bfloat16
// rtol 1.6e-2 atol 1e-5), loosened per op only where a comment says why. PyTorch (2.9.1,
// CPU) runs all of these families in both dtypes forward and backward:
// tests/core/fixtures/make_low_precision_table.py prints the audit. Reductions and
// normalisations accumulate in float32 (one test would fail with bf16 accumulation), and a
// few values are PyTorch's own half/bf16 results (tests/core/fixtures/make_low_precision_values.py).
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ember/core/ops/conv.h"
#include "ember/core/ops/dropout.h"
#include "ember/core/ops/embedding.h"
#include "ember/core/ops/loss.h"
#include "ember/core/ops/normalization.h"
#include "ember/core/ops/padding.h"
#include "ember/core/ops/pooling.h"
#include "ember/core/ops/upsample.h"
#include "fixtures/low_precision_values.h"
#include "ember/nn/functional.h"
#include "op_check.h"

using namespace ember;
using namespace ember::test;

namespace {

using Fn = std::function<Tensor(const TensorList&)>;

const ScalarType kLowTypes[] = {kHalf, kBFloat16};

/// torch.testing.assert_close's default tolerances for the dtype.
double default_rtol(ScalarType t) { return t == kHalf ? 1e-3 : 1.6e-2; }
constexpr double kAtol = 1e-5;

/// An input: float32 values, and whether the op differentiates with respect to it.
struct In {
  Tensor values;
  bool grad = true;
};
In fixed(Tensor t) { return {std::move(t), false}; }

/// Leaves of dtype `t` holding `rounded`'s values, requiring grad where asked; integer
/// inputs (indices, targets) pass unchanged.
TensorList leaves(const std::vector<In>& in, const TensorList& rounded, ScalarType t) {
  TensorList out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].values.is_floating_point()) {
      out.push_back(in[i].values);
      continue;
    }
    Tensor l = rounded[i].to(t).detach();
    if (in[i].grad) l.requires_grad_(true);
    out.push_back(l);
  }
  return out;
}

/// Runs fn on Half and BFloat16 leaves and on float32 leaves with the same rounded values;
/// CHECKs that the output keeps the low dtype (float outputs), that the output matches the
/// float32 one elementwise (rtol: `rtol_scale` times the dtype's default, atol 1e-5), and
/// that the gradients for a random (rounded) upstream gradient match the float32 ones.
///
/// Gradients are compared with the same rtol and an atol of rtol times the largest float32
/// gradient: the backward formulas run on the saved low-precision output or input and round
/// their intermediates in the low dtype, in PyTorch as here (tanh' = 1 - y^2 with y rounded
/// to 8 bits is off by ~2^-8 y^2 absolutely, however small 1 - y^2 is), so an element that
/// cancels carries an absolute error on the scale of the whole gradient, not of itself.
/// A bf16 accumulation or a wrong formula still fails by far.
void check_lowp(const std::string& what, const Fn& fn, const std::vector<In>& in, double rtol_scale = 1.0) {
  for (ScalarType t : kLowTypes) {
    INFO(what << " in " << std::string(scalar_type_name(t)));
    TensorList rounded;
    for (const In& i : in) rounded.push_back(i.values.is_floating_point() ? i.values.to(t).to(kFloat) : i.values);
    TensorList low = leaves(in, rounded, t), ref = leaves(in, rounded, kFloat);
    Tensor y = fn(low), y_ref = fn(ref);
    if (y_ref.is_floating_point()) {
      CHECK(y.dtype() == t);
    } else {
      CHECK(y.dtype() == y_ref.dtype());
    }
    const double rtol = rtol_scale * default_rtol(t);
    check_close(y.to(kFloat), y_ref, kAtol, rtol);
    if (!y.requires_grad()) continue;
    Tensor g = randn(y.sizes()).to(t);
    y.backward(g);
    y_ref.backward(g.to(kFloat));
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i].grad || !in[i].values.is_floating_point()) continue;
      INFO("gradient of input " << i);
      if (!ref[i].grad().defined()) {  // the op does not reach this input
        CHECK_FALSE(low[i].grad().defined());
        continue;
      }
      REQUIRE(low[i].grad().defined());
      CHECK(low[i].grad().dtype() == t);
      const double scale = ref[i].grad().numel() ? values(ref[i].grad().abs().max())[0] : 0.0;
      check_close(low[i].grad().to(kFloat), ref[i].grad(), std::max(kAtol, rtol * scale), rtol);
    }
  }
}

/// check_lowp for each of `ops`, labelled with its position.
void check_each(const std::string& what, const std::vector<Fn>& ops, const std::vector<In>& in,
                double rtol_scale = 1.0) {
  for (size_t k = 0; k < ops.size(); ++k) check_lowp(what + " #" + std::to_string(k), ops[k], in, rtol_scale);
}

Tensor rn(IntArrayRef s) { return randn(s); }
/// Values in [lo, hi).
Tensor ru(IntArrayRef s, double lo, double hi) { return rand(s) * (hi - lo) + lo; }

}  // namespace

// ---- elementwise -----------------------------------------------------------------------

TEST_CASE("low precision: unary ops") {
  manual_seed(1);
  const std::vector<Fn> ops = {
      [](const TensorList& t) { return abs(t[0]); },     [](const TensorList& t) { return neg(t[0]); },
      [](const TensorList& t) { return exp(t[0]); },     [](const TensorList& t) { return sin(t[0]); },
      [](const TensorList& t) { return cos(t[0]); },     [](const TensorList& t) { return tanh(t[0]); },
      [](const TensorList& t) { return sigmoid(t[0]); }, [](const TensorList& t) { return erf(t[0]); },
      [](const TensorList& t) { return atan(t[0]); },    [](const TensorList& t) { return sinh(t[0]); },
      [](const TensorList& t) { return square(t[0]); },  [](const TensorList& t) { return expm1(t[0]); },
      [](const TensorList& t) { return clamp(t[0], -0.5, 0.5); },
  };
  check_each("unary", ops, {{rn({3, 7})}});
  const std::vector<Fn> positive = {
      [](const TensorList& t) { return log(t[0]); },   [](const TensorList& t) { return sqrt(t[0]); },
      [](const TensorList& t) { return rsqrt(t[0]); }, [](const TensorList& t) { return log1p(t[0]); },
      [](const TensorList& t) { return log2(t[0]); },  [](const TensorList& t) { return reciprocal(t[0]); },
      [](const TensorList& t) { return pow(t[0], 2.5); },
  };
  check_each("unary on (0.5, 3)", positive, {{ru({3, 7}, 0.5, 3)}});
  const std::vector<Fn> unit = {[](const TensorList& t) { return asin(t[0]); }, [](const TensorList& t) { return acos(t[0]); }};
  check_each("unary on (-0.9, 0.9)", unit, {{ru({3, 7}, -0.9, 0.9)}});
  // Rounding ops: no gradient but the values must be exact.
  const std::vector<Fn> rounding = {[](const TensorList& t) { return floor(t[0]); }, [](const TensorList& t) { return ceil(t[0]); },
                         [](const TensorList& t) { return round(t[0]); }, [](const TensorList& t) { return trunc(t[0]); },
                         [](const TensorList& t) { return sign(t[0]); }};
  check_each("rounding", rounding, {fixed(rn({3, 7}) * 4)});
}

TEST_CASE("low precision: activations") {
  manual_seed(2);
  const std::vector<Fn> ops = {
      [](const TensorList& t) { return relu(t[0]); },
      [](const TensorList& t) { return gelu(t[0]); },
      [](const TensorList& t) { return gelu(t[0], "tanh"); },
      [](const TensorList& t) { return silu(t[0]); },
      [](const TensorList& t) { return elu(t[0]); },
      [](const TensorList& t) { return selu(t[0]); },
      [](const TensorList& t) { return leaky_relu(t[0], 0.1); },
      [](const TensorList& t) { return softplus(t[0]); },
      [](const TensorList& t) { return hardtanh(t[0], -0.5, 0.5); },
      [](const TensorList& t) { return mish(t[0]); },
      [](const TensorList& t) { return relu6(t[0] * 4); },
  };
  check_each("activation", ops, {{rn({4, 9})}});
}

TEST_CASE("low precision: binary and ternary ops") {
  manual_seed(3);
  const std::vector<Fn> ops = {
      [](const TensorList& t) { return add(t[0], t[1]); },
      [](const TensorList& t) { return sub(t[0], t[1], 2); },
      [](const TensorList& t) { return mul(t[0], t[1]); },
      [](const TensorList& t) { return div(t[0], t[1]); },
      [](const TensorList& t) { return pow(t[1], t[0]); },
      [](const TensorList& t) { return atan2(t[0], t[1]); },
      [](const TensorList& t) { return maximum(t[0], t[1]); },
      [](const TensorList& t) { return minimum(t[0], t[1]); },
  };
  // The second operand stays in (0.5, 2) so div and pow are well conditioned.
  check_each("binary", ops, {{rn({3, 5})}, {ru({3, 5}, 0.5, 2)}});
  // Broadcasting against a row.
  check_lowp("broadcast mul", [](const TensorList& t) { return t[0] * t[1]; }, {{rn({4, 6})}, {rn({6})}});
  check_lowp("fmod", [](const TensorList& t) { return fmod(t[0], t[1]); }, {{rn({3, 5}) * 3}, fixed(ru({3, 5}, 0.5, 2))});
  const std::vector<Fn> ternary = {
      [](const TensorList& t) { return where(t[0] > 0, t[0], t[1]); },
      [](const TensorList& t) { return lerp(t[0], t[1], 0.3); },
      [](const TensorList& t) { return lerp(t[0], t[1], t[2]); },
      [](const TensorList& t) { return addcmul(t[0], t[1], t[2], 0.5); },
      [](const TensorList& t) { return addcdiv(t[0], t[1], t[2], 0.5); },
  };
  check_each("ternary", ternary, {{rn({3, 5})}, {rn({3, 5})}, {ru({3, 5}, 0.5, 2)}});
}

TEST_CASE("low precision: comparisons give bool, exactly as on the float32 values") {
  manual_seed(4);
  const std::vector<Fn> ops = {
      [](const TensorList& t) { return lt(t[0], t[1]); },        [](const TensorList& t) { return eq(t[0], t[1]); },
      [](const TensorList& t) { return isnan(t[0]); },           [](const TensorList& t) { return isclose(t[0], t[1]); },
      [](const TensorList& t) { return ge(t[0], t[1].round()); },
  };
  check_each("compare", ops, {fixed(rn({4, 5})), fixed(rn({4, 5}))});
}

// ---- reductions, scans, sort ----------------------------------------------------------

TEST_CASE("low precision: reductions") {
  manual_seed(5);
  const std::vector<Fn> ops = {
      [](const TensorList& t) { return t[0].sum(); },
      [](const TensorList& t) { return t[0].sum({1}); },
      [](const TensorList& t) { return t[0].mean({0}); },
      [](const TensorList& t) { return t[0].mean(); },
      [](const TensorList& t) { return t[0].prod(1); },
      [](const TensorList& t) { return t[0].var({1}); },
      [](const TensorList& t) { return t[0].std(); },
      [](const TensorList& t) { return t[0].norm(); },
      [](const TensorList& t) { return t[0].norm(3, {1}); },
      [](const TensorList& t) { return t[0].amax({1}); },
      [](const TensorList& t) { return t[0].amin({0}); },
      [](const TensorList& t) { return t[0].max(); },
      [](const TensorList& t) { return std::get<0>(t[0].min(1)); },
      [](const TensorList& t) { return t[0].logsumexp({1}); },
  };
  check_each("reduction", ops, {{rn({6, 11})}});
  const std::vector<Fn> index_ops = {
      [](const TensorList& t) { return t[0].argmax(); },
      [](const TensorList& t) { return t[0].argmin(1); },
      [](const TensorList& t) { return std::get<1>(t[0].max(0)); },
      [](const TensorList& t) { return t[0].any(1); },
      [](const TensorList& t) { return t[0].all(); },
  };
  check_each("index reduction", index_ops, {fixed(rn({6, 11}))});
}

TEST_CASE("low precision: reductions accumulate in float32") {
  // 4096 values 1 + k/128 (k = 0..127, each exactly representable in bfloat16 and float16,
  // 32 times each): the float32 sum is 32 * (128 + 127/2) = 6128, exactly; sum and mean must
  // be that sum rounded once (6144 in bfloat16 (8 significant bits: 6128 is between 6112 and
  // 6144, nearer 6144), 6128 in float16). A bfloat16 accumulator stalls far below: once the
  // running sum passes 256, adding ~1.5 moves it by at most one ulp (2) at a time.
  Tensor k = arange(4096, kFloat).remainder(128);
  Tensor v = 1 + k / 128;
  Tensor b = v.to(kBFloat16), h = v.to(kHalf);
  CHECK(values(b.to(kFloat)) == values(v));
  CHECK(values(b.sum())[0] == 6144);
  CHECK(values(h.sum())[0] == 6128);
  CHECK(values(b.mean())[0] == static_cast<float>(BFloat16(6128.0f / 4096)));
  CHECK(values(h.mean())[0] == static_cast<float>(Half(6128.0f / 4096)));
  // Along a dimension, and non-contiguous (sum over dim 0 of the transposed view).
  CHECK(values(b.view({1, 4096}).sum({1}))[0] == 6144);
  CHECK(values(b.view({4096, 1}).t().contiguous().t().sum({0}))[0] == 6144);
  CHECK(values(b.view({64, 64}).t().sum({0, 1}))[0] == 6144);
  // cumsum: the last running sum too (PyTorch accumulates scans in float).
  CHECK(values(b.cumsum(0))[4095] == 6144);
  // var of the same values in float32, rounded once.
  const double var32 = values(v.var())[0];
  CHECK(values(b.var())[0] == static_cast<float>(BFloat16(static_cast<float>(var32))));
  // norm: sqrt(sum v^2) with v^2 accumulated in float.
  const double norm32 = values(v.norm())[0];
  CHECK(values(b.norm())[0] == static_cast<float>(BFloat16(static_cast<float>(norm32))));
  // softmax's and layer_norm's sums over 4096 elements: the float32 results rounded once.
  check_close(b.softmax(0).to(kFloat), v.softmax(0).to(kBFloat16).to(kFloat), 0, 0);
  check_close(layer_norm(b, {4096}).to(kFloat), layer_norm(v, {4096}).to(kBFloat16).to(kFloat), 0, 0);
  // conv2d's weight gradient sums over the batch (4096 1x1 images of ones, upstream gradient
  // v): float accumulation gives 6128 rounded once; per-image or per-chunk bf16 sums stall.
  Tensor w = ones({1, 1, 1, 1}, kBFloat16).requires_grad_(true);
  Tensor y = conv2d(ones({4096, 1, 1, 1}, kBFloat16), w);
  y.backward(b.view({4096, 1, 1, 1}));
  CHECK(values(w.grad())[0] == 6144);
}

TEST_CASE("low precision: scans, sort and topk") {
  manual_seed(6);
  // cumsum/cumprod round each output once from a float running value; over 9 steps the
  // float32 reference differs from that by the float32 rounding only.
  check_lowp("cumsum", [](const TensorList& t) { return t[0].cumsum(1); }, {{rn({4, 9})}});
  check_lowp("cumprod", [](const TensorList& t) { return t[0].cumprod(1); }, {{ru({4, 9}, 0.5, 1.5)}});
  check_lowp("sort values", [](const TensorList& t) { return std::get<0>(t[0].sort(1)); }, {{rn({4, 9})}});
  check_lowp("sort descending indices", [](const TensorList& t) { return std::get<1>(t[0].sort(0, true)); },
             {fixed(rn({4, 9}))});
  check_lowp("argsort", [](const TensorList& t) { return t[0].argsort(1); }, {fixed(rn({4, 9}))});
  check_lowp("topk", [](const TensorList& t) { return std::get<0>(t[0].topk(3)); }, {{rn({4, 9})}});
}

// ---- indexing and shape ----------------------------------------------------------------

TEST_CASE("low precision: index, gather, scatter") {
  manual_seed(7);
  Tensor idx = longs({2, 0, 3, 0});
  Tensor gidx = tensor(std::vector<int64_t>{0, 4, 1, 1, 2, 3, 4, 0}).view({4, 2});
  check_lowp("index_select", [&](const TensorList& t) { return t[0].index_select(0, idx); }, {{rn({4, 5})}});
  check_lowp("gather", [&](const TensorList& t) { return t[0].gather(1, gidx); }, {{rn({4, 5})}});
  check_lowp("scatter", [&](const TensorList& t) { return t[0].scatter(1, gidx, t[1]); }, {{rn({4, 5})}, {rn({4, 2})}});
  check_lowp("scatter_add", [&](const TensorList& t) { return t[0].scatter_add(1, gidx, t[1]); },
             {{rn({4, 5})}, {rn({4, 2})}});
  check_lowp("index_add", [&](const TensorList& t) { return t[0].index_add(0, idx, t[1]); },
             {{rn({4, 5})}, {rn({4, 5})}});
  check_lowp("advanced index", [&](const TensorList& t) { return t[0].index({idx}); }, {{rn({4, 5})}});
  check_lowp("masked_fill", [](const TensorList& t) { return t[0].masked_fill(t[0] > 0, 0.25); }, {{rn({4, 5})}});
  check_lowp("masked_select", [](const TensorList& t) { return masked_select(t[0], t[0] > 0); }, {{rn({4, 5})}});
}

TEST_CASE("low precision: shape ops") {
  manual_seed(8);
  check_lowp("cat", [](const TensorList& t) { return cat({t[0], t[1]}, 1); }, {{rn({3, 4})}, {rn({3, 2})}});
  check_lowp("stack", [](const TensorList& t) { return stack({t[0], t[1]}); }, {{rn({3, 4})}, {rn({3, 4})}});
  check_lowp("permute/reshape", [](const TensorList& t) { return t[0].permute({2, 0, 1}).reshape({-1, 6}); },
             {{rn({2, 3, 4})}});
  check_lowp("flip/roll", [](const TensorList& t) { return t[0].flip({0}).roll({1}, {1}); }, {{rn({3, 4})}});
  check_lowp("repeat/expand", [](const TensorList& t) { return t[0].repeat({2, 1}) + t[1].expand({6, 4}); },
             {{rn({3, 4})}, {rn({1, 4})}});
  check_lowp("tril/triu", [](const TensorList& t) { return t[0].tril() - t[0].triu(1); }, {{rn({4, 4})}});
  check_lowp("unfold", [](const TensorList& t) { return t[0].unfold(1, 3, 2); }, {{rn({3, 9})}});
}

// ---- nn ops ------------------------------------------------------------------------------

TEST_CASE("low precision: softmax and log_softmax") {
  manual_seed(9);
  check_lowp("softmax", [](const TensorList& t) { return t[0].softmax(1); }, {{rn({5, 13})}});
  check_lowp("softmax dim 0", [](const TensorList& t) { return t[0].softmax(0); }, {{rn({5, 13})}});
  check_lowp("log_softmax", [](const TensorList& t) { return t[0].log_softmax(1); }, {{rn({5, 13})}});
  check_lowp("log_softmax dim 0", [](const TensorList& t) { return t[0].log_softmax(0); }, {{rn({5, 13})}});
}

TEST_CASE("low precision: normalizations") {
  manual_seed(10);
  check_lowp("layer_norm", [](const TensorList& t) { return layer_norm(t[0], {8}, t[1], t[2]); },
             {{rn({5, 8})}, {ru({8}, 0.5, 1.5)}, {rn({8})}});
  check_lowp("group_norm", [](const TensorList& t) { return group_norm(t[0], 2, t[1], t[2]); },
             {{rn({3, 4, 6})}, {ru({4}, 0.5, 1.5)}, {rn({4})}});
  check_lowp("batch_norm train",
             [](const TensorList& t) { return batch_norm(t[0], t[1], t[2], {}, {}, true, 0.1, 1e-5); },
             {{rn({4, 3, 5})}, {ru({3}, 0.5, 1.5)}, {rn({3})}});
  check_lowp("batch_norm eval",
             [](const TensorList& t) { return batch_norm(t[0], t[1], t[2], t[3], t[4], false, 0.1, 1e-5); },
             {{rn({4, 3, 5})}, {ru({3}, 0.5, 1.5)}, {rn({3})}, fixed(rn({3})), fixed(ru({3}, 0.5, 2))});
  // batch_norm with float32 running statistics and low-precision input, as a module under
  // autocast has them: the running statistics stay float32.
  for (ScalarType t : kLowTypes) {
    Tensor rm = zeros({3}), rv = ones({3});
    Tensor x = rn({4, 3, 5}).to(t);
    Tensor y = batch_norm(x, {}, {}, rm, rv, true, 0.1, 1e-5);
    CHECK(y.dtype() == t);
    CHECK(rm.dtype() == kFloat);
    check_close(rm, x.to(kFloat).mean({0, 2}) * 0.1, 1e-6, 1e-5);
  }
}

TEST_CASE("low precision: losses") {
  manual_seed(11);
  Tensor cls = longs({1, 0, 4, 2, 3, 1});
  check_lowp("cross_entropy", [&](const TensorList& t) { return cross_entropy_loss(t[0], cls); }, {{rn({6, 5})}});
  check_lowp("cross_entropy smoothing sum",
             [&](const TensorList& t) { return cross_entropy_loss(t[0], cls, {}, Reduction::Sum, -100, 0.1); },
             {{rn({6, 5})}});
  check_lowp("cross_entropy probabilities", [](const TensorList& t) { return cross_entropy_loss(t[0], t[1]); },
             {{rn({6, 5})}, fixed(ru({6, 5}, 0, 1).softmax(1))});
  check_lowp("nll_loss", [&](const TensorList& t) { return nll_loss(t[0], cls, {}, Reduction::None); },
             {{rn({6, 5})}});
  check_lowp("mse_loss", [](const TensorList& t) { return mse_loss(t[0], t[1]); }, {{rn({4, 6})}, {rn({4, 6})}});
  check_lowp("l1_loss", [](const TensorList& t) { return l1_loss(t[0], t[1], Reduction::Sum); },
             {{rn({4, 6})}, {rn({4, 6})}});
  check_lowp("huber_loss", [](const TensorList& t) { return huber_loss(t[0], t[1], Reduction::None); },
             {{rn({4, 6})}, {rn({4, 6})}});
  check_lowp("smooth_l1_loss", [](const TensorList& t) { return smooth_l1_loss(t[0], t[1], Reduction::None, 0.5); },
             {{rn({4, 6})}, {rn({4, 6})}});
  check_lowp("binary_cross_entropy", [](const TensorList& t) { return binary_cross_entropy(t[0], t[1]); },
             {{ru({4, 6}, 0.1, 0.9)}, fixed(ru({4, 6}, 0, 1))});
  check_lowp("binary_cross_entropy_with_logits",
             [](const TensorList& t) { return binary_cross_entropy_with_logits(t[0], t[1]); },
             {{rn({4, 6})}, {ru({4, 6}, 0, 1)}});
  check_lowp("kl_div", [](const TensorList& t) { return kl_div(t[0], t[1], Reduction::Sum); },
             {{rn({4, 6})}, fixed(ru({4, 6}, 0.1, 1))});
}

TEST_CASE("low precision: convolutions") {
  manual_seed(12);
  // Sums over 27-36 products: the float32 reference and the low-precision result (float
  // accumulation, one rounding) agree to the output's rounding, but the gradient sums
  // cancel more (outputs near zero), so they get atol 1e-3 through the loosened rtol's
  // companion below.
  check_lowp("conv1d", [](const TensorList& t) { return conv1d(t[0], t[1], t[2], 1, 1); },
             {{rn({2, 3, 8})}, {rn({4, 3, 3})}, {rn({4})}});
  check_lowp("conv2d", [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 2, 1); },
             {{rn({2, 3, 6, 6})}, {rn({4, 3, 3, 3})}, {rn({4})}});
  check_lowp("conv2d groups dilation", [](const TensorList& t) { return conv2d(t[0], t[1], {}, 1, 0, 2, 2); },
             {{rn({2, 4, 7, 7})}, {rn({4, 2, 3, 3})}});
  check_lowp("conv2d 1x1", [](const TensorList& t) { return conv2d(t[0], t[1]); },
             {{rn({2, 5, 4, 4})}, {rn({3, 5, 1, 1})}});
  check_lowp("conv_transpose1d", [](const TensorList& t) { return conv_transpose1d(t[0], t[1], t[2], 2); },
             {{rn({2, 3, 5})}, {rn({3, 4, 3})}, {rn({4})}});
  check_lowp("conv_transpose2d", [](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], 2, 1, 1); },
             {{rn({2, 3, 5, 5})}, {rn({3, 4, 3, 3})}, {rn({4})}});
}

TEST_CASE("low precision: pooling") {
  manual_seed(13);
  check_lowp("max_pool2d", [](const TensorList& t) { return max_pool2d(t[0], {2, 2}); }, {{rn({2, 3, 6, 6})}});
  check_lowp("max_pool2d padded", [](const TensorList& t) { return max_pool2d(t[0], {3, 3}, {2, 2}, 1); },
             {{rn({2, 3, 7, 7})}});
  check_lowp("max_pool1d", [](const TensorList& t) { return max_pool1d(t[0], {3}); }, {{rn({2, 3, 9})}});
  check_lowp("avg_pool2d", [](const TensorList& t) { return avg_pool2d(t[0], {3, 3}, {2, 2}, 1); },
             {{rn({2, 3, 7, 7})}});
  check_lowp("avg_pool1d", [](const TensorList& t) { return avg_pool1d(t[0], {2}); }, {{rn({2, 3, 8})}});
  check_lowp("adaptive_avg_pool2d", [](const TensorList& t) { return adaptive_avg_pool2d(t[0], {3, 2}); },
             {{rn({2, 3, 7, 5})}});
  check_lowp("adaptive_max_pool2d", [](const TensorList& t) { return std::get<0>(adaptive_max_pool2d(t[0], {3, 3})); },
             {{rn({2, 3, 7, 7})}});
  check_lowp("adaptive_avg_pool1d", [](const TensorList& t) { return adaptive_avg_pool1d(t[0], {4}); },
             {{rn({2, 3, 9})}});
}

TEST_CASE("low precision: padding and upsampling") {
  manual_seed(14);
  check_lowp("pad constant", [](const TensorList& t) { return pad(t[0], {1, 2, 0, 1}, "constant", 0.5); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("pad reflect", [](const TensorList& t) { return pad(t[0], {1, 2, 2, 1}, "reflect"); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("pad replicate", [](const TensorList& t) { return pad(t[0], {1, 1, 1, 1}, "replicate"); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("pad circular", [](const TensorList& t) { return pad(t[0], {1, 1, 1, 1}, "circular"); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("upsample_nearest2d", [](const TensorList& t) { return upsample_nearest2d(t[0], {7, 9}); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("upsample_nearest1d", [](const TensorList& t) { return upsample_nearest1d(t[0], {9}); },
             {{rn({1, 2, 4})}});
  check_lowp("upsample_bilinear2d", [](const TensorList& t) { return upsample_bilinear2d(t[0], {7, 9}, false); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("upsample_bilinear2d align", [](const TensorList& t) { return upsample_bilinear2d(t[0], {7, 9}, true); },
             {{rn({1, 2, 4, 4})}});
  check_lowp("upsample_linear1d", [](const TensorList& t) { return upsample_linear1d(t[0], {7}, false); },
             {{rn({1, 2, 4})}});
}

TEST_CASE("low precision: embedding, dropout") {
  manual_seed(15);
  Tensor idx = longs({1, 3, 1, 0, 7, 3});
  check_lowp("embedding", [&](const TensorList& t) { return embedding(t[0], idx); }, {{rn({8, 4})}});
  check_lowp("embedding padding_idx", [&](const TensorList& t) { return embedding(t[0], idx, 3); }, {{rn({8, 4})}});
  for (ScalarType t : kLowTypes) {
    // The same mask as float32 draws under the same seed; as PyTorch, kept elements are
    // x * (1 / (1 - p) rounded to the dtype), rounded: two roundings, not one.
    Tensor x = rn({200}).to(t);
    manual_seed(99);
    Tensor y = dropout(x, 0.3, true);
    manual_seed(99);
    Tensor keep = dropout(x.to(kFloat), 0.3, true) != 0;
    const double scale = static_cast<double>(t == kHalf ? static_cast<float>(Half(1 / 0.7f))
                                                         : static_cast<float>(BFloat16(1 / 0.7f)));
    CHECK(y.dtype() == t);
    check_close(y.to(kFloat), (x.to(kFloat) * keep.to(kFloat) * scale).to(t).to(kFloat), 0, 0);
    manual_seed(99);
    CHECK(alpha_dropout(x, 0.2, true).dtype() == t);
  }
}

TEST_CASE("low precision: matmul, linear, einsum") {
  manual_seed(16);
  // K = 8 products summed in float: the outputs are the float32 results rounded once.
  check_lowp("mm", [](const TensorList& t) { return mm(t[0], t[1]); }, {{rn({5, 8})}, {rn({8, 3})}});
  check_lowp("matmul batched", [](const TensorList& t) { return matmul(t[0], t[1]); },
             {{rn({2, 5, 8})}, {rn({8, 3})}});
  check_lowp("bmm", [](const TensorList& t) { return bmm(t[0], t[1]); }, {{rn({2, 5, 8})}, {rn({2, 8, 3})}});
  check_lowp("mv", [](const TensorList& t) { return matmul(t[0], t[1]); }, {{rn({5, 8})}, {rn({8})}});
  check_lowp("addmm", [](const TensorList& t) { return addmm(t[2], t[0], t[1]); },
             {{rn({5, 8})}, {rn({8, 3})}, {rn({3})}});
  check_lowp("einsum", [](const TensorList& t) { return einsum("bij,jk->bik", {t[0], t[1]}); },
             {{rn({2, 5, 8})}, {rn({8, 3})}});
}

TEST_CASE("low precision: more elementwise, linear algebra and nn ops") {
  manual_seed(17);
  namespace F = ember::nn::functional;
  const std::vector<Fn> unary = {
      [](const TensorList& t) { return exp2(t[0]); },
      [](const TensorList& t) { return relu6(t[0] * 5 - 1); },
      [](const TensorList& t) { return t[0].clamp(t[0] * 0 - 0.5, t[0] * 0 + 0.5); },
      [](const TensorList& t) { return F::normalize(t[0], F::NormalizeFuncOptions().dim(1)); },
      [](const TensorList& t) { return t[0].norm(INFINITY, {1}); },
      [](const TensorList& t) { return t[0].prod(); },
      [](const TensorList& t) { return t[0].sum(kFloat); },  // the dtype= overload: float32 out
  };
  for (size_t k = 0; k < unary.size(); ++k) {
    if (k == 6) continue;
    check_lowp("elementwise #" + std::to_string(k), unary[k], {{ru({4, 6}, 0.6, 1.4)}});
  }
  for (ScalarType t : kLowTypes) {
    // nan_to_num's default replacements are the dtype's own extremes, as PyTorch's.
    Tensor special = full({3}, 0.0, t);
    static_cast<uint16_t*>(special.data_ptr())[0] = t == kHalf ? 0x7e00 : 0x7fc0;  // nan
    static_cast<uint16_t*>(special.data_ptr())[1] = t == kHalf ? 0x7c00 : 0x7f80;  // inf
    static_cast<uint16_t*>(special.data_ptr())[2] = t == kHalf ? 0xfc00 : 0xff80;  // -inf
    const double big = t == kHalf ? 65504.0 : 3.3895313892515355e38;
    CHECK(values(nan_to_num(special)) == std::vector<double>{0, big, -big});
  }
  for (ScalarType t : kLowTypes) {  // sum(dtype=float32) of the rounded values is the float32 sum
    Tensor x = rn({4, 6}).to(t);
    CHECK(x.sum(kFloat).dtype() == kFloat);
    check_close(x.sum(kFloat), x.to(kFloat).sum(), 0, 1e-6);
  }
  check_lowp("remainder", [](const TensorList& t) { return remainder(t[0], t[1]); },
             {{rn({3, 5}) * 3}, fixed(ru({3, 5}, 0.5, 2))});
  check_lowp("floor_divide", [](const TensorList& t) { return floor_divide(t[0], t[1]); },
             {fixed(rn({3, 5}) * 3), fixed(ru({3, 5}, 0.5, 2))});
  check_lowp("mv", [](const TensorList& t) { return mv(t[0], t[1]); }, {{rn({5, 8})}, {rn({8})}});
  check_lowp("dot", [](const TensorList& t) { return dot(t[0], t[1]); }, {{rn({16})}, {rn({16})}});
  check_lowp("outer", [](const TensorList& t) { return outer(t[0], t[1]); }, {{rn({4})}, {rn({5})}});
  check_lowp("baddbmm", [](const TensorList& t) { return baddbmm(t[0], t[1], t[2], 0.5, 2); },
             {{rn({2, 3, 4})}, {rn({2, 3, 6})}, {rn({2, 6, 4})}});
  check_lowp("F::linear", [](const TensorList& t) { return F::linear(t[0], t[1], t[2]); },
             {{rn({2, 3, 8})}, {rn({5, 8})}, {rn({5})}});
  // bilinear contracts x1 W (rounded to the dtype) with x2: two roundings, as PyTorch's
  // _trilinear (whose bmm intermediate is rounded too); 8x the default rtol covers them.
  check_lowp("F::bilinear", [](const TensorList& t) { return F::bilinear(t[0], t[1], t[2], t[3]); },
             {{rn({4, 3})}, {rn({4, 2})}, {rn({5, 3, 2})}, {rn({5})}}, 8);
  check_lowp("F::linear 4-d", [](const TensorList& t) { return F::linear(t[0], t[1]); },
             {{rn({2, 2, 3, 8})}, {rn({5, 8})}});
  Tensor cls = longs({1, -100, 4, 2});
  check_lowp("cross_entropy weight ignore_index",
             [&](const TensorList& t) { return cross_entropy_loss(t[0], cls, t[1], Reduction::Mean, -100); },
             {{rn({4, 5})}, fixed(ru({5}, 0.5, 2))});
  Tensor cls2d = tensor(std::vector<int64_t>{0, 2, 1, 1, 2, 0, 0, 1}).view({2, 2, 2});
  check_lowp("nll_loss 2d", [&](const TensorList& t) { return nll_loss_nd(t[0].log_softmax(1), cls2d); },
             {{rn({2, 3, 2, 2})}});
  check_lowp("reflection_pad1d", [](const TensorList& t) { return reflection_pad1d(t[0], {2, 1}); }, {{rn({2, 3, 5})}});
  check_lowp("replication_pad1d", [](const TensorList& t) { return replication_pad1d(t[0], {1, 3}); },
             {{rn({2, 3, 5})}});
  check_lowp("adaptive_max_pool1d", [](const TensorList& t) { return std::get<0>(adaptive_max_pool1d(t[0], {3})); },
             {{rn({2, 3, 8})}});
  check_lowp("interpolate nearest scale", [](const TensorList& t) {
    return F::interpolate(t[0], F::InterpolateFuncOptions().scale_factor(std::vector<double>{1.5, 2}));
  }, {{rn({1, 2, 4, 4})}});
  for (ScalarType t : kLowTypes) {
    CHECK(randperm(7, t).dtype() == t);
    CHECK(values(std::get<0>(randperm(7, t).sort(0))) == std::vector<double>{0, 1, 2, 3, 4, 5, 6});
    CHECK(rand_like(zeros({3}, t)).dtype() == t);
  }
}

TEST_CASE("low precision: convolutions through the GEMM path, batch chunks and row tiles") {
  manual_seed(18);
  // Receptive fields of 8 * 9 = 72 elements (the GEMM path, not the small-K loops), a batch
  // of 11 (the weight gradient's batch chunks summed in float), and a 1x1 "same" case.
  check_lowp("conv2d gemm", [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 1, 1); },
             {{rn({11, 8, 6, 6})}, {rn({6, 8, 3, 3})}, {rn({6})}});
  check_lowp("conv2d gemm stride 2", [](const TensorList& t) { return conv2d(t[0], t[1], {}, 2, 2, 1, 2); },
             {{rn({3, 8, 9, 7})}, {rn({4, 4, 3, 3})}});
  check_lowp("conv1d same", [](const TensorList& t) { return conv1d(t[0], t[1], t[2], 1, "same"); },
             {{rn({3, 6, 20})}, {rn({5, 6, 5})}, {rn({5})}});
  check_lowp("conv_transpose2d groups", [](const TensorList& t) { return conv_transpose2d(t[0], t[1], {}, 2, 0, 0, 2); },
             {{rn({2, 4, 4, 4})}, {rn({4, 3, 3, 3})}});
}

// ---- PyTorch's own half/bf16 results -------------------------------------------------------

namespace {

/// The fixture's inputs: n values (i * mul mod `mod` - off) / div, exact in both dtypes
/// (make_low_precision_values.py's vals()).
Tensor fixture_values(IntArrayRef shape, int64_t mul = 37, int64_t mod = 23, int64_t off = 11, double div = 8) {
  std::vector<double> v;
  for (int64_t i = 0; i < prod_of(shape); ++i) v.push_back(static_cast<double>((i * mul) % mod - off) / div);
  return from_values(v, shape, kFloat);
}

struct FixtureCase {
  const char* name;
  std::function<TensorList()> inputs;
  Fn fn;
};

/// The cases of make_low_precision_values.py, in its order, with the same inputs.
std::vector<FixtureCase> fixture_cases() {
  auto one = [](IntArrayRef s) { return [s = std::vector<int64_t>(s.begin(), s.end())] { return TensorList{fixture_values(s)}; }; };
  return {
      {"exp", one({32}), [](const TensorList& t) { return exp(t[0]); }},
      {"tanh", one({32}), [](const TensorList& t) { return tanh(t[0]); }},
      {"gelu", one({32}), [](const TensorList& t) { return gelu(t[0]); }},
      {"silu", one({32}), [](const TensorList& t) { return silu(t[0]); }},
      {"sum", [] { return TensorList{fixture_values({4096}, 41, 97, 48)}; },
       [](const TensorList& t) { return t[0].sum().view({1}); }},
      {"mean_dim1", one({4, 8}), [](const TensorList& t) { return t[0].mean({1}); }},
      {"var", one({4, 8}), [](const TensorList& t) { return t[0].var(1); }},
      {"norm", one({4, 8}), [](const TensorList& t) { return t[0].norm(2, {1}); }},
      {"cumsum", one({32}), [](const TensorList& t) { return t[0].cumsum(0); }},
      {"softmax", one({4, 8}), [](const TensorList& t) { return t[0].softmax(1); }},
      {"log_softmax", one({4, 8}), [](const TensorList& t) { return t[0].log_softmax(1); }},
      {"layer_norm", one({4, 8}), [](const TensorList& t) { return layer_norm(t[0], {8}); }},
      {"matmul", [] { return TensorList{fixture_values({4, 8}), fixture_values({8, 3}, 29, 17, 8)}; },
       [](const TensorList& t) { return matmul(t[0], t[1]); }},
      {"conv2d", [] { return TensorList{fixture_values({1, 2, 5, 5}), fixture_values({3, 2, 3, 3}, 29, 17, 8)}; },
       [](const TensorList& t) { return conv2d(t[0], t[1], {}, 1, 1); }},
      {"avg_pool2d", one({1, 2, 5, 5}), [](const TensorList& t) { return avg_pool2d(t[0], {3, 3}, {2, 2}, 1); }},
      {"bilinear", one({1, 2, 3, 3}), [](const TensorList& t) { return upsample_bilinear2d(t[0], {5, 4}, false); }},
      {"cross_entropy", one({4, 8}),
       [](const TensorList& t) { return cross_entropy_loss(t[0], longs({1, 7, 0, 3})).view({1}); }},
  };
}

/// Distance in units in the last place between two 16-bit float patterns (same format).
int64_t ulps(uint16_t a, uint16_t b) {
  auto key = [](uint16_t v) { return (v & 0x8000) ? -static_cast<int64_t>(v & 0x7fff) : static_cast<int64_t>(v); };
  return std::abs(key(a) - key(b));
}

std::vector<uint16_t> bits16(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<uint16_t> out(static_cast<size_t>(c.numel()));
  std::memcpy(out.data(), c.data_ptr(), out.size() * 2);
  return out;
}

/// CHECKs got is within one ulp of PyTorch's patterns everywhere; returns how many differ.
int64_t check_ulps(const Tensor& got, const std::vector<uint16_t>& want) {
  std::vector<uint16_t> g = bits16(got);
  REQUIRE(g.size() == want.size());
  int64_t differ = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got bits " << g[i] << ", PyTorch " << want[i]);
    CHECK(ulps(g[i], want[i]) <= 1);
    differ += g[i] != want[i];
  }
  return differ;
}

/// PyTorch's patterns as a float32 tensor of `like`'s shape.
Tensor decode(const std::vector<uint16_t>& bits, const Tensor& like) {
  Tensor t = empty(like.sizes(), like.dtype());
  REQUIRE(static_cast<size_t>(t.numel()) == bits.size());
  std::memcpy(t.data_ptr(), bits.data(), bits.size() * 2);
  return t.to(kFloat);
}

}  // namespace

TEST_CASE("low precision: PyTorch's float16 and bfloat16 results (fixture)") {
  // Outputs within one unit in the last place of PyTorch's: both compute in float and round
  // once, but libm and PyTorch's vectorised exp/tanh/erf may differ in float's last bit,
  // which can move a rounding by one half/bf16 ulp. Gradients as in check_lowp (rtol, atol
  // rtol * max |gradient|): the backward formulas round a saved value or an intermediate in
  // the low dtype, in PyTorch as here, not always at the same places (gelu' near its zero,
  // overlapping avg_pool windows summed in a different order).
  const std::vector<FixtureCase> cases = fixture_cases();
  const auto& results = lowp_fixture::results();
  REQUIRE(results.size() == 2 * cases.size());
  int64_t differ = 0, total = 0;
  for (size_t c = 0; c < cases.size(); ++c)
    for (int k = 0; k < 2; ++k) {
      const lowp_fixture::Result& r = results[2 * c + static_cast<size_t>(k)];
      const ScalarType t = r.bfloat16 ? kBFloat16 : kHalf;
      INFO(std::string(cases[c].name) << " in " << std::string(scalar_type_name(t)));
      REQUIRE(std::string(r.name) == cases[c].name);
      TensorList in = cases[c].inputs();
      for (Tensor& x : in) x = x.to(t).requires_grad_(true);
      Tensor y = cases[c].fn(in);
      REQUIRE(y.dtype() == t);
      differ += check_ulps(y, r.out);
      total += y.numel();
      y.backward(fixture_values(y.sizes(), 13, 11, 5, 4).to(t));
      REQUIRE(r.grads.size() == in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        INFO("gradient of input " << i);
        Tensor want = decode(r.grads[i], in[i]);
        const double rtol = default_rtol(t), scale = values(want.abs().max())[0];
        check_close(in[i].grad().to(kFloat), want, std::max(kAtol, rtol * scale), rtol);
      }
    }
  MESSAGE(differ << " of " << total << " outputs differ from PyTorch's bit pattern (all by one ulp)");
}

// ---- creation and random -----------------------------------------------------------------

TEST_CASE("low precision: creation and random ops honour the dtype") {
  for (ScalarType t : kLowTypes) {
    INFO(std::string(scalar_type_name(t)));
    CHECK(zeros({3}, t).dtype() == t);
    CHECK(full({3}, 2.5, t).dtype() == t);
    CHECK(values(arange(0, 2, 0.5, t)) == std::vector<double>{0, 0.5, 1, 1.5});
    CHECK(values(linspace(0, 1, 5, t)) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
    CHECK(eye(3, t).dtype() == t);
    manual_seed(0);
    Tensor r = rand({1000}, t), n = randn({1000}, t);
    CHECK(r.dtype() == t);
    CHECK(n.dtype() == t);
    CHECK(values(r.min())[0] >= 0);
    CHECK(values(r.max())[0] <= 1);  // PyTorch's rand in half/bf16 may round up to 1
    CHECK(std::fabs(values(n.to(kFloat).mean())[0]) < 0.15);
    CHECK(std::fabs(values(n.to(kFloat).std())[0] - 1) < 0.15);
    Tensor e = empty({1000}, t);
    e.normal_(2, 0.5);
    CHECK(std::fabs(values(e.to(kFloat).mean())[0] - 2) < 0.1);
    e.uniform_(-1, 1);
    CHECK(values(e.abs().max())[0] <= 1);
    Tensor bern = bernoulli(full({1000}, 0.25, t));
    CHECK(bern.dtype() == t);
    CHECK(std::fabs(values(bern.to(kFloat).mean())[0] - 0.25) < 0.06);
    CHECK(randint(0, 5, {10}, t).dtype() == t);
    CHECK(randn_like(e).dtype() == t);
  }
}

TEST_CASE("low precision: mul and div by a Scalar keep the scalar in float, as PyTorch's") {
  // PyTorch 2.9.1: for x = linspace(-3, 3, 2001) in float16/bfloat16 and s = 0.7123456789,
  // x * s and x / s equal (x.float() * s).to(dtype) (one rounding) and differ from x times
  // the scalar rounded to the dtype first; x + s rounds the scalar first (checked there too).
  const double s = 0.7123456789;
  for (ScalarType t : kLowTypes) {
    CAPTURE(scalar_type_name(t));
    Tensor x = linspace(-3, 3, 2001).to(t);
    Tensor xf = x.to(kFloat);
    Tensor s_rounded = full({}, s, TensorOptions().dtype(t));
    CHECK(equal(x * s, (xf * s).to(t)));
    CHECK(equal(s * x, (xf * s).to(t)));
    CHECK(equal(x / s, (xf / s).to(t)));
    CHECK_FALSE(equal(x * s, x * s_rounded));  // the test can tell the two apart
    CHECK_FALSE(equal(x / s, x / s_rounded));
    CHECK(equal(x + s, x + s_rounded));
    Tensor y = x.clone();
    y.mul_(s);
    CHECK(equal(y, (xf * s).to(t)));
    y = x.clone();
    y.div_(s);
    CHECK(equal(y, (xf / s).to(t)));
    CHECK((x * s).dtype() == t);
    CHECK((x / 2).dtype() == t);
    // Gradients: d(x * s)/dx = s and d(x / s)/dx = 1 / s, in the dtype, through the same rule.
    Tensor leaf = x.detach().requires_grad_(true);
    (leaf * s).sum().backward();
    CHECK(equal(leaf.grad(), (ones_like(xf) * s).to(t)));
    leaf.mutable_grad() = Tensor();
    (leaf / s).sum().backward();
    CHECK(equal(leaf.grad(), (ones_like(xf) / s).to(t)));
  }
  // Integer tensors times a float scalar promote to float32 as before.
  CHECK((arange(4) * 0.5).dtype() == kFloat);
}
