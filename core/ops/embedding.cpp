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
#include "ember/core/ops/ternary.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/embedding.h"
#include "ember/cuda/index.h"

namespace ember {
namespace {

/// The indices as a flat, contiguous int64 tensor, checked against [0, rows) (on the device
/// for CUDA indices: one host synchronisation, and no kernel reads outside the weight).
Tensor checked_indices(const Tensor& indices, int64_t rows) {
  Tensor idx = indices.reshape({-1}).to(kLong).contiguous();
  if (idx.is_cuda()) {
    EMBER_CHECK(!cuda::any_out_of_range(idx, 0, rows), "index out of range in self");
    return idx;
  }
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
  void cuda(const Tensor& weight, Tensor& out) const override { cuda::embedding_rows(weight, idx, out); }
  Tensor backward(const SavedTensors& s, const Tensor& grad) const override {
    return embedding_dense_backward(grad, idx, s.input_sizes(0)[0], padding_idx, scale_grad_by_freq);
  }
};

/// embedding_renorm_ on CUDA: the distinct rows (from the indices, brought to the host) are
/// gathered, rescaled where their norm exceeds max_norm, and written back, with the CPU's
/// arithmetic (the factor in double, then applied in the weight's dtype).
Tensor& embedding_renorm_cuda(Tensor& self, const Tensor& host_idx, double max_norm, double norm_type) {
  const int64_t* p = host_idx.data_ptr<int64_t>();
  std::set<int64_t> distinct(p, p + host_idx.numel());
  if (distinct.empty()) return self;
  Tensor rows = tensor(std::vector<int64_t>(distinct.begin(), distinct.end())).to(self.device());
  Tensor picked = self.index_select(0, rows);
  Tensor norms = picked.norm(norm_type, {1}, /*keepdim=*/true).to(kDouble);
  Tensor factor = where(norms > max_norm, max_norm / (norms + 1e-7), ones_like(norms)).to(self.dtype());
  self.index_put_({rows}, picked * factor);
  return self;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool /*sparse*/) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  EMBER_CHECK(
      indices.dtype() == kLong || indices.dtype() == kInt,
      "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
      "but got ",
      scalar_type_name(indices.dtype()), " instead (while checking arguments for embedding)");
  // The indices travel in the op, not as an input: check their device here.
  detail::check_same_device({weight, indices}, "embedding");
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
    Tensor counts = zeros({num_weights}, idx.options()).index_add(0, idx, ones_like(idx));
    g = g / counts.index_select(0, idx).unsqueeze(1).to(g.dtype());
  }
  return zeros({num_weights, D}, g.options()).index_add(0, idx, g);
}

Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  EMBER_CHECK(self.dim() == 2, "embedding_renorm_(): expected self to be 2-D");
  detail::check_same_device({self, indices}, "embedding_renorm_");
  Tensor idx = checked_indices(indices, self.size(0));
  NoGradGuard no_grad;
  if (self.is_cuda()) return embedding_renorm_cuda(self, idx.to(Device(kCPU)), max_norm, norm_type);
  const int64_t* p = idx.data_ptr<int64_t>();
  for (int64_t row : std::set<int64_t>(p, p + idx.numel())) {  // each row once, as PyTorch
    Tensor r = self.select(0, row);
    double norm = r.norm(norm_type).item<double>();
    if (norm > max_norm) r.mul_(max_norm / (norm + 1e-7));
  }
  return self;
}

/// one_hot of a CUDA tensor: the range checks read min and max back (as PyTorch's CUDA
/// one_hot does), then a comparison with the class numbers builds the rows on the device.
Tensor one_hot_cuda(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.min().item<int64_t>() >= 0, "Class values must be non-negative.");
  const int64_t hi = self.max().item<int64_t>();
  if (num_classes == -1)
    num_classes = hi + 1;
  else
    EMBER_CHECK(hi < num_classes, "Class values must be smaller than num_classes.");
  return self.unsqueeze(-1).eq(arange(num_classes, self.options())).to(kLong);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.dtype() == kLong, "one_hot is only applicable to index tensor.");
  DimVector shape(self.sizes());
  if (self.numel() == 0) {
    EMBER_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return zeros(shape, self.options());
  }
  if (self.is_cuda()) return one_hot_cuda(self, num_classes);
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
