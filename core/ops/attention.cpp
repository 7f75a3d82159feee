// scaled_dot_product_attention: the checks PyTorch makes (with its error texts), grouped-query
// expansion, and the choice between the fused op (FusedAttention below, kernels in
// core/cpu/attention.cpp and cuda/attention.h, dropout included) and the plain composition
// (sdpa_math), which stays as the oracle and as the path of a mask that needs a gradient.
#include "ember/core/ops/attention.h"

#include <cmath>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/autocast.h"
#include "ember/core/cpu/attention.h"
#include "ember/core/error.h"
#include "ember/core/generator.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/dropout.h"
#include "ember/core/shape.h"
#include "ember/cuda/attention.h"

namespace ember {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

DimVector batch_of(const Tensor& t) { return DimVector(t.sizes().slice(0, t.sizes().size() - 2)); }

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// ---- checks -------------------------------------------------------------------------------------

/// PyTorch's validate_sdpa_input and the causal/mask rule.
void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal) {
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(),
              "Expected query, key, and value to have the same dtype, but got query.dtype: ",
              type_meta_name(q.dtype()), " key.dtype: ", type_meta_name(k.dtype()),
              " and value.dtype: ", type_meta_name(v.dtype()), " instead.");
  EMBER_CHECK(q.device() == k.device() && q.device() == v.device(),
              "Expected query, key, and value to have the same device type, but got query.device: ",
              q.device(), " key.device: ", k.device(), " and value.device: ", v.device(), " instead.");
  EMBER_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2,
              "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: ",
              q.dim(), " key.dim: ", k.dim(), " and value.dim: ", v.dim(), " instead.");
  if (mask.defined()) {
    const ScalarType md = mask.dtype();
    EMBER_CHECK(
        md == kBool || md == kFloat || md == q.dtype(),
        "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
        type_meta_name(md), " and  query.dtype: ", type_meta_name(q.dtype()), " instead.");
  }
  // The math kernels' own complaints, which are what PyTorch users see for integer inputs.
  EMBER_CHECK(q.is_floating_point(),
              q.dim() == 2 ? "expected m1 and m2 to have the same dtype, but got: float != "
                           : "expected scalar type Float but found ",
              q.dim() == 2 ? type_meta_name(q.dtype()) : scalar_type_name(q.dtype()));
  EMBER_CHECK(!(is_causal && mask.defined()),
              "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
}

/// The shape errors of q k^T, (+ mask) and P v, in the words of the matmuls PyTorch's math
/// path runs (mm for 2-D operands, bmm over the flattened batch otherwise).
void check_shapes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2);
  DimVector batch = broadcast_shapes(batch_of(q), batch_of(k));
  const bool mm = q.dim() == 2 && k.dim() == 2;
  const int64_t nb = numel_of(batch);
  if (mm)
    EMBER_CHECK(k.size(-1) == E, "mat1 and mat2 shapes cannot be multiplied (", L, "x", E, " and ",
                k.size(-1), "x", S, ")");
  else
    EMBER_CHECK(k.size(-1) == E, "Expected size for first two dimensions of batch2 tensor to be: [", nb, ", ",
                E, "] but got: [", nb, ", ", k.size(-1), "].");
  DimVector attn = batch;
  attn.push_back(L);
  attn.push_back(S);
  if (mask.defined()) {
    maybe_wrap_dim(-2, mask.dim());  // PyTorch's IndexError for a 0-d or 1-d mask
    DimVector full = broadcast_shapes(attn, mask.sizes());
    EMBER_CHECK(IntArrayRef(full).equals(attn), "output with shape ", IntArrayRef(attn),
                " doesn't match the broadcast shape ", IntArrayRef(full));
  }
  batch = broadcast_shapes(batch, batch_of(v));
  if (mm && v.dim() == 2)
    EMBER_CHECK(v.size(-2) == S, "mat1 and mat2 shapes cannot be multiplied (", L, "x", S, " and ",
                v.size(-2), "x", v.size(-1), ")");
  else
    EMBER_CHECK(v.size(-2) == S, "Expected size for first two dimensions of batch2 tensor to be: [",
                numel_of(batch), ", ", S, "] but got: [", numel_of(batch), ", ", v.size(-2), "].");
}

/// Grouped-query attention: each key/value head serves H_q / H_kv query heads, as PyTorch's
/// repeat_interleave along dim -3 (gradients flow back through the expand).
Tensor repeat_heads(const Tensor& t, int64_t q_heads) {
  const int64_t h = t.size(-3);
  if (h == q_heads) return t;
  DimVector grouped(t.sizes());
  grouped.insert(grouped.size() - 2, q_heads / h);  // [..., H_kv, r, S, E]
  DimVector merged(t.sizes());
  merged[merged.size() - 3] = q_heads;
  return t.unsqueeze(-3).expand(grouped).reshape(merged);
}

void expand_gqa(const Tensor& q, Tensor& k, Tensor& v) {
  if (q.dim() < 3 || k.dim() < 3 || v.dim() < 3) return;
  const int64_t hq = q.size(-3), hk = k.size(-3), hv = v.size(-3);
  EMBER_CHECK(hk > 0 && hv > 0 && hq % hk == 0 && hq % hv == 0,
              "Number of heads in key and value must divide the number of heads in ");
  k = repeat_heads(k, hq);
  v = repeat_heads(v, hq);
}

/// The checked, GQA-expanded operands of one call.
struct Prepared {
  Tensor q, k, v;
  double scale;
};

Prepared prepare(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal,
                 std::optional<double> scale, bool enable_gqa) {
  check_inputs(q, k, v, mask, is_causal);
  Tensor k2 = k, v2 = v;
  if (enable_gqa) expand_gqa(q, k2, v2);
  check_shapes(q, k2, v2, mask);
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return {q, k2, v2, sc};
}

/// A boolean mask (true = take part) as 0 / -inf in `dtype`; a float mask cast to `dtype`.
Tensor additive_mask(const Tensor& mask, ScalarType dtype) {
  if (mask.dtype() != kBool) return mask.dtype() == dtype ? mask : mask.to(dtype);
  return zeros(mask.sizes(), TensorOptions().dtype(dtype).device(mask.device()))
      .masked_fill(mask.logical_not(), -kInf);
}

// ---- the fused op -------------------------------------------------------------------------------

// Inputs q, k, v [B, H, ., .] and, when has_mask, the additive mask viewed as [B, H, L, S];
// outputs the attention output and the rows' logsumexp. Backward runs the fused backward
// kernel from the saved inputs, output and logsumexp (no [L, S] matrix there either); the mask
// gets no gradient (the public function takes the plain path when it needs one). Dropout's
// (p, seed, offset) live on the node, so the backward regenerates the forward's mask
// (core/attention_dropout.h) instead of saving it.
struct FusedAttentionBackward final : Op {
  bool is_causal, has_mask, on_cuda;
  double scale;
  AttnDropout dropout;
  FusedAttentionBackward(bool c, bool m, bool cu, double s, AttnDropout dr)
      : is_causal(c), has_mask(m), on_cuda(cu), scale(s), dropout(dr) {}
  const char* name() const override {
    return on_cuda ? "_scaled_dot_product_flash_attention_backward"
                   : "_scaled_dot_product_flash_attention_for_cpu_backward";
  }
  Save saves() const override { return Save::kNothing; }
  // in: grad_out, q, k, v, out, logsumexp[, mask]; out: grad_q, grad_k, grad_v.
  void cpu(const TensorList& in, TensorList& out) const override {
    cpu::sdpa_backward(in[0], in[1], in[2], in[3], has_mask ? in[6] : Tensor(), is_causal, scale, dropout,
                       in[4], in[5], out[0], out[1], out[2]);
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::sdpa_backward(in[0], in[1], in[2], in[3], has_mask ? in[6] : Tensor(), is_causal, scale, dropout,
                        in[4], in[5], out[0], out[1], out[2]);
  }
};

struct FusedAttention final : Op {
  bool is_causal, has_mask, on_cuda;
  double scale;
  AttnDropout dropout;
  FusedAttention(bool c, bool m, bool cu, double s, AttnDropout dr)
      : is_causal(c), has_mask(m), on_cuda(cu), scale(s), dropout(dr) {}
  // PyTorch's names for its CPU and CUDA flash kernels (grad_fn ScaledDotProductFlashAttention...).
  const char* name() const override {
    return on_cuda ? "_scaled_dot_product_flash_attention" : "_scaled_dot_product_flash_attention_for_cpu";
  }
  Save saves() const override { return Save::kBoth; }
  void cpu(const TensorList& in, TensorList& out) const override {
    cpu::sdpa_forward(in[0], in[1], in[2], has_mask ? in[3] : Tensor(), is_causal, scale, dropout, out[0],
                      out[1]);
  }
  void cuda(const TensorList& in, TensorList& out) const override {
    cuda::sdpa_forward(in[0], in[1], in[2], has_mask ? in[3] : Tensor(), is_causal, scale, dropout, out[0],
                       out[1]);
  }
  TensorList backward(const SavedTensors& s, const TensorList& grads) const override {
    Tensor q = s.input(0), k = s.input(1), v = s.input(2);
    TensorList in{grads[0].contiguous(), q, k, v, s.output(0), s.output(1)};
    if (has_mask) in.push_back(s.input(3));
    std::vector<OutSpec> specs{{DimVector(q.sizes()), q.dtype()},
                               {DimVector(k.sizes()), k.dtype()},
                               {DimVector(v.sizes()), v.dtype()}};
    TensorList g = run_op(FusedAttentionBackward{is_causal, has_mask, on_cuda, scale, dropout}, in, specs);
    if (has_mask) g.emplace_back();
    return g;
  }
};

/// [B, H] for a batch shape: its last dim is the heads, the rest flattened into B.
std::pair<int64_t, int64_t> batch_heads(IntArrayRef batch) {
  if (batch.empty()) return {1, 1};
  return {numel_of(batch.slice(0, batch.size() - 1)), batch.back()};
}

/// t expanded to batch + [rows, cols] and laid out as dense [B, H, rows, cols].
Tensor as_4d(const Tensor& t, IntArrayRef batch) {
  auto [b, h] = batch_heads(batch);
  DimVector full(batch);
  full.push_back(t.size(-2));
  full.push_back(t.size(-1));
  return t.expand(full).reshape({b, h, t.size(-2), t.size(-1)}).contiguous();
}

/// The mask expanded (stride 0, not copied) to batch + [L, S] and viewed as [B, H, L, S];
/// only a batch of more than two dims that the expand cannot be viewed as may copy it.
Tensor mask_4d(const Tensor& mask, IntArrayRef batch, int64_t L, int64_t S) {
  auto [b, h] = batch_heads(batch);
  DimVector full(batch);
  full.push_back(L);
  full.push_back(S);
  return mask.expand(full).reshape({b, h, L, S});
}

std::tuple<Tensor, Tensor> fused_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const Tensor& attn_mask, bool is_causal, double scale,
                                           double dropout_p);

Tensor run_fused(const Prepared& p, const Tensor& mask, bool is_causal, double dropout_p) {
  DimVector batch = broadcast_shapes(broadcast_shapes(batch_of(p.q), batch_of(p.k)), batch_of(p.v));
  const int64_t L = p.q.size(-2), S = p.k.size(-2);
  Tensor m = mask.defined() ? mask_4d(additive_mask(mask, p.q.dtype()), batch, L, S) : Tensor();
  auto [out, lse] = fused_attention(as_4d(p.q, batch), as_4d(p.k, batch), as_4d(p.v, batch), m, is_causal,
                                    p.scale, dropout_p);
  (void)lse;
  DimVector shape = batch;
  shape.push_back(L);
  shape.push_back(p.v.size(-1));
  // 4-d operands keep the op's own output (grad_fn the fused node, as PyTorch's).
  return out.sizes().equals(shape) ? out : out.view(shape);
}

/// Whether the fused op can take this call (with or without dropout): no gradient wanted for
/// the mask, and on CUDA a head size and dtype the kernels take.
bool fused_applies(const Prepared& p, const Tensor& mask) {
  if (mask.defined() && mask.requires_grad() && GradMode::is_enabled()) return false;
  if (p.q.device().is_cuda())
    return cuda::sdpa_fused_supported(p.q.size(-1), p.v.size(-1), static_cast<int>(p.q.dtype()));
  return true;
}

/// softmax along the last dim where a row of all -inf gives 0 (PyTorch's _safe_softmax): the
/// dead rows are zeroed before (so no NaN reaches the softmax or its backward) and after.
Tensor safe_softmax(const Tensor& x) {
  Tensor dead = x.eq(-kInf).all(-1, true);
  return x.masked_fill(dead, 0).softmax(-1).masked_fill(dead, 0);
}

Tensor math_impl(const Prepared& p, const Tensor& mask, double dropout_p, bool is_causal) {
  const int64_t L = p.q.size(-2), S = p.k.size(-2);
  Tensor attn = p.q.matmul(p.k.transpose(-2, -1)) * p.scale;
  if (is_causal) {
    Tensor hidden = ones({L, S}, TensorOptions().dtype(kBool).device(p.q.device())).tril().logical_not();
    attn = attn.masked_fill(hidden, -kInf);
  }
  if (mask.defined())
    attn = mask.dtype() == kBool ? attn.masked_fill(mask.logical_not(), -kInf)
                                 : attn + additive_mask(mask, attn.dtype());
  attn = (mask.defined() || is_causal) ? safe_softmax(attn) : attn.softmax(-1);
  if (dropout_p > 0) attn = dropout(attn, dropout_p, true);
  return attn.matmul(p.v);
}

// CPU and CUDA both run scaled_dot_product_attention in the autocast dtype (PyTorch 2.9.1's
// lower_precision_fp lists; a float mask is cast with the rest, a bool mask stays bool).
constexpr AutocastPolicies kSdpaAutocast = autocast::kLowerPrecisionBoth;

/// The dropout of one fused call over `elements` attention elements: none for p <= 0 (as the
/// plain path's `dropout_p > 0`), else its Philox blocks reserved from the default generator
/// of the inputs' device, so consecutive calls draw different masks. p = 1 draws nothing
/// (every element is dropped whatever the bits, as dropout's p = 1 draws nothing).
AttnDropout reserve_dropout(double p, Device device, int64_t elements) {
  EMBER_CHECK(!(p > 1), "dropout probability has to be between 0 and 1, but got ", p);
  if (!(p > 0)) return {};
  if (p == 1 || elements == 0) return {p, 0, 0};
  Generator& g = default_generator(device);
  std::lock_guard<std::mutex> lock(g.mutex());
  return {p, g.current_seed(), g.reserve(attn_dropout::blocks_for(static_cast<uint64_t>(elements)))};
}

std::tuple<Tensor, Tensor> fused_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const Tensor& attn_mask, bool is_causal, double scale,
                                           double dropout_p) {
  EMBER_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4,
              "_scaled_dot_product_fused_attention: expected 4-D query, key and value, got ", query.dim(),
              "-D, ", key.dim(), "-D and ", value.dim(), "-D");
  EMBER_CHECK(query.is_floating_point() && query.dtype() == key.dtype() && query.dtype() == value.dtype(),
              "_scaled_dot_product_fused_attention: expected query, key and value of one floating dtype");
  const int64_t B = query.size(0), H = query.size(1), L = query.size(2), S = key.size(2);
  EMBER_CHECK(key.sizes().equals({B, H, S, query.size(3)}) && value.size(0) == B && value.size(1) == H &&
                  value.size(2) == S,
              "_scaled_dot_product_fused_attention: shapes do not match: query ", query.sizes(), ", key ",
              key.sizes(), ", value ", value.sizes());
  const bool on_cuda = query.device().is_cuda();
  EMBER_CHECK(
      !on_cuda || cuda::sdpa_fused_supported(query.size(3), value.size(3), static_cast<int>(query.dtype())),
      "_scaled_dot_product_fused_attention: the CUDA kernels do not take head sizes ", query.size(3), "/",
      value.size(3), " in ", scalar_type_name(query.dtype()));
  const ScalarType lse_dtype = query.dtype() == kDouble ? kDouble : kFloat;
  TensorList in{query.contiguous(), key.contiguous(), value.contiguous()};
  if (attn_mask.defined()) {
    EMBER_CHECK(!(attn_mask.requires_grad() && GradMode::is_enabled()),
                "_scaled_dot_product_fused_attention: the fused kernels give attn_mask no gradient; "
                "use scaled_dot_product_attention, which takes the plain path for a mask that needs one");
    EMBER_CHECK(attn_mask.dtype() == query.dtype(),
                "_scaled_dot_product_fused_attention: expected an additive mask of ",
                scalar_type_name(query.dtype()), ", got ", scalar_type_name(attn_mask.dtype()));
    in.push_back(attn_mask.dim() == 4 && attn_mask.sizes().equals({B, H, L, S})
                     ? attn_mask
                     : attn_mask.expand({B, H, L, S}));
  }
  std::vector<OutSpec> specs{{DimVector{B, H, L, value.size(3)}, query.dtype()},
                             {DimVector{B, H, L}, lse_dtype}};
  const AttnDropout dropout = reserve_dropout(dropout_p, query.device(), B * H * L * S);
  TensorList out = run_op(FusedAttention{is_causal, attn_mask.defined(), on_cuda, scale, dropout}, in, specs);
  return {out[0], out[1]};
}

}  // namespace

std::tuple<Tensor, Tensor> _scaled_dot_product_fused_attention(const Tensor& query, const Tensor& key,
                                                               const Tensor& value, const Tensor& attn_mask,
                                                               bool is_causal, double scale) {
  return fused_attention(query, key, value, attn_mask, is_causal, scale, 0.0);
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(kSdpaAutocast, &scaled_dot_product_attention, query, key, value, attn_mask,
                          dropout_p, is_causal, scale, enable_gqa);
  Prepared p = prepare(query, key, value, attn_mask, is_causal, scale, enable_gqa);
  if (fused_applies(p, attn_mask)) return run_fused(p, attn_mask, is_causal, dropout_p);
  return math_impl(p, attn_mask, dropout_p, is_causal);
}

namespace detail {

Tensor sdpa_math(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                 double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  if (autocast::is_active()) [[unlikely]]
    return autocast::call(kSdpaAutocast, &sdpa_math, query, key, value, attn_mask, dropout_p, is_causal,
                          scale, enable_gqa);
  return math_impl(prepare(query, key, value, attn_mask, is_causal, scale, enable_gqa), attn_mask, dropout_p,
                   is_causal);
}

Tensor sdpa_fused(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                  bool is_causal, std::optional<double> scale, bool enable_gqa) {
  return run_fused(prepare(query, key, value, attn_mask, is_causal, scale, enable_gqa), attn_mask, is_causal,
                   0.0);
}

}  // namespace detail
}  // namespace ember
