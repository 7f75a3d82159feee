// embedding_bag: the bags' layout (which bag and which slot each kept index lands in) is worked
// out on the host from offsets; the rows are gathered with embedding, placed into a dense
// (bags, longest bag, dim) tensor with index_put, and reduced over the slots. Every step is a
// public op, so the gradients of weight (through embedding's backward, honouring
// scale_grad_by_freq) and per_sample_weights come from autograd. Memory: one dense copy of the
// bags, padded to the longest.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/ops/activation.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/embedding.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/minmax.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/ternary.h"

namespace ember {
namespace {

/// Python's legacy tensor type name ("torch.FloatTensor"), which embedding_bag's dtype error prints.
std::string legacy_type(const Tensor& t) {
  return std::string(t.is_cuda() ? "torch.cuda." : "torch.") + scalar_type_name(t.dtype()) + "Tensor";
}

/// Where each kept index goes: its entry in `indices`, its bag and its slot in the bag.
struct BagLayout {
  std::vector<int64_t> entry, bag, slot;
  std::vector<int64_t> count;  // kept indices per bag
  int64_t longest = 0;
};

BagLayout layout_bags(const Tensor& indices, const Tensor& offsets, int64_t num_weights, bool include_last_offset,
                      int64_t padding_idx) {
  Tensor idx = indices.to(kCPU).to(kLong).contiguous(), off = offsets.to(kCPU).to(kLong).contiguous();
  const int64_t n = idx.numel(), n_off = off.numel();
  const int64_t* ip = idx.data_ptr<int64_t>();
  const int64_t* op = off.data_ptr<int64_t>();
  const int64_t bags = include_last_offset ? std::max<int64_t>(n_off - 1, 0) : n_off;
  EMBER_CHECK(n_off == 0 || op[0] == 0,
              "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
              "However, got ", n_off ? op[0] : 0);
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(ip[i] >= 0 && ip[i] < num_weights, "Index ", i, " of input takes value ", ip[i],
                " which is not in the valid range [0, ", num_weights, ")");
  BagLayout l;
  l.count.assign(static_cast<size_t>(bags), 0);
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t begin = op[b], end = b + 1 < n_off ? op[b + 1] : n;
    EMBER_CHECK(begin <= end && end <= n, "offsets[", b + 1 < n_off ? b + 1 : b, "] is out of bounds: offsets must "
                "be non-decreasing and at most the number of indices (", n, ")");
    for (int64_t i = begin; i < end; ++i) {
      if (ip[i] == padding_idx) continue;
      l.entry.push_back(i);
      l.bag.push_back(b);
      l.slot.push_back(l.count[static_cast<size_t>(b)]++);
    }
    l.longest = std::max(l.longest, l.count[static_cast<size_t>(b)]);
  }
  return l;
}

Tensor long_tensor(const std::vector<int64_t>& v, Device device) {
  return tensor(v, TensorOptions().dtype(kLong)).reshape({static_cast<int64_t>(v.size())}).to(device);
}

}  // namespace

Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
                     int64_t mode, bool /*sparse*/, const Tensor& per_sample_weights, bool include_last_offset,
                     int64_t padding_idx) {
  EMBER_CHECK(indices.dtype() == kLong || indices.dtype() == kInt,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
              "got ", legacy_type(indices), " instead (while checking arguments for embedding_bag)");
  EMBER_CHECK(indices.dim() == 1, "input has to be 1D or 2D Tensor, but got Tensor of dimension ", indices.dim());
  EMBER_CHECK(offsets.defined() && offsets.dim() == 1, "offsets has to be a 1D Tensor");
  EMBER_CHECK(weight.dim() == 2, "embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  EMBER_CHECK(mode >= 0 && mode <= 2, "mode has to be one of sum, mean or max");
  const BagLayout l = layout_bags(indices, offsets, weight.size(0), include_last_offset, padding_idx);
  const int64_t bags = static_cast<int64_t>(l.count.size()), dim = weight.size(1);
  const Device device = weight.device();
  if (l.entry.empty()) return zeros({bags, dim}, TensorOptions().dtype(weight.dtype()).device(device));

  Tensor entry = long_tensor(l.entry, device);
  Tensor rows = embedding(weight, index_select(indices.to(device), 0, entry), -1, scale_grad_by_freq);
  if (per_sample_weights.defined()) rows = rows * index_select(per_sample_weights, 0, entry).unsqueeze(1);
  // Slots a bag does not fill hold the reduction's identity: 0 for sum/mean, -inf for max.
  const double fill = mode == 2 ? -std::numeric_limits<double>::infinity() : 0.0;
  Tensor dense = full({bags, l.longest, dim}, fill, TensorOptions().dtype(rows.dtype()).device(device));
  dense = index_put(dense, {long_tensor(l.bag, device), long_tensor(l.slot, device)}, rows);
  Tensor count = long_tensor(l.count, device).unsqueeze(1);
  if (mode == 0) return sum(dense, {1});
  if (mode == 1) return sum(dense, {1}) / clamp_min(count, 1).to(rows.dtype());
  return where(count > 0, amax(dense, {1}), 0.0);  // an empty bag is zeros, not -inf
}

}  // namespace ember
