// nn::Module: registration, traversal, train/eval, dtype/device moves, state dicts and the
// Python-style printing of the module tree.
#include "ember/nn/module.h"

#include <cxxabi.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <unordered_set>

#include "ember/autograd/grad_mode.h"

namespace ember {
namespace nn {

namespace {

// "ember::nn::LinearImpl" -> "Linear"; "Net" -> "Net". Template arguments are kept.
std::string short_class_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  size_t template_start = name.find('<');
  std::string head = name.substr(0, template_start);
  size_t colon = head.rfind("::");
  if (colon != std::string::npos) name = name.substr(colon + 2);
  size_t end = name.find('<');
  std::string base = name.substr(0, end);
  if (base.size() > 4 && base.compare(base.size() - 4, 4, "Impl") == 0) {
    name = base.substr(0, base.size() - 4) + (end == std::string::npos ? "" : name.substr(end));
  }
  return name;
}

// Python's shape text in load_state_dict messages: torch.Size([3, 4]).
std::string size_text(IntArrayRef sizes) {
  std::ostringstream os;
  os << "torch.Size([";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << "])";
  return os.str();
}

}  // namespace

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: positional for 1e-4 <= |v| < 1e16.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent + 1)) + "." + digits.substr(static_cast<size_t>(exponent + 1));
    }
  } else {
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char ebuf[16];
    std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += ebuf;
  }
  return negative ? "-" + out : out;
}

std::string join_name(const std::string& prefix, const std::string& name) {
  if (prefix.empty()) return name;
  return prefix + "." + name;
}

Module::Module(std::string name) : name_(std::move(name)) {}
Module::Module() = default;

const std::string& Module::name() const {
  // Computed lazily: typeid(*this) names the most derived class only after construction.
  if (!name_) name_ = short_class_name(typeid(*this).name());
  return *name_;
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  EMBER_CHECK(false,
              "clone() has not been implemented for ", name(),
              ". Subclass torch::nn::Cloneable<", name(), "> instead of torch::nn::Module to inherit the ability to clone.");
  return nullptr;
}

void Module::clone_(Module&, const std::optional<Device>&) {
  EMBER_CHECK(false, "clone_() has not been implemented for ", name(),
              ". Subclass torch::nn::Cloneable<", name(), "> instead of torch::nn::Module to inherit the ability to clone.");
}

// ---- traversal ------------------------------------------------------------------------

void Module::apply(const ModuleApplyFunction& fn) {
  fn(*this);
  for (auto& child : children_) child.value()->apply(fn);
}

void Module::apply(const ConstModuleApplyFunction& fn) const {
  fn(*this);
  for (const auto& child : children_) static_cast<const Module&>(*child.value()).apply(fn);
}

void Module::apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix) {
  fn(name_prefix, *this);
  for (auto& child : children_) child.value()->apply(fn, join_name(name_prefix, child.key()));
}

void Module::apply(const ConstNamedModuleApplyFunction& fn, const std::string& name_prefix) const {
  fn(name_prefix, *this);
  for (const auto& child : children_)
    static_cast<const Module&>(*child.value()).apply(fn, join_name(name_prefix, child.key()));
}

void Module::apply(const ModulePointerApplyFunction& fn) const {
  fn(shared_from_this_checked());
  for (const auto& child : children_) static_cast<const Module&>(*child.value()).apply(fn);
}

void Module::apply(const NamedModulePointerApplyFunction& fn, const std::string& name_prefix) const {
  fn(name_prefix, shared_from_this_checked());
  for (const auto& child : children_)
    static_cast<const Module&>(*child.value()).apply(fn, join_name(name_prefix, child.key()));
}

std::shared_ptr<Module> Module::shared_from_this_checked() const {
  std::shared_ptr<const Module> ptr;
  try {
    ptr = shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    EMBER_CHECK(false,
                "It looks like you attempted to retrieve your top-level module as a shared_ptr, but it is not "
                "stored in a shared_ptr. Use std::make_shared<", name(), ">() instead of creating your module on "
                "the stack, or alternatively do not try to access your top-level module at all by passing "
                "/*include_self=*/false to modules() or named_modules()");
  }
  return std::const_pointer_cast<Module>(ptr);
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> result;
  auto add_own = [&result](const std::string& prefix, const Module& m) {
    for (const auto& p : m.parameters_)
      if (p.value().defined()) result.insert(join_name(prefix, p.key()), p.value());
  };
  if (!recurse) add_own("", *this);
  else apply(ConstNamedModuleApplyFunction(add_own));
  return result;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> result;
  auto add_own = [&result](const std::string& prefix, const Module& m) {
    for (const auto& b : m.buffers_)
      if (b.value().defined()) result.insert(join_name(prefix, b.key()), b.value());
  };
  if (!recurse) add_own("", *this);
  else apply(ConstNamedModuleApplyFunction(add_own));
  return result;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                        bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> result;
  if (include_self) {
    apply(NamedModulePointerApplyFunction(
              [&result](const std::string& key, const std::shared_ptr<Module>& m) { result.insert(key, m); }),
          name_prefix);
  } else {
    for (const auto& child : children_) {
      child.value()->apply(
          NamedModulePointerApplyFunction(
              [&result](const std::string& key, const std::shared_ptr<Module>& m) { result.insert(key, m); }),
          join_name(name_prefix, child.key()));
    }
  }
  return result;
}

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

// ---- state ----------------------------------------------------------------------------

void Module::train(bool on) {
  for (auto& child : children_) child.value()->train(on);
  is_training_ = on;
}

void Module::eval() { train(false); }

bool Module::is_training() const noexcept { return is_training_; }

void Module::to(Device device, ScalarType dtype, bool non_blocking) { to_impl(device, dtype, non_blocking); }
void Module::to(ScalarType dtype, bool non_blocking) { to_impl(std::nullopt, dtype, non_blocking); }
void Module::to(Device device, bool non_blocking) { to_impl(device, std::nullopt, non_blocking); }

void Module::to_impl(std::optional<Device> device, std::optional<ScalarType> dtype, bool non_blocking) {
  for (auto& child : children_) {
    if (device && dtype) child.value()->to(*device, *dtype, non_blocking);
    else if (dtype) child.value()->to(*dtype, non_blocking);
    else child.value()->to(*device, non_blocking);
  }
  NoGradGuard no_grad;
  // Only floating tensors change dtype, as in PyTorch's Module.to (integer buffers such as
  // num_batches_tracked keep theirs).
  auto convert = [&](const Tensor& t) {
    Tensor d = t.detach();
    ScalarType target = dtype && d.is_floating_point() ? *dtype : d.dtype();
    return d.to(device.value_or(d.device()), target, non_blocking);
  };
  for (auto& p : parameters_) {
    Tensor& t = p.value();
    if (!t.defined()) continue;
    t.set_data(convert(t));
    Tensor& g = t.mutable_grad();
    if (g.defined()) g.set_data(convert(g));
  }
  for (auto& b : buffers_)
    if (b.value().defined()) b.value().set_data(convert(b.value()));
}

void Module::zero_grad(bool set_to_none) {
  for (auto& child : children_) child.value()->zero_grad(set_to_none);
  for (auto& p : parameters_) {
    if (!p.value().defined()) continue;
    Tensor& grad = p.value().mutable_grad();
    if (!grad.defined()) continue;
    if (set_to_none) {
      grad.reset();
    } else {
      grad = grad.detach();
      grad.zero_();
    }
  }
}

void Module::collect_state(const std::string& prefix, OrderedDict<std::string, Tensor>& out) const {
  for (const auto& p : parameters_)
    if (p.value().defined()) out.insert(prefix + p.key(), p.value().detach());
  for (const auto& b : buffers_)
    if (b.value().defined()) out.insert(prefix + b.key(), b.value().detach());
  for (const auto& c : children_) c.value()->collect_state(prefix + c.key() + ".", out);
}

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  collect_state("", out);
  return out;
}

IncompatibleKeys Module::load_state_dict(const OrderedDict<std::string, Tensor>& state_dict, bool strict) {
  // The live tensors (not detached copies) so copy_ writes into the module.
  OrderedDict<std::string, Tensor> own;
  static_cast<const Module&>(*this).apply(ConstNamedModuleApplyFunction([&own](const std::string& prefix, const Module& m) {
    for (const auto& p : m.parameters_)
      if (p.value().defined()) own.insert(join_name(prefix, p.key()), p.value());
    for (const auto& b : m.buffers_)
      if (b.value().defined()) own.insert(join_name(prefix, b.key()), b.value());
  }));
  IncompatibleKeys result;
  std::vector<std::string> errors;
  NoGradGuard no_grad;
  for (auto& item : own) {
    const Tensor* input = state_dict.find(item.key());
    if (!input) {
      result.missing_keys.push_back(item.key());
      continue;
    }
    Tensor& param = item.value();
    if (!input->sizes().equals(param.sizes())) {
      errors.push_back("size mismatch for " + item.key() + ": copying a param with shape " +
                       size_text(input->sizes()) + " from checkpoint, the shape in current model is " +
                       size_text(param.sizes()) + ".");
      continue;
    }
    param.copy_(*input);
  }
  for (const auto& item : state_dict)
    if (!own.contains(item.key())) result.unexpected_keys.push_back(item.key());

  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
    return s;
  };
  if (strict) {
    if (!result.unexpected_keys.empty())
      errors.insert(errors.begin(), "Unexpected key(s) in state_dict: " + quoted(result.unexpected_keys) + ". ");
    if (!result.missing_keys.empty())
      errors.insert(errors.begin(), "Missing key(s) in state_dict: " + quoted(result.missing_keys) + ". ");
  }
  if (!errors.empty()) {
    std::string msg = "Error(s) in loading state_dict for " + name() + ":\n\t";
    for (size_t i = 0; i < errors.size(); ++i) msg += (i ? "\n\t" : "") + errors[i];
    EMBER_CHECK(false, msg);
  }
  return result;
}

// ---- registration ---------------------------------------------------------------------

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  EMBER_CHECK(!name.empty(), "Parameter name must not be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, "Parameter name must not contain a dot (got '", name, "')");
  if (tensor.defined()) tensor.requires_grad_(requires_grad);
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  EMBER_CHECK(!name.empty(), "Buffer name must not be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, "Buffer name must not contain a dot (got '", name, "')");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::check_submodule_name(const std::string& name) {
  EMBER_CHECK(!name.empty(), "Submodule name must not be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, "Submodule name must not contain a dot (got '", name, "')");
}

void Module::unregister_module(const std::string& name) {
  EMBER_CHECK(children_.contains(name), "No Module with name `", name, "` is registered");
  children_.erase(name);
}

// ---- printing -------------------------------------------------------------------------

void Module::pretty_print(std::ostream& stream) const { stream << name(); }

bool Module::is_serializable() const { return true; }

// As Python's Module.__repr__: a childless module prints its one line ("Name()" when it has
// nothing to say); a parent prints "Name(" then each child indented as "(key): repr", then ")".
void Module::pretty_print_recursive(std::ostream& stream, const std::string& indentation) const {
  if (children_.is_empty()) {
    std::ostringstream line;
    pretty_print(line);
    // A multi-line repr (ParameterList's) keeps its shape when nested: each line after the
    // first is indented to this child's depth, as Python's _addindent does.
    const std::string text = line.str();
    for (char c : text) {
      stream << c;
      if (c == '\n') stream << indentation;
    }
    if (text == name()) stream << "()";
    return;
  }
  stream << name() << "(\n";
  const std::string next = indentation + "  ";
  for (const auto& child : children_) {
    stream << next << "(" << child.key() << "): ";
    child.value()->pretty_print_recursive(stream, next);
    stream << "\n";
  }
  stream << indentation << ")";
}

std::ostream& operator<<(std::ostream& stream, const Module& module) {
  module.pretty_print_recursive(stream, "");
  return stream;
}

}  // namespace nn
}  // namespace ember
