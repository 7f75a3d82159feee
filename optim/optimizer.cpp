// Optimizer base: parameter groups, zero_grad, and the flat state dict of
// Note [Optimizer state dict] (optimizer.h).
#include "ember/optim/optimizer.h"

#include <cstdint>
#include <map>
#include <sstream>
#include <unordered_set>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"

namespace ember::optim {

// ---- options, state, groups ------------------------------------------------------------------

std::unique_ptr<OptimizerOptions> OptimizerOptions::clone() const {
  return std::make_unique<OptimizerOptions>(*this);
}
double OptimizerOptions::get_lr() const {
  EMBER_CHECK(false,
              "double get_lr() has not been overridden and implemented in subclass of "
              "ember::optim::OptimizerOptions, you must override it in your subclass.");
  return 0.0;
}
void OptimizerOptions::set_lr(double) {
  EMBER_CHECK(false,
              "double set_lr() has not been overridden and implemented in subclass of "
              "ember::optim::OptimizerOptions, you must override it in your subclass.");
}
std::vector<std::pair<std::string, double>> OptimizerOptions::named_values() const {
  return {{"lr", get_lr()}};
}
void OptimizerOptions::set_named_value(const std::string& name, double value) {
  EMBER_CHECK(name == "lr", "optimizer options have no option named '", name, "'");
  set_lr(value);
}

void OptimizerOptions::serialize(serialize::OutputArchive& archive) const {
  for (const auto& [name, value] : named_values()) archive.write(name, value);
}
void OptimizerOptions::serialize(serialize::InputArchive& archive) {
  for (const auto& [name, unused] : named_values()) {
    double value = 0;
    archive.read(name, value);
    set_named_value(name, value);
  }
}

ParamStateKey::ParamStateKey(const std::string& key) {
  size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(key, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  EMBER_CHECK(used == key.size() && !key.empty(), "optimizer state key '", key,
              "' is not a parameter's TensorImpl address (c10::guts::to_string(p.unsafeGetTensorImpl()))");
  impl_ = reinterpret_cast<const void*>(static_cast<uintptr_t>(value));
}

std::string ParamStateKey::str() const {
  std::ostringstream s;
  s << impl_;
  return s.str();
}

std::unique_ptr<OptimizerParamState> OptimizerParamState::clone() const {
  return std::make_unique<OptimizerParamState>(*this);
}
std::vector<std::pair<std::string, Tensor>> OptimizerParamState::named_tensors() const { return {}; }
void OptimizerParamState::set_named_tensor(const std::string& name, const Tensor&) {
  EMBER_CHECK(false, "optimizer state has no entry named '", name, "'");
}

void OptimizerParamState::serialize(serialize::OutputArchive& archive) const {
  for (const auto& [name, tensor] : named_tensors()) archive.write(name, tensor);
}
void OptimizerParamState::serialize(serialize::InputArchive& archive) {
  for (const std::string& name : archive.tensor_keys()) {
    Tensor t;
    archive.read(name, t);
    set_named_tensor(name, t);
  }
}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_),
      options_(other.has_options() ? other.options_->clone() : nullptr),
      initial_lr_(other.initial_lr_),
      has_initial_lr_(other.has_initial_lr_) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) *this = OptimizerParamGroup(other);
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  EMBER_CHECK(has_options(),
              "parameter group has no options (they are set when the group is added "
              "to an optimizer)");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  return const_cast<OptimizerParamGroup*>(this)->options();
}
double OptimizerParamGroup::initial_lr() const {
  EMBER_CHECK(has_initial_lr_, "param 'initial_lr' is not specified in this parameter group");
  return initial_lr_;
}

// ---- Optimizer -------------------------------------------------------------------------------

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  EMBER_CHECK(defaults_ != nullptr, "an optimizer needs default options");
  EMBER_CHECK(!param_groups.empty(), "optimizer got an empty parameter list");
  for (const OptimizerParamGroup& g : param_groups) add_param_group(g);
}

Optimizer::Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  EMBER_CHECK(defaults_ != nullptr, "an optimizer needs default options");
  EMBER_CHECK(!parameters.empty(), "optimizer got an empty parameter list");
  add_param_group(OptimizerParamGroup(std::move(parameters)));
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  for (const Tensor& p : param_group.params()) {
    EMBER_CHECK(p.defined(), "optimizer can only optimize Tensors, but one of the params is undefined");
    EMBER_CHECK(p.is_leaf() || p.retains_grad(), "can't optimize a non-leaf Tensor");
  }
  std::unordered_set<const void*> existing;
  for (const OptimizerParamGroup& g : param_groups_)
    for (const Tensor& p : g.params()) existing.insert(p.unsafeGetTensorImpl());
  for (const Tensor& p : param_group.params())
    EMBER_CHECK(existing.count(p.unsafeGetTensorImpl()) == 0,
                "some parameters appear in more than one parameter group");

  OptimizerParamGroup group(param_group.params(),
                            param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  if (param_group.has_initial_lr()) group.set_initial_lr(param_group.initial_lr());
  param_groups_.push_back(std::move(group));
}

void Optimizer::add_parameters(const std::vector<Tensor>& parameters) {
  EMBER_CHECK(!param_groups_.empty(), "add_parameters needs an existing parameter group");
  for (const Tensor& p : parameters) {
    EMBER_CHECK(p.defined(), "optimizer can only optimize Tensors, but one of the params is undefined");
    EMBER_CHECK(p.is_leaf() || p.retains_grad(), "can't optimize a non-leaf Tensor");
    for (const OptimizerParamGroup& g : param_groups_)
      for (const Tensor& q : g.params())
        EMBER_CHECK(!q.is_same(p), "some parameters appear in more than one parameter group");
  }
  auto& params = param_groups_.front().params();
  params.insert(params.end(), parameters.begin(), parameters.end());
}

void Optimizer::zero_grad(bool set_to_none) {
  for (OptimizerParamGroup& group : param_groups_) {
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor& g = p.mutable_grad();
      if (set_to_none) {
        g.reset();
        continue;
      }
      // As PyTorch: a grad with history (create_graph) is cut loose before zeroing.
      if (g.grad_fn())
        g.detach_();
      else
        g.requires_grad_(false);
      g.zero_();
    }
  }
}

const std::vector<Tensor>& Optimizer::parameters() const noexcept { return param_groups_.at(0).params(); }
std::vector<Tensor>& Optimizer::parameters() noexcept { return param_groups_.at(0).params(); }

size_t Optimizer::size() const noexcept {
  size_t n = 0;
  for (const OptimizerParamGroup& g : param_groups_) n += g.params().size();
  return n;
}

std::unique_ptr<OptimizerParamState> Optimizer::make_param_state() const {
  return std::make_unique<OptimizerParamState>();
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return {};
  AutoGradMode enable_grad(true);
  return closure();
}

// ---- state dict ------------------------------------------------------------------------------

namespace {
std::string group_key(size_t g, const std::string& name) {
  return "param_groups." + std::to_string(g) + "." + name;
}
}  // namespace

OrderedDict<std::string, Tensor> Optimizer::state_dict() const {
  NoGradGuard no_grad;
  OrderedDict<std::string, Tensor> out;
  int64_t index = 0;
  for (const OptimizerParamGroup& group : param_groups_) {
    for (const Tensor& p : group.params()) {
      auto it = state_.find(p.unsafeGetTensorImpl());
      if (it != state_.end())
        for (const auto& [name, t] : it->second->named_tensors())
          out.insert("state." + std::to_string(index) + "." + name, t.detach().clone());
      ++index;
    }
  }
  index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const OptimizerParamGroup& group = param_groups_[g];
    for (const auto& [name, v] : group.options().named_values())
      out.insert(group_key(g, name), detail::dict_scalar(v));
    if (group.has_initial_lr())
      out.insert(group_key(g, "initial_lr"), detail::dict_scalar(group.initial_lr()));
    Tensor ids = empty({static_cast<int64_t>(group.params().size())}, kLong);
    for (int64_t k = 0; k < ids.numel(); ++k) ids.data_ptr<int64_t>()[k] = index++;
    out.insert(group_key(g, "params"), ids);
  }
  return out;
}

void Optimizer::load_state_dict(const OrderedDict<std::string, Tensor>& dict) {
  NoGradGuard no_grad;
  size_t saved_groups = 0;
  while (dict.contains(group_key(saved_groups, "params"))) ++saved_groups;
  EMBER_CHECK(saved_groups == param_groups_.size(),
              "loaded state dict has a different number of parameter groups");

  // Saved parameter index -> current parameter, group by group in order (as PyTorch).
  std::map<int64_t, Tensor> id_map;
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  std::vector<std::pair<bool, double>> initial_lrs;
  for (size_t g = 0; g < saved_groups; ++g) {
    const OptimizerParamGroup& group = param_groups_[g];
    Tensor ids = dict[group_key(g, "params")].to(kLong).contiguous();
    EMBER_CHECK(
        ids.numel() == static_cast<int64_t>(group.params().size()),
        "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
    for (int64_t k = 0; k < ids.numel(); ++k) id_map[ids.data_ptr<int64_t>()[k]] = group.params()[k];
    auto opts = group.options().clone();
    for (const auto& [name, v] : opts->named_values()) {
      (void)v;
      opts->set_named_value(name, detail::dict_value(dict, group_key(g, name), "optimizer state dict"));
    }
    options.push_back(std::move(opts));
    const Tensor* init = dict.find(group_key(g, "initial_lr"));
    initial_lrs.emplace_back(init != nullptr, init ? init->item<double>() : 0.0);
  }

  // Build every state first so a bad entry leaves the optimizer unchanged.
  ParamStateMap new_state;
  for (const auto& item : dict) {
    const std::string& key = item.key();
    if (key.rfind("state.", 0) != 0) continue;
    size_t dot = key.find('.', 6);
    EMBER_CHECK(dot != std::string::npos, "malformed optimizer state dict key '", key, "'");
    std::string digits = key.substr(6, dot - 6);
    EMBER_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos,
                "malformed optimizer state dict key '", key, "'");
    int64_t index = std::stoll(digits);
    std::string name = key.substr(dot + 1);
    auto p = id_map.find(index);
    EMBER_CHECK(p != id_map.end(), "loaded state dict has state for parameter ", index,
                ", which is in none of its parameter groups");
    auto& st = new_state[p->second.unsafeGetTensorImpl()];
    if (!st) st = make_param_state();
    Tensor value = item.value().detach();
    // As PyTorch: floating state follows the parameter's dtype and device; "step" stays as saved.
    if (name != "step" && value.is_floating_point()) value = value.to(p->second.options());
    st->set_named_tensor(name, value.clone());
  }

  for (size_t g = 0; g < saved_groups; ++g) {
    param_groups_[g].set_options(std::move(options[g]));
    if (initial_lrs[g].first) param_groups_[g].set_initial_lr(initial_lrs[g].second);
  }
  for (const OptimizerParamGroup& group : param_groups_)
    for (const Tensor& p : group.params()) state_.erase(p.unsafeGetTensorImpl());
  for (auto& [key, st] : new_state) state_[key] = std::move(st);
}

void Optimizer::save(serialize::OutputArchive& archive) const {
  for (const auto& item : state_dict()) archive.write(item.key(), item.value());
}

void Optimizer::load(serialize::InputArchive& archive) {
  OrderedDict<std::string, Tensor> dict;
  for (const std::string& key : archive.tensor_keys()) {
    Tensor t;
    archive.read(key, t);
    dict.insert(key, std::move(t));
  }
  load_state_dict(dict);
}

namespace detail {
double dict_value(const OrderedDict<std::string, Tensor>& dict, const std::string& key, const char* what) {
  const Tensor* t = dict.find(key);
  EMBER_CHECK(t != nullptr, "missing key '", key, "' in ", what);
  EMBER_CHECK(t->numel() == 1, "expected one value for '", key, "' in ", what, ", got ", t->numel());
  return t->item<double>();
}
Tensor dict_scalar(double v, bool integral) {
  return integral ? scalar_tensor(static_cast<int64_t>(v), kLong) : scalar_tensor(v, kDouble);
}
Tensor step_tensor(int64_t step) { return scalar_tensor(static_cast<double>(step), kFloat); }
}  // namespace detail

}  // namespace ember::optim
