#include "ember/nn/modules/parameter_containers.h"

#include <sstream>

#include "ember/autograd/grad_mode.h"

namespace ember {
namespace nn {

namespace {

// Python's entry line, "(key): Parameter containing: [<type> of size 3x4]" plus " (cuda:0)"
// for a CUDA tensor; `type` is the dtype for a list and the legacy tensor type for a dict, as
// torch.nn.ParameterList/ParameterDict print them.
void print_entries(std::ostream& stream, const char* name, const OrderedDict<std::string, Tensor>& params,
                   bool legacy_type) {
  stream << name << "(";
  if (params.is_empty()) {
    stream << ")";
    return;
  }
  stream << "\n";
  for (const auto& item : params) {
    const Tensor& p = item.value();
    std::string size;
    for (int64_t d = 0; d < p.dim(); ++d) size += (d ? "x" : "") + std::to_string(p.size(d));
    std::string type = dtype_name(p.dtype());
    if (legacy_type) type = std::string(p.is_cuda() ? "torch.cuda." : "torch.") + scalar_type_name(p.dtype()) + "Tensor";
    stream << "    (" << item.key() << "): Parameter containing: [" << type << " of size " << size;
    if (p.is_cuda()) stream << " (" << p.device() << ")";
    stream << "]\n";
  }
  stream << ")";
}

// A copy of every parameter (to `device` if given) keeping requires_grad: the clone shares nothing.
void copy_parameters(const OrderedDict<std::string, Tensor>& from, OrderedDict<std::string, Tensor>& to,
                     const std::optional<Device>& device) {
  NoGradGuard no_grad;
  to.clear();
  for (const auto& item : from) {
    Tensor d = item.value().detach();
    Tensor c = device && d.device() != *device ? d.to(*device, /*non_blocking=*/false, /*copy=*/true) : d.clone();
    c.requires_grad_(item.value().requires_grad());
    to.insert(item.key(), c);
  }
}

}  // namespace

// ---- ParameterList ------------------------------------------------------------------------

std::shared_ptr<Module> ParameterListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ParameterListImpl>(*this);
  copy_parameters(parameters_, copy->parameters_, device);
  return copy;
}

void ParameterListImpl::pretty_print(std::ostream& stream) const {
  print_entries(stream, "ParameterList", parameters_, /*legacy_type=*/false);
}

void ParameterListImpl::append(const Tensor& param) {
  register_parameter(std::to_string(parameters_.size()), param, param.requires_grad());
}

Tensor& ParameterListImpl::at(size_t idx) {
  EMBER_CHECK(idx < size(), "Index out of range");
  return parameters_[idx].value();
}

const Tensor& ParameterListImpl::at(size_t idx) const {
  EMBER_CHECK(idx < size(), "Index out of range");
  return parameters_[idx].value();
}

// ---- ParameterDict ------------------------------------------------------------------------

ParameterDictImpl::ParameterDictImpl(const OrderedDict<std::string, Tensor>& params) {
  for (const auto& item : params) insert(item.key(), item.value());
}

std::shared_ptr<Module> ParameterDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ParameterDictImpl>(*this);
  copy_parameters(parameters_, copy->parameters_, device);
  return copy;
}

void ParameterDictImpl::pretty_print(std::ostream& stream) const {
  print_entries(stream, "ParameterDict", parameters_, /*legacy_type=*/true);
}

Tensor& ParameterDictImpl::insert(const std::string& key, const Tensor& param) {
  return register_parameter(key, param, param.requires_grad());
}

Tensor ParameterDictImpl::pop(const std::string& key) {
  Tensor value = parameters_[key];
  parameters_.erase(key);
  return value;
}

void ParameterDictImpl::set(const std::string& key, const Tensor& param) {
  if (Tensor* existing = parameters_.find(key)) *existing = param;
  else insert(key, param);
}

}  // namespace nn
}  // namespace ember
