// Embedding (libtorch's torch/nn/modules/embedding.h): a learnable lookup table, initialised
// N(0, 1) with the padding row zeroed, and Embedding::from_pretrained; EmbeddingBag, its
// bag-reducing sibling.
#pragma once

#include <cstdint>
#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/embedding.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"
#include "ember/nn/options/embedding.h"

namespace ember {
namespace nn {

class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(EmbeddingOptions options_);
  /// Wraps a negative padding_idx, then registers weight (options._weight if given).
  void reset() override;
  /// weight ~ N(0, 1), its padding_idx row set to 0.
  void reset_parameters();
  /// Python's repr: "Embedding(10, 3, padding_idx=0)".
  void pretty_print(std::ostream& stream) const override;
  /// weight rows picked by the integer tensor `indices`: shape indices.sizes() + [embedding_dim].
  Tensor forward(const Tensor& indices);

  EmbeddingOptions options;
  Tensor weight;
};

/// The holder, with libtorch's static from_pretrained.
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  using ModuleHolder<EmbeddingImpl>::get;
  /// An Embedding whose table is `embeddings` (2-d, shared, not copied); frozen by default.
  static Embedding from_pretrained(const Tensor& embeddings,
                                   const EmbeddingFromPretrainedOptions& options = {});
};

/// A table whose forward reduces bags of looked-up rows (sum, mean or max) without
/// materialising the rows per index: torch.nn.EmbeddingBag.
class EmbeddingBagImpl : public Cloneable<EmbeddingBagImpl> {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(EmbeddingBagOptions options_);
  void reset() override;
  /// weight ~ N(0, 1), its padding_idx row set to 0.
  void reset_parameters();
  /// Python's repr: "EmbeddingBag(10, 3, mode='mean')".
  void pretty_print(std::ostream& stream) const override;
  /// One row per bag: input 1-d with offsets (bag starts), or 2-d (one bag per row, no offsets);
  /// per_sample_weights (input's shape) scale the rows in mode kSum.
  Tensor forward(const Tensor& input, const Tensor& offsets = {}, const Tensor& per_sample_weights = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())}, {2, ::ember::nn::AnyValue(::ember::Tensor())})

  EmbeddingBagOptions options;
  Tensor weight;
};

/// The holder, with libtorch's static from_pretrained.
class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  using ModuleHolder<EmbeddingBagImpl>::get;
  /// An EmbeddingBag whose table is `embeddings` (2-d, shared, not copied); frozen by default.
  static EmbeddingBag from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace nn
}  // namespace ember
