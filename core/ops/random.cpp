// Random tensors: rand/randn/randint/randperm/bernoulli/normal and the in-place samplers.
// Element k of a draw uses Philox block (offset + k) of its device's generator, so values are
// the same whatever the thread count; the CUDA kernels (cuda/random.cu) share the maps from
// bits to values (core/philox.h), so the same generator state gives the same numbers there.
// bernoulli_ with a scalar p samples through the vectorised core/cpu/random.cpp.
#include <algorithm>
#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/generator.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/random.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"
#include "ember/core/type_promotion.h"
#include "ember/core/cpu/random.h"
#include "ember/core/ops/random_internal.h"
#include "ember/cuda/random.h"

namespace ember {
namespace {

/// Reserves `blocks` Philox blocks from the default generator of `device`; returns (key, first counter).
/// Callers copy the pair into named locals rather than a structured binding: the sampling
/// lambdas capture them, which Clang 14 does not allow for structured bindings.
std::pair<uint64_t, uint64_t> reserve(Device device, uint64_t blocks) {
  Generator& g = default_generator(device);
  std::lock_guard<std::mutex> lock(g.mutex());
  return {g.current_seed(), g.reserve(blocks)};
}

/// Uniform in [0, 1) on the grid of T's mantissa (k / 2^digits, as PyTorch's
/// uniform_real_distribution): a 53-bit double rounded to float could land on 1.0.
template <class T>
double uniform01_for(uint64_t key, uint64_t counter) {
  return philox::uniform01_grid(key, counter, philox::mantissa_digits<T>());
}

/// Fills t with sample k at flat index k: on the CPU gen(k) in parallel, on CUDA through
/// on_cuda(dense), which fills a contiguous CUDA tensor with the same values.
template <class Gen, class OnCuda>
void fill_with(Tensor& t, const Gen& gen, const OnCuda& on_cuda) {
  check_no_internal_overlap(t.sizes(), t.strides());
  // With history recorded, the samples arrive through a recorded copy_, which cuts the old
  // history (the new values do not depend on it), as PyTorch's samplers do.
  bool record = detail::should_record({t});
  Tensor out = t.is_contiguous() && !record ? t : empty_like(t);
  if (out.is_cuda()) {
    on_cuda(out);
  } else {
    visit_dtype(out.dtype(), [&]<typename T>() {
      T* p = static_cast<T*>(out.data_ptr());
      parallel_for(out.numel(), 4096, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) p[k] = static_cast<T>(gen(k));
      });
    });
  }
  if (record) t.copy_(out);
  else if (!out.is_same(t)) detail::copy_into(t, out);  // bumps the version itself
  else t.unsafeGetTensorImpl()->storage()->bump_version();
}

/// The fast form of bernoulli_(p) followed by mul_(on): a dense CPU float or double tensor
/// with no autograd history to record and 0 < p < 1. Returns false (nothing done) otherwise.
bool try_fill_bernoulli(Tensor& t, double p, double on) {
  if (t.is_cuda() || !t.is_contiguous() || !(p > 0 && p < 1) || detail::should_record({t})) return false;
  if (t.dtype() != kFloat && t.dtype() != kDouble) return false;
  const std::pair<uint64_t, uint64_t> reserved = reserve(t.device(), static_cast<uint64_t>(t.numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  if (t.dtype() == kFloat) cpu::fill_bernoulli<float>(t.data_ptr<float>(), t.numel(), key, start, p, static_cast<float>(on));
  else cpu::fill_bernoulli<double>(t.data_ptr<double>(), t.numel(), key, start, p, on);
  t.unsafeGetTensorImpl()->storage()->bump_version();
  return true;
}

void check_float(const Tensor& t, const char* op) {
  EMBER_CHECK(t.is_floating_point(), "\"", op, "\" not implemented for '", scalar_type_name(t.dtype()), "'");
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to) {
  check_float(*this, "check_uniform_bounds");
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  detail::check_inplace(*this, "uniform_");
  const std::pair<uint64_t, uint64_t> reserved = reserve(device(), static_cast<uint64_t>(numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  double width = to - from;
  auto on_cuda = [&](const Tensor& out) {
    cuda::sample(cuda::Distribution::kUniform, out, {key, start}, from, to);
  };
  visit_float_dtype(dtype(), "check_uniform_bounds", [&]<typename T>() {
    fill_with(*this, [=](int64_t k) { return philox::mul_add(width, uniform01_for<T>(key, start + k), from); },
              on_cuda);
  });
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  check_float(*this, is_cuda() ? "normal_kernel_cuda" : "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  detail::check_inplace(*this, "normal_");
  const std::pair<uint64_t, uint64_t> reserved = reserve(device(), static_cast<uint64_t>(numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  fill_with(
      *this, [=](int64_t k) { return philox::mul_add(std, philox::normal01(key, start + k), mean); },
      [&](const Tensor& out) { cuda::sample(cuda::Distribution::kNormal, out, {key, start}, mean, std); });
  return *this;
}

Tensor& Tensor::bernoulli_(double p) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  detail::check_inplace(*this, "bernoulli_");
  if (try_fill_bernoulli(*this, p, 1.0)) return *this;
  const std::pair<uint64_t, uint64_t> reserved = reserve(device(), static_cast<uint64_t>(numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  fill_with(
      *this, [=](int64_t k) { return philox::uniform01(key, start + k) < p ? 1.0 : 0.0; },
      [&](const Tensor& out) { cuda::sample(cuda::Distribution::kBernoulli, out, {key, start}, p); });
  return *this;
}

Tensor& Tensor::random_(int64_t from, int64_t to) {
  EMBER_CHECK(from < to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
  detail::check_inplace(*this, "random_");
  const std::pair<uint64_t, uint64_t> reserved = reserve(device(), static_cast<uint64_t>(numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  uint64_t range = static_cast<uint64_t>(to - from);
  fill_with(
      *this,
      [=](int64_t k) { return static_cast<double>(from + static_cast<int64_t>(philox::bits64(key, start + k) % range)); },
      [&](const Tensor& out) { cuda::random_int(out, {key, start}, from, range); });
  return *this;
}

Tensor& Tensor::random_(int64_t to) { return random_(0, to); }

Tensor rand(IntArrayRef size, TensorOptions options) {
  Tensor t = empty(size, options.requires_grad(false));
  t.uniform_(0, 1);
  return options.requires_grad() ? t.requires_grad_(true) : t;
}

Tensor randn(IntArrayRef size, TensorOptions options) {
  Tensor t = empty(size, options.requires_grad(false));
  t.normal_(0, 1);
  return options.requires_grad() ? t.requires_grad_(true) : t;
}

Tensor normal(double mean, double std, IntArrayRef size, TensorOptions options) {
  Tensor t = empty(size, options.requires_grad(false));
  t.normal_(mean, std);
  return options.requires_grad() ? t.requires_grad_(true) : t;
}

Tensor randint(int64_t high, IntArrayRef size, TensorOptions options) { return randint(0, high, size, options); }

Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options) {
  if (!options.has_dtype()) options = options.dtype(kLong);  // torch.randint gives int64
  Tensor t = empty(size, options);
  t.random_(low, high);
  return t;
}

Tensor randperm(int64_t n, TensorOptions options) {
  EMBER_CHECK(n >= 0, "Trying to create tensor with negative dimension ", n, ": [", n, "]");
  // Fisher-Yates with one Philox block per swap, on the host for either device: a CUDA
  // randperm draws from its device's generator and gives the CPU's permutation for the same
  // state (at the price of an O(n) host loop and a copy).
  const std::pair<uint64_t, uint64_t> reserved = reserve(options.device(), static_cast<uint64_t>(n));
  const uint64_t key = reserved.first, start = reserved.second;
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t r = philox::bits64(key, start + static_cast<uint64_t>(i));
    std::swap(perm[i], perm[static_cast<int64_t>(r % static_cast<uint64_t>(i + 1))]);
  }
  Tensor t = empty({n}, kLong);
  std::copy(perm.begin(), perm.end(), t.data_ptr<int64_t>());
  return t.to(options.device(), options.has_dtype() ? options.dtype() : kLong);
}

Tensor bernoulli(const Tensor& p) {
  EMBER_CHECK(p.is_floating_point(), "\"bernoulli_tensor_", p.is_cuda() ? "cuda" : "cpu", "_p_\" not implemented for '",
              scalar_type_name(p.dtype()), "'");
  if (p.is_cuda()) {
    Tensor out = empty_like(p);
    const std::pair<uint64_t, uint64_t> reserved = reserve(p.device(), static_cast<uint64_t>(p.numel()));
    const uint64_t key = reserved.first, start = reserved.second;
    cuda::bernoulli_tensor(out, p.detach().contiguous(), {key, start});
    return out;
  }
  Tensor probs = p.detach().to(kDouble).contiguous();
  const double* q = probs.data_ptr<double>();
  for (int64_t k = 0; k < probs.numel(); ++k)
    EMBER_CHECK(q[k] >= 0 && q[k] <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  Tensor out = empty_like(p);
  const std::pair<uint64_t, uint64_t> reserved = reserve(p.device(), static_cast<uint64_t>(p.numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  fill_with(out, [=](int64_t k) { return philox::uniform01(key, start + k) < q[k] ? 1.0 : 0.0; },
            [](const Tensor&) {});
  return out;
}

Tensor bernoulli(const Tensor& self, double p) {
  Tensor out = empty_like(self);
  out.bernoulli_(p);
  return out;
}

Tensor Tensor::bernoulli() const { return ember::bernoulli(*this); }

namespace detail {

Tensor& bernoulli_scaled_(Tensor& t, double p, double on) {
  if (try_fill_bernoulli(t, p, on)) return t;
  t.bernoulli_(p);
  return t.mul_(on);
}

Tensor& bernoulli_scalar_reference_(Tensor& t, double p) {
  EMBER_CHECK(!t.is_cuda() && t.is_contiguous(), "internal error: bernoulli_scalar_reference_ needs a dense CPU tensor");
  const std::pair<uint64_t, uint64_t> reserved = reserve(t.device(), static_cast<uint64_t>(t.numel()));
  const uint64_t key = reserved.first, start = reserved.second;
  visit_dtype(t.dtype(), [&]<typename T>() {
    T* q = static_cast<T*>(t.data_ptr());
    for (int64_t k = 0; k < t.numel(); ++k)
      q[k] = static_cast<T>(philox::uniform01(key, start + static_cast<uint64_t>(k)) < p ? 1.0 : 0.0);
  });
  return t;
}

}  // namespace detail

Tensor rand_like(const Tensor& t, TensorOptions options) {
  Tensor r = empty_like(t, options.requires_grad(false));
  r.uniform_(0, 1);
  return options.requires_grad() ? r.requires_grad_(true) : r;
}

Tensor randn_like(const Tensor& t, TensorOptions options) {
  Tensor r = empty_like(t, options.requires_grad(false));
  r.normal_(0, 1);
  return options.requires_grad() ? r.requires_grad_(true) : r;
}

Tensor randint_like(const Tensor& t, int64_t low, int64_t high, TensorOptions options) {
  Tensor r = empty_like(t, options);
  r.random_(low, high);
  return r;
}

}  // namespace ember
