// Embedding module.
#include "ember/nn/modules/embedding.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/nn/init.h"

namespace ember {
namespace nn {

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions options_) : options(std::move(options_)) { reset(); }

void EmbeddingImpl::reset() {
  int64_t n = options.num_embeddings(), d = options.embedding_dim();
  if (auto p = options.padding_idx()) {
    if (*p > 0) {
      EMBER_CHECK(*p < n, "Padding_idx must be within num_embeddings");
    } else if (*p < 0) {
      EMBER_CHECK(*p >= -n, "Padding_idx must be within num_embeddings");
      options.padding_idx(n + *p);
    }
  }
  if (!options._weight().defined()) {
    weight = register_parameter("weight", ember::empty({n, d}));
    reset_parameters();
  } else {
    EMBER_CHECK(options._weight().sizes().equals({n, d}),
                "Shape of _weight does not match num_embeddings and embedding_dim");
    // A new tensor sharing _weight's storage, as Python's Parameter(_weight).
    weight = register_parameter("weight", options._weight().detach());
  }
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight[*options.padding_idx()].fill_(0);
  }
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  if (options.max_norm()) stream << ", max_norm=" << python_float(*options.max_norm());
  if (options.norm_type() != 2) stream << ", norm_type=" << python_float(options.norm_type());
  if (options.scale_grad_by_freq()) stream << ", scale_grad_by_freq=True";
  if (options.sparse()) stream << ", sparse=True";
  stream << ")";
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return functional::embedding(indices, weight,
                               functional::EmbeddingFuncOptions()
                                   .padding_idx(options.padding_idx())
                                   .max_norm(options.max_norm())
                                   .norm_type(options.norm_type())
                                   .scale_grad_by_freq(options.scale_grad_by_freq())
                                   .sparse(options.sparse()));
}

Embedding Embedding::from_pretrained(const Tensor& embeddings,
                                     const EmbeddingFromPretrainedOptions& options) {
  EMBER_CHECK(embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional");
  Embedding embedding(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                          ._weight(embeddings)
                          .padding_idx(options.padding_idx())
                          .max_norm(options.max_norm())
                          .norm_type(options.norm_type())
                          .scale_grad_by_freq(options.scale_grad_by_freq())
                          .sparse(options.sparse()));
  embedding->weight.requires_grad_(!options.freeze());
  return embedding;
}

// ---- EmbeddingBag ------------------------------------------------------------------------------

EmbeddingBagImpl::EmbeddingBagImpl(EmbeddingBagOptions options_) : options(std::move(options_)) { reset(); }

void EmbeddingBagImpl::reset() {
  const int64_t n = options.num_embeddings(), d = options.embedding_dim();
  if (auto p = options.padding_idx()) {
    EMBER_CHECK(*p >= -n && *p < n, "padding_idx must be within num_embeddings");
    if (*p < 0) options.padding_idx(n + *p);
  }
  if (!options._weight().defined()) {
    weight = register_parameter("weight", ember::empty({n, d}));
    reset_parameters();
  } else {
    EMBER_CHECK(options._weight().sizes().equals({n, d}),
                "Shape of weight does not match num_embeddings and embedding_dim");
    weight = register_parameter("weight", options._weight().detach());
  }
}

void EmbeddingBagImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight[*options.padding_idx()].fill_(0);
  }
}

void EmbeddingBagImpl::pretty_print(std::ostream& stream) const {
  stream << "EmbeddingBag(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.max_norm()) stream << ", max_norm=" << python_float(*options.max_norm());
  if (options.norm_type() != 2) stream << ", norm_type=" << python_float(options.norm_type());
  if (options.scale_grad_by_freq()) stream << ", scale_grad_by_freq=True";
  stream << ", mode='" << enum_name(options.mode()) << "'";
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  stream << ")";
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(options.max_norm())
                                       .norm_type(options.norm_type())
                                       .scale_grad_by_freq(options.scale_grad_by_freq())
                                       .mode(options.mode())
                                       .sparse(options.sparse())
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(options.include_last_offset())
                                       .padding_idx(options.padding_idx()));
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options) {
  EMBER_CHECK(embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional");
  EmbeddingBag bag(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                       ._weight(embeddings)
                       .max_norm(options.max_norm())
                       .norm_type(options.norm_type())
                       .scale_grad_by_freq(options.scale_grad_by_freq())
                       .mode(options.mode())
                       .sparse(options.sparse())
                       .include_last_offset(options.include_last_offset())
                       .padding_idx(options.padding_idx()));
  bag->weight.requires_grad_(!options.freeze());
  return bag;
}

}  // namespace nn
}  // namespace ember
