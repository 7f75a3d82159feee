// LRScheduler and the epoch-indexed schedules; each get_lrs() follows PyTorch 1.13's
// torch/optim/lr_scheduler.py formula for formula so lr sequences match to the last bit.
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/dict_int.h"

#include <cmath>
#include <numbers>

namespace ember::optim {

namespace {
constexpr double kPi = std::numbers::pi;
constexpr const char* kWhat = "scheduler state dict";

void put_list(OrderedDict<std::string, Tensor>& d, const std::string& name, const std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i) d.insert(name + "." + std::to_string(i), detail::dict_scalar(v[i]));
}
std::vector<double> get_list(const OrderedDict<std::string, Tensor>& d, const std::string& name, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = detail::dict_value(d, name + "." + std::to_string(i), kWhat);
  return v;
}
}  // namespace

// ---- LRScheduler -----------------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (OptimizerParamGroup& group : optimizer_.param_groups()) {
    if (!group.has_initial_lr()) group.set_initial_lr(group.options().get_lr());
    base_lrs_.push_back(group.initial_lr());
  }
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& group : optimizer_.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

void LRScheduler::set_optimizer_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  EMBER_CHECK(lrs.size() == groups.size(), "scheduler computed ", lrs.size(), " learning rates for ",
              groups.size(), " parameter groups");
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = get_current_lrs();
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  set_optimizer_lrs(get_lrs());
}

void LRScheduler::step(double epoch) {
  ++step_count_;
  last_epoch_ = static_cast<int64_t>(std::floor(epoch));
  set_optimizer_lrs(closed_form_lrs());
}

OrderedDict<std::string, Tensor> LRScheduler::state_dict() const {
  OrderedDict<std::string, Tensor> d;
  d.insert("last_epoch", detail::dict_scalar(static_cast<double>(last_epoch_), true));
  d.insert("_step_count", detail::dict_scalar(static_cast<double>(step_count_), true));
  put_list(d, "base_lrs", base_lrs_);
  put_list(d, "_last_lr", last_lr_);
  return d;
}

void LRScheduler::load_state_dict(const OrderedDict<std::string, Tensor>& d) {
  const size_t n = optimizer_.param_groups().size();
  auto base = get_list(d, "base_lrs", n);
  auto last = get_list(d, "_last_lr", n);
  const int64_t last_epoch = detail::dict_int(d, "last_epoch", kWhat);
  const int64_t step_count = detail::dict_int(d, "_step_count", kWhat);
  last_epoch_ = last_epoch;
  step_count_ = step_count;
  base_lrs_ = std::move(base);
  last_lr_ = std::move(last);
}

// ---- LambdaLR --------------------------------------------------------------------------------

LambdaLR::LambdaLR(Optimizer& optimizer, LambdaFn lr_lambda)
    : LambdaLR(optimizer, std::vector<LambdaFn>(optimizer.param_groups().size(), lr_lambda)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LambdaFn> lr_lambdas)
    : LRScheduler(optimizer), lr_lambdas_(std::move(lr_lambdas)) {
  EMBER_CHECK(lr_lambdas_.size() == optimizer.param_groups().size(), "Expected ",
              optimizer.param_groups().size(), " lr_lambdas, but got ", lr_lambdas_.size());
  initial_step();
}

std::vector<double> LambdaLR::get_lrs() {
  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) lrs.push_back(base_lrs_[i] * lr_lambdas_[i](last_epoch_));
  return lrs;
}

// ---- StepLR, MultiStepLR, ExponentialLR ------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size > 0, "StepLR expects a positive step_size, but got ", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> StepLR::closed_form_lrs() {
  // Python's // floors; last_epoch is never negative here.
  std::vector<double> lrs;
  for (double base : base_lrs_)
    lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_)));
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, const std::vector<int64_t>& milestones, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  for (int64_t m : milestones) ++milestones_[m];
  initial_step();
}

std::vector<double> MultiStepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  auto it = milestones_.find(last_epoch_);
  if (it == milestones_.end()) return lrs;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(it->second));
  return lrs;
}

std::vector<double> MultiStepLR::closed_form_lrs() {
  int64_t passed = 0;  // bisect_right over the sorted milestones, repeats included
  for (const auto& [epoch, count] : milestones_)
    if (epoch <= last_epoch_) passed += count;
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(passed)));
  return lrs;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> ExponentialLR::closed_form_lrs() {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_)));
  return lrs;
}

// ---- LinearLR --------------------------------------------------------------------------------

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  EMBER_CHECK(start_factor <= 1.0 && start_factor >= 0,
              "Starting multiplicative factor expected to be between 0 and 1.");
  EMBER_CHECK(end_factor <= 1.0 && end_factor >= 0,
              "Ending multiplicative factor expected to be between 0 and 1.");
  initial_step();
}

std::vector<double> LinearLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  // The ratio of consecutive factors, so the lr follows the line from wherever it is.
  const double delta = end_factor_ - start_factor_;
  const double ratio = 1.0 + delta / (static_cast<double>(total_iters_) * start_factor_ +
                                      static_cast<double>(last_epoch_ - 1) * delta);
  for (double& lr : lrs) lr *= ratio;
  return lrs;
}

std::vector<double> LinearLR::closed_form_lrs() {
  const double done = static_cast<double>(std::min(total_iters_, last_epoch_));
  std::vector<double> lrs;
  for (double base : base_lrs_)
    lrs.push_back(base *
                  (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_)));
  return lrs;
}

// ---- CosineAnnealingLR -----------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK(T_max > 0, "CosineAnnealingLR expects a positive T_max, but got ", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  const double T = static_cast<double>(T_max_);
  const double e = static_cast<double>(last_epoch_);
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(e * kPi / T)) / 2;
    return lrs;
  }
  if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0) {
    // At the bottom of the curve the ratio form divides by zero; step up by a fixed amount.
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(kPi / T)) / 2;
    return lrs;
  }
  for (double& lr : lrs)
    lr = (1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lr - eta_min_) + eta_min_;
  return lrs;
}

std::vector<double> CosineAnnealingLR::closed_form_lrs() {
  std::vector<double> lrs;
  const double e = static_cast<double>(last_epoch_);
  for (double base : base_lrs_)
    lrs.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(kPi * e / static_cast<double>(T_max_))) / 2);
  return lrs;
}

// ---- CosineAnnealingWarmRestarts -------------------------------------------------------------

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult,
                                                         double eta_min)
    : LRScheduler(optimizer), T_0_(T_0), T_i_(T_0), T_mult_(T_mult), eta_min_(eta_min), T_cur_(-1) {
  EMBER_CHECK(T_0 > 0, "Expected positive integer T_0, but got ", T_0);
  EMBER_CHECK(T_mult >= 1, "Expected integer T_mult >= 1, but got ", T_mult);
  initial_step();
}

std::vector<double> CosineAnnealingWarmRestarts::get_lrs() {
  std::vector<double> lrs;
  const double T_i = static_cast<double>(T_i_);
  for (double base : base_lrs_)
    lrs.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(kPi * T_cur_ / T_i)) / 2);
  return lrs;
}

// PyTorch's step overrides the base and leaves _step_count alone.
void CosineAnnealingWarmRestarts::step() {
  if (last_epoch_ < 0) {
    apply(0);
    return;
  }
  T_cur_ = T_cur_ + 1;
  if (T_cur_ >= static_cast<double>(T_i_)) {
    T_cur_ = T_cur_ - static_cast<double>(T_i_);
    T_i_ = T_i_ * T_mult_;
  }
  last_epoch_ = last_epoch_ + 1;
  set_optimizer_lrs(get_lrs());
}

void CosineAnnealingWarmRestarts::step(double epoch) { apply(epoch); }

void CosineAnnealingWarmRestarts::apply(double epoch) {
  EMBER_CHECK(epoch >= 0, "Expected non-negative epoch, but got ", epoch);
  const double T_0 = static_cast<double>(T_0_);
  if (epoch >= T_0) {
    if (T_mult_ == 1) {
      T_cur_ = std::fmod(epoch, T_0);
    } else {
      // n = the number of finished periods: T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch.
      const double m = static_cast<double>(T_mult_);
      const auto n = static_cast<int64_t>(std::log(epoch / T_0 * (m - 1) + 1) / std::log(m));
      const double mn = std::pow(m, static_cast<double>(n));
      T_cur_ = epoch - T_0 * (mn - 1) / (m - 1);
      T_i_ = T_0_ * static_cast<int64_t>(mn);
    }
  } else {
    T_i_ = T_0_;
    T_cur_ = epoch;
  }
  last_epoch_ = static_cast<int64_t>(std::floor(epoch));
  set_optimizer_lrs(get_lrs());
}

OrderedDict<std::string, Tensor> CosineAnnealingWarmRestarts::state_dict() const {
  auto d = LRScheduler::state_dict();
  d.insert("T_cur", detail::dict_scalar(T_cur_));
  d.insert("T_i", detail::dict_scalar(static_cast<double>(T_i_), true));
  return d;
}

void CosineAnnealingWarmRestarts::load_state_dict(const OrderedDict<std::string, Tensor>& d) {
  const double T_cur = detail::dict_value(d, "T_cur", kWhat);
  const int64_t T_i = detail::dict_int(d, "T_i", kWhat);
  LRScheduler::load_state_dict(d);
  T_cur_ = T_cur;
  T_i_ = T_i;
}

}  // namespace ember::optim
