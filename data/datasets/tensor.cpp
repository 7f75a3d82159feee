// TensorDataset's batch gather: the fast path of TensorDataset.map(Stack<>()).
#include "ember/data/datasets/tensor.h"

#include <cstring>
#include <vector>

#include "ember/core/ops/creation.h"

namespace ember::data::datasets::detail {

Tensor gather_rows(const Tensor& t, ArrayRef<size_t> indices) {
  int64_t n = t.size(0);
  for (size_t i : indices)
    EMBER_CHECK(i < static_cast<size_t>(n), "index ", i, " is out of bounds for dimension 0 with size ", n);
  std::vector<int64_t> shape = t.sizes().vec();
  shape[0] = static_cast<int64_t>(indices.size());
  if (!t.is_cpu() || !t.is_contiguous()) {
    std::vector<int64_t> idx(indices.begin(), indices.end());
    return t.index_select(0, tensor(idx));
  }
  Tensor out = empty(shape, t.options());
  size_t row = n == 0 ? 0 : t.nbytes() / static_cast<size_t>(n);
  const char* src = static_cast<const char*>(t.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  for (size_t k = 0; k < indices.size(); ++k) std::memcpy(dst + k * row, src + indices[k] * row, row);
  return out;
}

}  // namespace ember::data::datasets::detail
