// Small definitions behind error.h, dtype.h, device.h, scalar.h and tensor_options.h.
#include <atomic>
#include <limits>

#include "ember/core/device.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor_options.h"

namespace ember {

namespace detail {
void throw_error(const std::string& msg) { throw Error(msg); }
}  // namespace detail

size_t element_size(ScalarType t) {
  switch (t) {
    case kBool: case kByte: case kChar: return 1;
    case kShort: case kHalf: case kBFloat16: return 2;
    case kInt: case kFloat: return 4;
    case kLong: case kDouble: return 8;
    default: detail::throw_error("element_size: undefined dtype");
  }
}

const char* dtype_name(ScalarType t) {
  switch (t) {
    case kBool: return "torch.bool";
    case kByte: return "torch.uint8";
    case kChar: return "torch.int8";
    case kShort: return "torch.int16";
    case kInt: return "torch.int32";
    case kLong: return "torch.int64";
    case kHalf: return "torch.float16";
    case kBFloat16: return "torch.bfloat16";
    case kFloat: return "torch.float32";
    case kDouble: return "torch.float64";
    default: return "undefined";
  }
}

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case kBool: return "Bool";
    case kByte: return "Byte";
    case kChar: return "Char";
    case kShort: return "Short";
    case kInt: return "Int";
    case kLong: return "Long";
    case kHalf: return "Half";
    case kBFloat16: return "BFloat16";
    case kFloat: return "Float";
    case kDouble: return "Double";
    default: return "Undefined";
  }
}

const char* type_meta_name(ScalarType t) {
  switch (t) {
    case kBool: return "bool";
    case kByte: return "unsigned char";
    case kChar: return "signed char";
    case kShort: return "short int";
    case kInt: return "int";
    case kLong: return "long int";
    case kHalf: return "c10::Half";
    case kBFloat16: return "c10::BFloat16";
    case kFloat: return "float";
    case kDouble: return "double";
    default: return "undefined";
  }
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << scalar_type_name(t); }

// Accepts what PyTorch's parser accepts: ([a-zA-Z_]+)(:([1-9][0-9]*|0))?, then the type.
Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  EMBER_CHECK(!spec.empty(), "Device string must not be empty");
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::string idx = colon == std::string::npos ? "" : spec.substr(colon + 1);
  bool valid = !kind.empty() && kind.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                                    std::string::npos;
  if (colon != std::string::npos)
    valid = valid && !idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos &&
            (idx == "0" || idx[0] != '0');
  EMBER_CHECK(valid, "Invalid device string: '", spec, "'");
  if (!idx.empty()) {
    // DeviceIndex is 8 bits, as in libtorch.
    EMBER_CHECK(idx.size() <= 3 && std::stoi(idx) <= std::numeric_limits<int8_t>::max(),
                "Could not parse device index '", idx, "' in device string '", spec, "'");
    index_ = static_cast<int8_t>(std::stoi(idx));
  }
  if (kind == "cpu") type_ = kCPU;
  else if (kind == "cuda") type_ = kCUDA;
  else detail::throw_error("Expected one of cpu, cuda device type at start of device string: " + spec);
}

std::string Device::str() const {
  std::string s = type_ == kCPU ? "cpu" : "cuda";
  if (index_ >= 0) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << (t == kCPU ? "cpu" : "cuda"); }

Scalar Scalar::operator-() const {
  if (kind_ == Kind::Double) return Scalar(-d_);
  return Scalar(-i_);
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.isBoolean()) return os << (s.toBool() ? "true" : "false");
  if (s.isIntegral(false)) return os << s.toLong();
  return os << s.toDouble();
}

namespace {
std::atomic<ScalarType> g_default_dtype{kFloat};
}
ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(ScalarType t) {
  EMBER_CHECK(is_floating_point(t), "only floating-point types are supported as the default type");
  g_default_dtype.store(t);
}

}  // namespace ember
