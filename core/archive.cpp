// OutputArchive / InputArchive over safetensors (Note [Archives are safetensors]).
#include "ember/core/archive.h"

#include <iterator>
#include <istream>
#include <ostream>
#include <set>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/serialize.h"

namespace ember::serialize {

namespace {
std::shared_ptr<OrderedDict<std::string, Tensor>> empty_dict() {
  return std::make_shared<OrderedDict<std::string, Tensor>>("Key");
}

void check_key(const std::string& key) {
  EMBER_CHECK(!key.empty(), "archive keys must not be empty");
}
}  // namespace

OutputArchive::OutputArchive() : tensors_(empty_dict()) {}

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool /*is_buffer*/) {
  check_key(key);
  EMBER_CHECK(tensor.defined(), "cannot write the undefined tensor '", key, "' to an archive");
  // A copy: later in-place changes to `tensor` must not change what is saved.
  tensors_->insert(key, tensor.detach().clone());
}

void OutputArchive::write(const std::string& key, OutputArchive& nested_archive) {
  check_key(key);
  EMBER_CHECK(&nested_archive != this, "an archive cannot be written into itself");
  for (const auto& item : *nested_archive.tensors_) tensors_->insert(key + "." + item.key(), item.value());
}

void OutputArchive::write(const std::string& key, const IValue& value) {
  if (value.isDouble())
    write(key, scalar_tensor(value.toDouble(), TensorOptions().dtype(kFloat64)));
  else if (value.isInt())
    write(key, scalar_tensor(value.toInt(), TensorOptions().dtype(kInt64)));
  else if (value.isBool())
    write(key, scalar_tensor(value.toBool(), TensorOptions().dtype(kBool)));
  else if (value.isTensor())
    write(key, value.toTensor());
  else if (value.isIntList())
    write(key, tensor(value.toIntVector(), kInt64));
  else
    EMBER_CHECK(false, "cannot write '", key, "' to an archive: only numbers, int lists and tensors can be stored");
}

void OutputArchive::save_to(const std::string& filename) const { save_file(*tensors_, filename); }

void OutputArchive::save_to(std::ostream& stream) const {
  std::vector<uint8_t> bytes = serialize_safetensors(*tensors_);
  stream.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  EMBER_CHECK(stream.good(), "could not write the archive to the stream");
}

void OutputArchive::save_to(const std::function<size_t(const void*, size_t)>& func) const {
  std::vector<uint8_t> bytes = serialize_safetensors(*tensors_);
  size_t written = func(bytes.data(), bytes.size());
  EMBER_CHECK(written == bytes.size(), "the archive writer took ", written, " of ", bytes.size(), " bytes");
}

InputArchive::InputArchive() : tensors_(empty_dict()) {}

void InputArchive::set(OrderedDict<std::string, Tensor> tensors) {
  tensors_ = std::make_shared<const OrderedDict<std::string, Tensor>>(std::move(tensors));
  prefix_.clear();
}

void InputArchive::load_from(const std::string& filename, std::optional<Device> device) {
  set(load_file(filename, device.value_or(kCPU)));
}

void InputArchive::load_from(std::istream& stream, std::optional<Device> device) {
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
  load_from(reinterpret_cast<const char*>(bytes.data()), bytes.size(), device);
}

void InputArchive::load_from(const char* data, size_t size, std::optional<Device> device) {
  auto tensors = deserialize_safetensors(reinterpret_cast<const uint8_t*>(data), size, "<archive>");
  if (device && !device->is_cpu())
    for (auto& item : tensors) item.value() = item.value().to(*device);
  set(std::move(tensors));
}

const Tensor* InputArchive::find(const std::string& key) const { return tensors_->find(prefix_ + key); }

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  const Tensor* stored = find(key);
  if (stored == nullptr) return false;
  if (tensor.defined() && tensor.sizes() == stored->sizes() && tensor.dtype() == stored->dtype()) {
    NoGradGuard no_grad;  // loading is not a differentiable op (a parameter may be the target)
    tensor.copy_(*stored);
  } else {
    tensor = tensor.defined() ? stored->to(tensor.device()) : *stored;
  }
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  EMBER_CHECK(try_read(key, tensor, is_buffer), "No such serialized tensor '", prefix_, key, "'");
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested_archive) {
  std::string nested = prefix_ + key + ".";
  for (const auto& item : *tensors_) {
    if (item.key().compare(0, nested.size(), nested) == 0) {
      nested_archive.tensors_ = tensors_;
      nested_archive.prefix_ = std::move(nested);
      return true;
    }
  }
  return false;
}

void InputArchive::read(const std::string& key, InputArchive& nested_archive) {
  EMBER_CHECK(try_read(key, nested_archive), "No such serialized submodule: '", prefix_, key, "'");
}

namespace {
/// The one value of a stored 0-dim number, checked to be a number of the expected kind.
Tensor stored_number(InputArchive& archive, const std::string& key) {
  Tensor t;
  archive.read(key, t);
  EMBER_CHECK(t.numel() == 1, "archive entry '", key, "' holds ", t.numel(), " values, expected one number");
  return t;
}
}  // namespace

void InputArchive::read(const std::string& key, IValue& value) {
  Tensor t;
  read(key, t);
  if (t.dim() == 0 && t.scalar_type() == kFloat64)
    value = IValue(t.item<double>());
  else if (t.dim() == 0 && t.scalar_type() == kInt64)
    value = IValue(t.item<int64_t>());
  else if (t.dim() == 0 && t.scalar_type() == kBool)
    value = IValue(t.item<bool>());
  else
    value = IValue(t);
}

void InputArchive::read(const std::string& key, double& value) {
  value = stored_number(*this, key).item<double>();
}

void InputArchive::read(const std::string& key, int64_t& value) {
  Tensor t = stored_number(*this, key);
  EMBER_CHECK(!is_floating_point(t.scalar_type()), "archive entry '", key, "' holds a ", t.scalar_type(),
              " number, expected an integer");
  value = t.item<int64_t>();
}

void InputArchive::read(const std::string& key, bool& value) { value = stored_number(*this, key).item<bool>(); }

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& item : *tensors_) {
    const std::string& k = item.key();
    if (k.compare(0, prefix_.size(), prefix_) != 0) continue;
    std::string rest = k.substr(prefix_.size());
    std::string first = rest.substr(0, rest.find('.'));
    if (seen.insert(first).second) out.push_back(first);
  }
  return out;
}

std::vector<std::string> InputArchive::tensor_keys() const {
  std::vector<std::string> out;
  for (const auto& item : *tensors_)
    if (item.key().compare(0, prefix_.size(), prefix_) == 0) out.push_back(item.key().substr(prefix_.size()));
  return out;
}

}  // namespace ember::serialize
