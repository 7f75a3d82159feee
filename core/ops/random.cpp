// Random tensors: rand/randn/randint/randperm/bernoulli/normal and the in-place samplers.
// Element k of a draw uses Philox block (offset + k) of the CPU generator, so values are
// the same whatever the thread count.
#include <cmath>
#include <numbers>

#include "ember/autograd/grad_mode.h"
#include "ember/core/generator.h"
#include "ember/core/op.h"
#include "ember/core/ops/creation.h"
#include "ember/core/shape.h"
#include "ember/core/tensor_iter.h"
#include "ember/core/type_promotion.h"

namespace ember {
namespace {

/// Reserves `blocks` Philox blocks from the default CPU generator; returns (key, first counter).
std::pair<uint64_t, uint64_t> reserve(uint64_t blocks) {
  Generator& g = default_cpu_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  return {g.current_seed(), g.reserve(blocks)};
}

/// Uniform double in [0, 1) for element k, one Philox block per element.
double uniform01(uint64_t key, uint64_t counter) {
  uint32_t w[4];
  philox::block(key, counter, w);
  return philox::to_double01(w[0], w[1]);
}

/// Uniform in [0, 1) on the grid of T's mantissa (k / 2^digits, as PyTorch's
/// uniform_real_distribution): a 53-bit double rounded to float could land on 1.0.
template <class T>
double uniform01_for(uint64_t key, uint64_t counter) {
  constexpr int digits = std::is_same_v<T, double> ? 53 : std::is_same_v<T, float> ? 24
                         : std::is_same_v<T, Half> ? 11 : 8;
  uint32_t w[4];
  philox::block(key, counter, w);
  uint64_t bits = (static_cast<uint64_t>(w[0]) << 32) | w[1];
  return static_cast<double>(bits >> (64 - digits)) / static_cast<double>(uint64_t{1} << digits);
}

double normal01(uint64_t key, uint64_t counter) {
  uint32_t w[4];
  philox::block(key, counter, w);
  double u1 = philox::to_double01(w[0], w[1]), u2 = philox::to_double01(w[2], w[3]);
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

/// Fills a contiguous CPU tensor with gen(k) for each flat index k, in parallel.
template <class Gen>
void fill_with(Tensor& t, const Gen& gen) {
  EMBER_CHECK(t.is_cpu(), "random sampling on CUDA tensors is not available in this build");
  check_no_internal_overlap(t.sizes(), t.strides());
  // With history recorded, the samples arrive through a recorded copy_, which cuts the old
  // history (the new values do not depend on it), as PyTorch's samplers do.
  bool record = detail::should_record({t});
  Tensor out = t.is_contiguous() && !record ? t : empty_like(t);
  visit_dtype(out.dtype(), [&]<typename T>() {
    T* p = static_cast<T*>(out.data_ptr());
    parallel_for(out.numel(), 4096, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) p[k] = static_cast<T>(gen(k));
    });
  });
  if (record) t.copy_(out);
  else if (!out.is_same(t)) detail::copy_into(t, out);  // bumps the version itself
  else t.unsafeGetTensorImpl()->storage()->bump_version();
}

void check_float(const Tensor& t, const char* op) {
  EMBER_CHECK(t.is_floating_point(), "\"", op, "\" not implemented for '", scalar_type_name(t.dtype()), "'");
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to) {
  check_float(*this, "check_uniform_bounds");
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  detail::check_inplace(*this, "uniform_");
  auto [key, start] = reserve(static_cast<uint64_t>(numel()));
  double width = to - from;
  visit_float_dtype(dtype(), "check_uniform_bounds", [&]<typename T>() {
    fill_with(*this, [=](int64_t k) { return from + width * uniform01_for<T>(key, start + k); });
  });
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  check_float(*this, "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  detail::check_inplace(*this, "normal_");
  auto [key, start] = reserve(static_cast<uint64_t>(numel()));
  fill_with(*this, [=](int64_t k) { return mean + std * normal01(key, start + k); });
  return *this;
}

Tensor& Tensor::bernoulli_(double p) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  detail::check_inplace(*this, "bernoulli_");
  auto [key, start] = reserve(static_cast<uint64_t>(numel()));
  fill_with(*this, [=](int64_t k) { return uniform01(key, start + k) < p ? 1.0 : 0.0; });
  return *this;
}

Tensor& Tensor::random_(int64_t from, int64_t to) {
  EMBER_CHECK(from < to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
  detail::check_inplace(*this, "random_");
  auto [key, start] = reserve(static_cast<uint64_t>(numel()));
  uint64_t range = static_cast<uint64_t>(to - from);
  fill_with(*this, [=](int64_t k) {
    uint32_t w[4];
    philox::block(key, start + k, w);
    uint64_t r = (static_cast<uint64_t>(w[0]) << 32) | w[1];
    return static_cast<double>(from + static_cast<int64_t>(r % range));
  });
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
  // Fisher-Yates with one Philox block per swap.
  auto [key, start] = reserve(static_cast<uint64_t>(n));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    uint32_t w[4];
    philox::block(key, start + static_cast<uint64_t>(i), w);
    uint64_t r = (static_cast<uint64_t>(w[0]) << 32) | w[1];
    std::swap(perm[i], perm[static_cast<int64_t>(r % static_cast<uint64_t>(i + 1))]);
  }
  Tensor t = empty({n}, kLong);
  std::copy(perm.begin(), perm.end(), t.data_ptr<int64_t>());
  return t.to(options.has_dtype() ? options.dtype() : kLong);
}

Tensor bernoulli(const Tensor& p) {
  EMBER_CHECK(p.is_floating_point(), "\"bernoulli_tensor_cpu_p_\" not implemented for '", scalar_type_name(p.dtype()), "'");
  Tensor probs = p.detach().to(kDouble).contiguous();
  const double* q = probs.data_ptr<double>();
  for (int64_t k = 0; k < probs.numel(); ++k)
    EMBER_CHECK(q[k] >= 0 && q[k] <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  Tensor out = empty_like(p);
  auto [key, start] = reserve(static_cast<uint64_t>(p.numel()));
  fill_with(out, [=](int64_t k) { return uniform01(key, start + k) < q[k] ? 1.0 : 0.0; });
  return out;
}

Tensor bernoulli(const Tensor& self, double p) {
  Tensor out = empty_like(self);
  out.bernoulli_(p);
  return out;
}

Tensor Tensor::bernoulli() const { return ember::bernoulli(*this); }

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
