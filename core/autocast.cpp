// The per-thread autocast state, AutocastGuard, and the weight-cast cache (core/autocast.h).
#include "ember/core/autocast.h"

#include <unordered_map>

#include "ember/core/error.h"

namespace ember::autocast {
namespace detail {

__attribute__((tls_model("initial-exec"))) constinit thread_local uint8_t t_active = 0;

}  // namespace detail

namespace {

constexpr uint8_t bit(DeviceType t) { return t == kCUDA ? 2 : 1; }

/// Everything but the hot-path byte. Plain data: no thread_local constructor runs.
struct State {
  uint8_t enabled = 0;  // bit per device type
  ScalarType cpu_dtype = kBFloat16;
  ScalarType cuda_dtype = kHalf;
  bool cache_enabled = true;
  int nesting = 0;
  int excluded = 0;  // ExcludeGuard depth
};
constinit thread_local State t_state;

void refresh_active() { detail::t_active = t_state.excluded ? 0 : t_state.enabled; }

/// One cached cast: the source is held so that its TensorImpl address, the key, cannot be
/// reused by another tensor while the entry lives (PyTorch keeps a weak reference instead;
/// the cache only lives as long as the outermost region, so holding it costs nothing new).
struct CachedCast {
  Tensor source;
  Tensor cast;
};
struct CacheKey {
  const void* impl;
  ScalarType dtype;
  bool operator==(const CacheKey&) const = default;
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return std::hash<const void*>()(k.impl) ^ (static_cast<size_t>(k.dtype) << 1);
  }
};
using Cache = std::unordered_map<CacheKey, CachedCast, CacheKeyHash>;

Cache& cache() {
  thread_local Cache c;
  return c;
}

/// PyTorch caches only the casts of float32 leaf weights that require grad (module
/// parameters) to the region's lower-precision dtype: those are the casts every forward
/// repeats with the same input.
bool cacheable(const Tensor& t, ScalarType to, DeviceType device_type) {
  return t_state.cache_enabled && to == get_autocast_dtype(device_type) && t.dtype() == kFloat &&
         t.requires_grad() && t.is_leaf();
}

void check_dtype(DeviceType device_type, ScalarType dtype) {
  EMBER_CHECK(dtype == kHalf || dtype == kBFloat16, "In ", device_type == kCUDA ? "CUDA" : "CPU",
              " autocast, but the target dtype is not supported. Supported dtypes: torch.bfloat16, "
              "torch.float16; got ", scalar_type_name(dtype));
}

}  // namespace

void set_autocast_enabled(DeviceType device_type, bool enabled) {
  if (enabled) t_state.enabled |= bit(device_type);
  else t_state.enabled &= static_cast<uint8_t>(~bit(device_type));
  refresh_active();
}

bool is_autocast_enabled(DeviceType device_type) { return (t_state.enabled & bit(device_type)) != 0; }

void set_autocast_dtype(DeviceType device_type, ScalarType dtype) {
  check_dtype(device_type, dtype);
  (device_type == kCUDA ? t_state.cuda_dtype : t_state.cpu_dtype) = dtype;
}

ScalarType get_autocast_dtype(DeviceType device_type) {
  return device_type == kCUDA ? t_state.cuda_dtype : t_state.cpu_dtype;
}

void set_autocast_cache_enabled(bool enabled) { t_state.cache_enabled = enabled; }
bool is_autocast_cache_enabled() { return t_state.cache_enabled; }

void clear_autocast_cache() { cache().clear(); }
size_t cached_cast_count() { return cache().size(); }

int increment_nesting() { return ++t_state.nesting; }
int decrement_nesting() { return --t_state.nesting; }

namespace detail {

ExcludeGuard::ExcludeGuard() {
  ++t_state.excluded;
  t_active = 0;
}

ExcludeGuard::~ExcludeGuard() {
  --t_state.excluded;
  refresh_active();
}

bool eligible(const Tensor& t, DeviceType device_type) {
  return t.defined() && t.device().type() == device_type && is_floating_point(t.dtype()) &&
         t.dtype() != kDouble;
}

ScalarType promote(std::optional<ScalarType> current, ScalarType next, DeviceType device_type) {
  if (!current || *current == next) return next;
  if (*current == kFloat || next == kFloat) return kFloat;  // float32 wins over lower precision
  // float16 meeting bfloat16: PyTorch refuses rather than guess.
  EMBER_CHECK(false, "Unexpected floating ScalarType in at::autocast::prioritize");
  (void)device_type;
  return kFloat;
}

Tensor cast(const Tensor& t, ScalarType to, DeviceType device_type) {
  if (!eligible(t, device_type) || t.dtype() == to) return t;
  if (!cacheable(t, to, device_type)) return t.to(to);
  CacheKey key{t.unsafeGetTensorImpl(), to};
  Cache& c = cache();
  auto it = c.find(key);
  if (it != c.end()) return it->second.cast;
  Tensor out = t.to(to);
  c.emplace(key, CachedCast{t, out});
  return out;
}

}  // namespace detail
}  // namespace ember::autocast

namespace ember {

AutocastGuard::AutocastGuard(DeviceType device_type, std::optional<ScalarType> dtype, bool enabled,
                             std::optional<bool> cache_enabled)
    : device_type_(device_type),
      prev_enabled_(autocast::is_autocast_enabled(device_type)),
      prev_dtype_(autocast::get_autocast_dtype(device_type)),
      prev_cache_enabled_(autocast::is_autocast_cache_enabled()) {
  // The dtype is set (and validated) first: a throwing constructor runs no destructor, so
  // nothing may have changed before it throws.
  if (dtype) autocast::set_autocast_dtype(device_type, *dtype);
  autocast::set_autocast_enabled(device_type, enabled);
  if (cache_enabled) autocast::set_autocast_cache_enabled(*cache_enabled);
  autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  // The outermost region's exit drops the cached weight casts (torch.autocast.__exit__).
  if (autocast::decrement_nesting() == 0) autocast::clear_autocast_cache();
  autocast::set_autocast_enabled(device_type_, prev_enabled_);
  autocast::set_autocast_dtype(device_type_, prev_dtype_);
  autocast::set_autocast_cache_enabled(prev_cache_enabled_);
}

}  // namespace ember
