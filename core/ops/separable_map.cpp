// Kernels and the Op of the separable linear maps (Note [Separable maps] in separable_map.h).
#include "ember/core/ops/separable_map.h"

#include <algorithm>
#include <cstring>

#include "ember/core/dtype.h"
#include "ember/core/tensor_iter.h"
#include "ember/cuda/separable_map.h"

namespace ember::resample {

bool AxisMap::is_gather() const {
  for (int64_t o = 0; o < out_size(); ++o)
    if (start[o + 1] - start[o] != 1 || weight[start[o]] != 1.0 || divisor[o] != 1.0) return false;
  return true;
}

AxisMapPtr identity_axis(int64_t n) {
  auto m = std::make_shared<AxisMap>(n);
  for (int64_t i = 0; i < n; ++i) {
    m->add(i);
    m->close();
  }
  return m;
}

namespace {

/// Per-axis weights and divisors in the kernel's compute type, converted once per call.
template <class M>
struct Taps {
  const int64_t* start;
  const int64_t* index;
  std::vector<M> weight, divisor;
  explicit Taps(const AxisMap& a) : start(a.start.data()), index(a.index.data()) {
    for (double w : a.weight) weight.push_back(static_cast<M>(w));
    for (double d : a.divisor) divisor.push_back(static_cast<M>(d));
  }
};

int64_t mean_taps(const AxisMap& a) { return a.out_size() ? (int64_t)a.index.size() / a.out_size() + 1 : 1; }

/// Pure gathers (padding, nearest): out[p, oh, ow] = x[p, ih(oh), iw(ow)], any dtype.
template <class T>
void gather_planes(const T* x, T* y, int64_t planes, const AxisMap& h, const AxisMap& w) {
  const int64_t H = h.in_size, W = w.in_size, Ho = h.out_size(), Wo = w.out_size();
  const int64_t* ih = h.index.data();
  const int64_t* iw = w.index.data();
  parallel_for(planes, plane_grain(Ho * Wo), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xp = x + p * H * W;
      T* yp = y + p * Ho * Wo;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const T* row = xp + ih[oh] * W;
        T* out = yp + oh * Wo;
        for (int64_t ow = 0; ow < Wo; ++ow) out[ow] = row[iw[ow]];
      }
    }
  });
}

/// out[p, oh, ow] = sum over taps of wh ww x[p, ih, iw], divided by dh dw.
template <class T>
void map_planes(const T* x, T* y, int64_t planes, const AxisMap& h, const AxisMap& w) {
  using M = opmath_t<T>;
  const int64_t H = h.in_size, W = w.in_size, Ho = h.out_size(), Wo = w.out_size();
  Taps<M> th(h), tw(w);
  parallel_for(planes, plane_grain(Ho * Wo * mean_taps(h) * mean_taps(w)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xp = x + p * H * W;
      T* yp = y + p * Ho * Wo;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        for (int64_t ow = 0; ow < Wo; ++ow) {
          M acc = M(0);
          for (int64_t a = th.start[oh]; a < th.start[oh + 1]; ++a) {
            const T* row = xp + th.index[a] * W;
            M inner = M(0);
            for (int64_t c = tw.start[ow]; c < tw.start[ow + 1]; ++c)
              inner += tw.weight[c] * static_cast<M>(row[tw.index[c]]);
            acc += th.weight[a] * inner;
          }
          yp[oh * Wo + ow] = static_cast<T>(acc / (th.divisor[oh] * tw.divisor[ow]));
        }
      }
    }
  });
}

/// The adjoint: gin[p, ih, iw] += wh ww g[p, oh, ow] / (dh dw), accumulated per plane in M.
template <class T>
void adjoint_planes(const T* g, T* gin, int64_t planes, const AxisMap& h, const AxisMap& w) {
  using M = opmath_t<T>;
  const int64_t H = h.in_size, W = w.in_size, Ho = h.out_size(), Wo = w.out_size();
  Taps<M> th(h), tw(w);
  parallel_for(planes, plane_grain(Ho * Wo * mean_taps(h) * mean_taps(w)), [&](int64_t b, int64_t e) {
    std::vector<M> acc(static_cast<size_t>(H * W));
    for (int64_t p = b; p < e; ++p) {
      std::fill(acc.begin(), acc.end(), M(0));
      const T* gp = g + p * Ho * Wo;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        for (int64_t ow = 0; ow < Wo; ++ow) {
          M v = static_cast<M>(gp[oh * Wo + ow]) / (th.divisor[oh] * tw.divisor[ow]);
          for (int64_t a = th.start[oh]; a < th.start[oh + 1]; ++a) {
            M* row = acc.data() + th.index[a] * W;
            M vh = th.weight[a] * v;
            for (int64_t c = tw.start[ow]; c < tw.start[ow + 1]; ++c) row[tw.index[c]] += tw.weight[c] * vh;
          }
        }
      }
      T* out = gin + p * H * W;
      for (int64_t i = 0; i < H * W; ++i) out[i] = static_cast<T>(acc[i]);
    }
  });
}

class SeparableMap final : public Op {
 public:
  SeparableMap(AxisMapPtr h, AxisMapPtr w, MapNames names, bool adjoint)
      : one_d_(h == nullptr), h_(one_d_ ? identity_axis(1) : std::move(h)), w_(std::move(w)),
        names_(std::move(names)), adjoint_(adjoint), name_(adjoint ? names_.op + "_backward" : names_.op) {}

  const char* name() const override { return name_.c_str(); }
  std::string node_name() const override {
    return names_.node_stem + (adjoint_ ? "BackwardBackward0" : "Backward0");
  }
  Save saves() const override { return Save::kNothing; }

  void cpu(const TensorList& in, TensorList& out) const override {
    Tensor x = in[0].contiguous();
    const int64_t planes = prod_planes(x, one_d_ ? 1 : 2);
    const bool gather = !adjoint_ && h_->is_gather() && w_->is_gather();
    auto run = [&]<typename T>() {
      const T* src = x.data_ptr<T>();
      T* dst = out[0].data_ptr<T>();
      if (gather) gather_planes<T>(src, dst, planes, *h_, *w_);
      else if constexpr (!std::is_same_v<T, bool>) {
        if (adjoint_) adjoint_planes<T>(src, dst, planes, *h_, *w_);
        else map_planes<T>(src, dst, planes, *h_, *w_);
      }
    };
    // Gathers copy any dtype; weighted sums need arithmetic (floats only for fractional weights).
    if (gather) visit_dtype(x.dtype(), run);
    else if (names_.float_only || x.dtype() == kBool) visit_float_dtype(x.dtype(), name_.c_str(), run);
    else visit_dtype(x.dtype(), run);
  }

  // The same choice of kernel and the same dtype errors as cpu().
  void cuda(const TensorList& in, TensorList& out) const override {
    Tensor x = in[0].contiguous();
    if (!adjoint_ && h_->is_gather() && w_->is_gather()) {
      cuda::separable_gather(x, out[0], *h_, *w_);
      return;
    }
    if (names_.float_only || x.dtype() == kBool) visit_float_dtype(x.dtype(), name_.c_str(), []<typename T>() {});
    if (adjoint_) cuda::separable_map_adjoint(x, out[0], *h_, *w_);
    else cuda::separable_map(x, out[0], *h_, *w_);
  }

  // Note [Separable maps]: the gradient of a linear map is its adjoint applied to grad.
  TensorList backward(const SavedTensors&, const TensorList& grads) const override {
    return {apply_map(grads[0], one_d_ ? nullptr : h_, w_, names_, !adjoint_)};
  }

 private:
  /// The number of planes: the product of all but the last `mapped` dims.
  static int64_t prod_planes(const Tensor& x, int64_t mapped) {
    int64_t n = 1;
    for (int64_t d = 0; d < x.dim() - mapped; ++d) n *= x.size(d);
    return n;
  }
  bool one_d_;  // maps the last dim only (h is the identity of a height-1 plane)
  AxisMapPtr h_, w_;
  MapNames names_;
  bool adjoint_;
  std::string name_;
};

}  // namespace

Tensor apply_map(const Tensor& x, AxisMapPtr h, AxisMapPtr w, const MapNames& names, bool adjoint) {
  DimVector sizes(x.sizes());
  const size_t n = sizes.size();
  if (h) sizes[n - 2] = adjoint ? h->in_size : h->out_size();
  sizes[n - 1] = adjoint ? w->in_size : w->out_size();
  ScalarType dt = x.dtype();
  return run_op(SeparableMap(std::move(h), std::move(w), names, adjoint), {x}, OutSpec{sizes, dt});
}

}  // namespace ember::resample
