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

}  // namespace nn
}  // namespace ember
