// Options of Embedding, Embedding::from_pretrained and F::embedding, as libtorch spells
// them: EmbeddingOptions(10, 3).padding_idx(0), F::EmbeddingFuncOptions().max_norm(1.0).
#pragma once

#include <cstdint>
#include <optional>
#include <variant>

#include "ember/core/tensor.h"
#include "ember/core/arg.h"
#include "ember/nn/enums.h"

namespace ember {
namespace nn {

/// Embedding(num_embeddings, embedding_dim).padding_idx(0).max_norm(1.0)...
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// Rows of the table (the size of the vocabulary).
  EMBER_ARG(int64_t, num_embeddings);
  /// Columns of the table (the size of each vector).
  EMBER_ARG(int64_t, embedding_dim);
  /// A row that gets no gradient and starts at zero (e.g. for padding); negative counts
  /// from the end.
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// Rows looked up are first renormalised (in place) to at most this norm.
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  /// The p of the norm max_norm bounds.
  EMBER_ARG(double, norm_type) = 2.;
  /// Scale each row's gradient by the inverse of its frequency in the batch.
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  /// Accepted for libtorch compatibility; ember's gradients are always dense.
  EMBER_ARG(bool, sparse) = false;
  /// An initial table to use instead of a normal(0, 1) draw.
  EMBER_ARG(Tensor, _weight) = Tensor();
};

/// Options of Embedding::from_pretrained(embeddings, options).
struct EmbeddingFromPretrainedOptions {
  /// Whether the table stays fixed (requires_grad false).
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
};

/// How EmbeddingBag reduces a bag: kSum, kMean or kMax.
using EmbeddingBagMode = std::variant<enumtype::kSum, enumtype::kMean, enumtype::kMax>;

/// EmbeddingBag(num_embeddings, embedding_dim).mode(kSum)...: Embedding's options plus the
/// reduction, include_last_offset (offsets' last entry ends the last bag).
struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = enumtype::kMean();
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, _weight) = Tensor();
  EMBER_ARG(bool, include_last_offset) = false;
  /// Indices equal to it are left out of their bag (and its row starts at zero).
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// Options of EmbeddingBag::from_pretrained(embeddings, options).
struct EmbeddingBagFromPretrainedOptions {
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = enumtype::kMean();
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

namespace functional {

/// F::embedding(input, weight, EmbeddingFuncOptions().padding_idx(0)).
struct EmbeddingFuncOptions {
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
};

/// F::embedding_bag(input, weight, EmbeddingBagFuncOptions().mode(kSum).offsets(offsets)).
struct EmbeddingBagFuncOptions {
  EMBER_ARG(Tensor, offsets) = Tensor();
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = enumtype::kMean();
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, per_sample_weights) = Tensor();
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
}  // namespace functional
}  // namespace nn
}  // namespace ember
