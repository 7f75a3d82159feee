// operator<< for Tensor, in PyTorch's format (torch/_tensor_str.py): precision 4, fixed or
// scientific notation chosen from the value range, "1." for integral floats, summaries with
// "..." above 1000 elements, lines wrapped at 80 columns, and the dtype/grad suffixes.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/core/shape.h"
#include "ember/core/tensor.h"

namespace ember {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "nan";  // printf writes "-nan" for a NaN with its sign bit set
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Values of a CPU tensor as doubles (floats and bools) or int64 (integers), row-major.
struct Values {
  std::vector<double> f;
  std::vector<int64_t> i;
  bool floating, boolean;
};

Values read_values(const Tensor& t) {
  Values v{{}, {}, t.is_floating_point(), t.dtype() == kBool};
  Tensor c = t.contiguous();
  visit_dtype(t.dtype(), [&]<typename T>() {
    const T* p = static_cast<const T*>(c.data_ptr());
    for (int64_t k = 0; k < c.numel(); ++k) {
      if constexpr (is_float_v<T>) v.f.push_back(static_cast<double>(static_cast<opmath_t<T>>(p[k])));
      else v.i.push_back(static_cast<int64_t>(p[k]));
    }
  });
  return v;
}

class Formatter {
 public:
  Formatter(const Values& all, const std::vector<int64_t>& shown) : floating_(all.floating), boolean_(all.boolean) {
    if (!floating_) {
      for (int64_t k : shown) width_ = std::max(width_, int(int_str(all.i[k]).size()));
      return;
    }
    std::vector<double> nz;
    for (int64_t k : shown)
      if (std::isfinite(all.f[k]) && all.f[k] != 0) nz.push_back(all.f[k]);
    if (nz.empty()) return;
    double mn = INFINITY, mx = 0;
    for (double x : nz) {
      mn = std::min(mn, std::fabs(x));
      mx = std::max(mx, std::fabs(x));
      if (x != std::ceil(x)) int_mode_ = false;
    }
    if (int_mode_) {
      sci_ = mx / mn > 1000.0 || mx > 1.0e8;
      for (double x : nz) width_ = std::max(width_, int(sci_ ? fmt("%.4e", x).size() : fmt("%.0f", x).size() + 1));
    } else {
      sci_ = mx / mn > 1000.0 || mx > 1.0e8 || mn < 1.0e-4;
      for (double x : nz) width_ = std::max(width_, int(fmt(sci_ ? "%.4e" : "%.4f", x).size()));
    }
  }
  int width() const { return width_; }
  std::string format_float(double x) const {
    std::string r;
    if (sci_) r = fmt("%.4e", x);
    else if (int_mode_) r = fmt("%.0f", x) + (std::isfinite(x) ? "." : "");
    else r = fmt("%.4f", x);
    return pad(r);
  }
  std::string format_int(int64_t x) const { return pad(int_str(x)); }
  bool floating() const { return floating_; }

 private:
  std::string int_str(int64_t x) const { return boolean_ ? (x ? "True" : "False") : std::to_string(x); }
  std::string pad(const std::string& r) const {
    return r.size() < size_t(width_) ? std::string(width_ - r.size(), ' ') + r : r;
  }
  bool floating_, boolean_;
  bool int_mode_ = true, sci_ = false;
  int width_ = 1;
};

struct Printer {
  const Values& v;
  IntArrayRef sizes;
  DimVector strides;
  bool summarize;

  /// Indices along dim d that are shown (all, or the edge items when summarizing).
  std::vector<int64_t> shown(int64_t d) const {
    std::vector<int64_t> idx;
    int64_t n = sizes[d];
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  void collect(int64_t d, int64_t base, std::vector<int64_t>& out) const {
    if (d == static_cast<int64_t>(sizes.size())) { out.push_back(base); return; }
    for (int64_t i : shown(d)) collect(d + 1, base + i * strides[d], out);
  }

  std::string element(const Formatter& f, int64_t k) const {
    return f.floating() ? f.format_float(v.f[k]) : f.format_int(v.i[k]);
  }

  std::string vec(const Formatter& f, int64_t d, int64_t base, int indent) const {
    int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / (f.width() + 2));
    std::vector<std::string> data;
    int64_t n = sizes[d];
    bool cut = summarize && n > 2 * kEdgeItems;
    for (int64_t i : shown(d)) {
      if (cut && i == n - kEdgeItems) data.push_back(" ...");
      data.push_back(element(f, base + i * strides[d]));
    }
    std::string out = "[";
    for (size_t i = 0; i < data.size(); ++i) {
      if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += data[i];
    }
    return out + "]";
  }

  std::string str(const Formatter& f, int64_t d, int64_t base, int indent) const {
    int64_t nd = static_cast<int64_t>(sizes.size());
    if (nd - d == 1) return vec(f, d, base, indent);
    std::string sep = "," + std::string(nd - d - 1, '\n') + std::string(indent + 1, ' ');
    std::string out = "[";
    int64_t n = sizes[d];
    bool cut = summarize && n > 2 * kEdgeItems;
    bool first = true;
    for (int64_t i : shown(d)) {
      if (!first) out += sep;
      if (cut && i == n - kEdgeItems) out += "..." + sep;
      out += str(f, d + 1, base + i * strides[d], indent + 1);
      first = false;
    }
    return out + "]";
  }
};

std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, int indent) {
  std::string out = body;
  size_t nl = body.rfind('\n');
  int64_t last = static_cast<int64_t>(body.size()) - (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  for (const std::string& s : suffixes) {
    if (last + static_cast<int64_t>(s.size()) + 2 > kLineWidth) {
      out += ",\n" + std::string(indent, ' ') + s;
      last = indent + static_cast<int64_t>(s.size());
    } else {
      out += ", " + s;
      last += static_cast<int64_t>(s.size()) + 2;
    }
  }
  return out + ")";
}

}  // namespace

std::string Tensor::toString() const {
  std::ostringstream s;
  s << *this;
  return s.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  if (t.is_cuda()) suffixes.push_back("device='" + t.device().str() + "'");
  // int64 and bool are implied by the printed values, except in an empty tensor.
  bool default_dtype = t.dtype() == get_default_dtype() ||
                       (t.numel() > 0 && (t.dtype() == kLong || t.dtype() == kBool));
  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) {
      std::string sz = "size=(";
      for (int64_t d = 0; d < t.dim(); ++d) sz += (d ? ", " : "") + std::to_string(t.size(d));
      suffixes.push_back(sz + ")");
    }
    body = "[]";
  } else {
    Tensor cpu_t;
    {
      AutoGradMode off(false);
      cpu_t = t.is_cpu() ? t.detach() : t.detach().to(Device(kCPU));
    }
    Values v = read_values(cpu_t);
    Printer p{v, t.sizes(), contiguous_strides(t.sizes()), t.numel() > kThreshold};
    std::vector<int64_t> shown;
    p.collect(0, 0, shown);
    Formatter f(v, shown);
    body = t.dim() == 0 ? (f.floating() ? f.format_float(v.f[0]) : f.format_int(v.i[0])) : p.str(f, 0, 0, indent);
  }
  if (!default_dtype) suffixes.push_back(std::string("dtype=") + dtype_name(t.dtype()));
  if (t.grad_fn()) suffixes.push_back("grad_fn=<" + t.grad_fn()->name() + ">");
  else if (t.requires_grad()) suffixes.push_back("requires_grad=True");
  return os << add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace ember
