// Loss modules: forward through F:: with the module's options; weights as buffers (so
// .to(device) moves them), read back from the buffers at forward time.
#include "ember/nn/modules/loss.h"

namespace ember {
namespace nn {

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, options);
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::l1_loss(input, target, options);
}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::huber_loss(input, target, options);
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::smooth_l1_loss(input, target, options);
}
Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::kl_div(input, target, options);
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options_) : options(options_) { reset(); }
void CrossEntropyLossImpl::reset() { weight = register_buffer("weight", options.weight()); }
void CrossEntropyLossImpl::pretty_print(std::ostream& stream) const { stream << "CrossEntropyLoss()"; }
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, CrossEntropyLossOptions(options).weight(weight));
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options_) : options(options_) { reset(); }
void NLLLossImpl::reset() { weight = register_buffer("weight", options.weight()); }
void NLLLossImpl::pretty_print(std::ostream& stream) const { stream << "NLLLoss()"; }
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, NLLLossOptions(options).weight(weight));
}

BCELossImpl::BCELossImpl(const BCELossOptions& options_) : options(options_) { reset(); }
void BCELossImpl::reset() { register_buffer("weight", options.weight()); }
void BCELossImpl::pretty_print(std::ostream& stream) const { stream << "BCELoss()"; }
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, options);
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_) : options(options_) {
  reset();
}
void BCEWithLogitsLossImpl::reset() {
  weight = register_buffer("weight", options.weight());
  pos_weight = register_buffer("pos_weight", options.pos_weight());
}
void BCEWithLogitsLossImpl::pretty_print(std::ostream& stream) const { stream << "BCEWithLogitsLoss()"; }
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(
      input, target, BCEWithLogitsLossOptions(options).weight(weight).pos_weight(pos_weight));
}

}  // namespace nn
}  // namespace ember
