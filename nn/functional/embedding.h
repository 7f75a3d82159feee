// F::embedding and F::one_hot (torch.nn.functional's), calling core/ops/embedding.h.
#pragma once

#include "ember/autograd/grad_mode.h"
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

inline Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1) {
  return ember::one_hot(tensor, num_classes);
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
