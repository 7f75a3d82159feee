// F::embedding and F::one_hot (torch.nn.functional's), calling core/ops/embedding.h.
#pragma once

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/embedding.h"
#include "ember/nn/options/embedding.h"

namespace ember {
namespace nn {
namespace functional {

/// Rows of `weight` picked by `input`; a negative padding_idx counts from the end; with
/// max_norm the looked-up rows of weight are first renormalised in place.
inline Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options = {}) {
  int64_t padding_idx = -1;
  if (options.padding_idx()) {
    padding_idx = *options.padding_idx();
    if (padding_idx > 0) {
      EMBER_CHECK(padding_idx < weight.size(0), "Padding_idx must be within num_embeddings");
    } else if (padding_idx < 0) {
      EMBER_CHECK(padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings");
      padding_idx += weight.size(0);
    }
  }
  if (options.max_norm()) {
    NoGradGuard no_grad;
    Tensor w = weight;
    ember::embedding_renorm_(w, input, *options.max_norm(), options.norm_type());
  }
  return ember::embedding(weight, input, padding_idx, options.scale_grad_by_freq(), options.sparse());
}

/// Sums, means or maxima of bags of weight's rows (torch.nn.functional.embedding_bag): input
/// 1-d with offsets marking where each bag starts, or 2-d (bags of equal length, no offsets).
inline Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {}) {
  Tensor indices = input, offsets = options.offsets(), psw = options.per_sample_weights();
  EMBER_CHECK(!psw.defined() || psw.sizes() == input.sizes(), "embedding_bag: If per_sample_weights (",
              psw.defined() ? psw.sizes() : input.sizes(), ") is not None, then it must have the same shape as the input (",
              input.sizes(), ")");
  EMBER_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  if (input.dim() == 2) {
    EMBER_CHECK(!offsets.defined(), "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                "of fixed length sequences. However, found offsets of type Tensor");
    offsets = ember::arange(0, input.numel(), input.size(1), TensorOptions().dtype(kLong).device(input.device()));
    indices = input.reshape({-1});
    if (psw.defined()) psw = psw.reshape({-1});
  } else {
    EMBER_CHECK(input.dim() == 1, "input has to be 1D or 2D Tensor, but got Tensor of dimension ", input.dim());
    EMBER_CHECK(offsets.defined(), "offsets has to be a 1D Tensor but got None");
    EMBER_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor");
  }
  const bool is_max = std::holds_alternative<enumtype::kMax>(options.mode());
  EMBER_CHECK(!(is_max && options.scale_grad_by_freq()), "max mode does not support scaling the gradient by the frequency");
  EMBER_CHECK(!(is_max && options.sparse()), "max mode does not support sparse weights");
  EMBER_CHECK(!psw.defined() || std::holds_alternative<enumtype::kSum>(options.mode()),
              "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
              "(got mode='", enum_name(options.mode()), "'). Please open a feature request on GitHub.");
  int64_t padding_idx = -1;
  if (options.padding_idx()) {
    padding_idx = *options.padding_idx();
    EMBER_CHECK(padding_idx >= -weight.size(0) && padding_idx < weight.size(0),
                "padding_idx must be within the number of embeddings, -", weight.size(0), " through ",
                weight.size(0) - 1, ", but got ", padding_idx);
    if (padding_idx < 0) padding_idx += weight.size(0);
  }
  if (options.max_norm()) {
    NoGradGuard no_grad;
    Tensor w = weight;
    ember::embedding_renorm_(w, indices, *options.max_norm(), options.norm_type());
  }
  const int64_t mode = std::holds_alternative<enumtype::kSum>(options.mode()) ? 0 : is_max ? 2 : 1;
  return ember::embedding_bag(weight, indices, offsets, options.scale_grad_by_freq(), mode, options.sparse(), psw,
                              options.include_last_offset(), padding_idx);
}

inline Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1) {
  return ember::one_hot(tensor, num_classes);
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
