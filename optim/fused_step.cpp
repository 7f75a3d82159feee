// The shared checks and grouping of the optimizers' fused CUDA steps (optim/fused_step.h).
#include "ember/optim/fused_step.h"

#include <utility>

namespace ember::optim::detail {

namespace {
bool fused_dtype(ScalarType t) { return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16; }
}  // namespace

bool cuda_fusable(const Tensor& param, const Tensor& grad) {
  return param.defined() && param.is_cuda() && fused_dtype(param.dtype()) && param.is_contiguous() &&
         grad.defined() && grad.device() == param.device() && grad.dtype() == param.dtype() &&
         grad.sizes().equals(param.sizes()) && !grad.is_same(param);
}

bool cuda_state_fits(const Tensor& state, const Tensor& param) {
  if (!state.defined()) return true;
  return state.device() == param.device() && state.dtype() == param.dtype() && state.is_contiguous() &&
         state.sizes().equals(param.sizes()) && !state.is_same(param);
}

std::vector<std::vector<size_t>> group_by_device_and_dtype(const std::vector<Tensor>& params) {
  std::vector<std::pair<std::pair<Device, ScalarType>, std::vector<size_t>>> groups;
  for (size_t i = 0; i < params.size(); ++i) {
    std::pair<Device, ScalarType> key{params[i].device(), params[i].dtype()};
    auto it = groups.begin();
    while (it != groups.end() && it->first != key) ++it;
    if (it == groups.end()) {
      groups.push_back({key, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(i);
  }
  std::vector<std::vector<size_t>> out;
  out.reserve(groups.size());
  for (auto& g : groups) out.push_back(std::move(g.second));
  return out;
}

void bump_versions(const std::vector<Tensor>& written) {
  for (const Tensor& t : written) t.unsafeGetTensorImpl()->storage()->bump_version();
}

}  // namespace ember::optim::detail
