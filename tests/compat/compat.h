// compat.h: the one header of the compat programs. The same source builds against ember
// (default: namespace torch = ember) and against libtorch (-DEMBER_COMPAT_LIBTORCH), and prints
// results in a neutral text that compare_output checks number by number against libtorch's.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#ifdef EMBER_COMPAT_LIBTORCH
#include <torch/torch.h>
namespace compat {
inline const char* type_name(torch::ScalarType t) { return c10::toString(t); }
}  // namespace compat
#else
#include <ember/ember.h>
namespace torch = ember;
namespace compat {
inline const char* type_name(torch::ScalarType t) { return ember::scalar_type_name(t); }
}  // namespace compat
#endif

namespace compat {

// double constants: torch::tensor({...}) wants every element of one C++ type, and NAN and
// INFINITY are floats.
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// One line: name, sizes, dtype, then the values (row-major, as doubles).
///   name [2,3] Float : 0 1 2 3 4 5
inline void show(const char* name, const torch::Tensor& t) {
  if (!t.defined()) {
    std::printf("%s undefined\n", name);
    return;
  }
  std::printf("%s [", name);
  for (int64_t i = 0; i < t.dim(); ++i) std::printf(i ? ",%lld" : "%lld", static_cast<long long>(t.size(i)));
  std::printf("] %s :", type_name(t.scalar_type()));
  torch::NoGradGuard no_grad;
  torch::Tensor d = t.detach().contiguous().to(torch::kDouble);
  const double* p = d.data_ptr<double>();
  for (int64_t i = 0; i < d.numel(); ++i) std::printf(" %.6g", p[i]);
  std::printf("\n");
}

inline void show(const char* name, double v) { std::printf("%s = %.6g\n", name, v); }
inline void show_int(const char* name, int64_t v) {
  std::printf("%s = %lld\n", name, static_cast<long long>(v));
}
inline void show_flag(const char* name, bool v) { std::printf("%s = %s\n", name, v ? "true" : "false"); }
inline void show_text(const char* name, const std::string& s) { std::printf("%s = %s\n", name, s.c_str()); }

/// Sizes or strides: name = [2,3].
template <class Ints>
void show_ints(const char* name, const Ints& v) {
  std::printf("%s = [", name);
  bool first = true;
  for (auto x : v) {
    std::printf(first ? "%lld" : ",%lld", static_cast<long long>(x));
    first = false;
  }
  std::printf("]\n");
}

/// The message without what libtorch appends: it adds "\nException raised from ..." and a
/// stack trace after the text PyTorch users see, so only the first line is kept.
inline std::string first_line(const char* what) {
  std::string s(what);
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  size_t raised = s.find("Exception raised from");
  if (raised != std::string::npos) s.resize(raised);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

/// Runs f and prints the first line of the error it raises (or that it raised none).
template <class F>
void expect_error(const char* name, F&& f) {
  try {
    f();
    std::printf("%s: no error\n", name);
  } catch (const std::exception& e) {
    std::printf("%s error: %s\n", name, first_line(e.what()).c_str());
  }
}

}  // namespace compat
