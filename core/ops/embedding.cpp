// embedding: a row gather with its own kernel and a backward that scatters the gradient rows
// back (index_add into zeros), skipping padding_idx and optionally scaling by frequency.
#include "ember/core/ops/embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "ember/autograd/grad_mode.h"
#include "ember/core/op.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"

namespace ember {
namespace {

/// The indices as a flat, contiguous int64 tensor, checked against [0, rows).
Tensor checked_indices(const Tensor& indices, int64_t rows) {
  Tensor idx = indices.reshape({-1}).to(kLong).contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i)
    EMBER_CHECK(p[i] >= 0 && p[i] < rows, "index out of range in self");
  return idx;
}

// embedding: out[i] = weight[idx[i]]. The gradient of weight row k is the sum of the output
// gradient rows whose index is k (embedding_dense_backward).
struct Embedding final : UnaryOp {
  Tensor idx;  // flat int64, in range
  int64_t padding_idx;
  bool scale_grad_by_freq;
  Embedding(Tensor i, int64_t p, bool s) : idx(std::move(i)), padding_idx(p), scale_grad_by_freq(s) {}
  const char* name() const override { return "embedding"; }
  Save saves() const override { return Save::kNothing; }
  void cpu(const Tensor& weight, Tensor& out) const override {
    // weight arrives contiguous (embedding() makes it so): copy whole rows.
    const int64_t* ip = idx.data_ptr<int64_t>();
    size_t row_bytes = static_cast<size_t>(weight.size(1)) * weight.element_size();
    const char* src = static_cast<const char*>(weight.data_ptr());
    char* dst = static_cast<char*>(out.data_ptr());
    int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(weight.size(1), 1));
    parallel_for(idx.numel(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * row_bytes, src + ip[i] * row_bytes, row_bytes);
    });
  }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return embedding_dense_backward(grad, idx, s.input_sizes(0)[0], padding_idx, scale_grad_by_freq);
  }
};

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool /*sparse*/) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  EMBER_CHECK(
      indices.dtype() == kLong || indices.dtype() == kInt,
      "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
      "but got ",
      scalar_type_name(indices.dtype()), " instead (while checking arguments for embedding)");
  Tensor idx = checked_indices(indices, weight.size(0));
  DimVector out_shape(indices.sizes());
  out_shape.push_back(weight.size(1));
  return run_op(Embedding{idx, padding_idx, scale_grad_by_freq}, {weight.contiguous()},
                OutSpec{out_shape, weight.dtype()});
}

// grad_weight = zeros.index_add(0, idx, g) with g the gradient rows, rows at padding_idx
// zeroed and, with scale_grad_by_freq, each row divided by its index's count.
Tensor embedding_dense_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  int64_t D = grad.size(-1);
  Tensor idx = indices.reshape({-1}).to(kLong);
  Tensor g = grad.reshape({-1, D});
  if (padding_idx >= 0) g = g.masked_fill(idx.eq(padding_idx).unsqueeze(1), 0);
  if (scale_grad_by_freq) {
    Tensor counts = zeros({num_weights}, kLong).index_add(0, idx, ones_like(idx));
    g = g / counts.index_select(0, idx).unsqueeze(1).to(g.dtype());
  }
  return zeros({num_weights, D}, g.options()).index_add(0, idx, g);
}

Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  EMBER_CHECK(self.dim() == 2, "embedding_renorm_(): expected self to be 2-D");
  Tensor idx = checked_indices(indices, self.size(0));
  const int64_t* p = idx.data_ptr<int64_t>();
  NoGradGuard no_grad;
  for (int64_t row : std::set<int64_t>(p, p + idx.numel())) {  // each row once, as PyTorch
    Tensor r = self.select(0, row);
    double norm = r.norm(norm_type).item<double>();
    if (norm > max_norm) r.mul_(max_norm / (norm + 1e-7));
  }
  return self;
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.dtype() == kLong, "one_hot is only applicable to index tensor.");
  DimVector shape(self.sizes());
  if (self.numel() == 0) {
    EMBER_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return zeros(shape, kLong);
  }
  Tensor x = self.contiguous();
  const int64_t* p = x.data_ptr<int64_t>();
  auto [lo, hi] = std::minmax_element(p, p + x.numel());
  EMBER_CHECK(*lo >= 0, "Class values must be non-negative.");
  if (num_classes == -1)
    num_classes = *hi + 1;
  else
    EMBER_CHECK(*hi < num_classes, "Class values must be smaller than num_classes.");
  shape.push_back(num_classes);
  Tensor out = zeros(shape, kLong);
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i * num_classes + p[i]] = 1;
  return out;
}

}  // namespace ember
