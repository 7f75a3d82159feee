// IValue: a small tagged value (none, bool, int, double, Tensor, string, int list), libtorch's
// c10::IValue reduced to what ember stores in one: a custom autograd Function's
// ctx->saved_data and the numbers user code writes to an archive (core/archive.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"

namespace ember {

/// A small tagged value (libtorch's IValue, reduced to what it holds).
class IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}                                    // NOLINT
  IValue(int v) : v_(static_cast<int64_t>(v)) {}               // NOLINT
  IValue(int64_t v) : v_(v) {}                                 // NOLINT
  IValue(double v) : v_(v) {}                                  // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}                       // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}                  // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}                // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}         // NOLINT
  bool isNone() const { return v_.index() == 0; }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(v_); }
  bool toBool() const { return get<bool>("Bool"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  double toDouble() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
    return get<double>("Double");
  }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("IntList"); }

 private:
  template <class T>
  const T& get(const char* what) const {
    auto* p = std::get_if<T>(&v_);
    EMBER_CHECK(p, "Expected ", what, " but got another type in IValue");
    return *p;
  }
  std::variant<std::monostate, bool, int64_t, double, Tensor, std::string, std::vector<int64_t>> v_;
};

}  // namespace ember
