// Philox streams, seeded permutations and the per-sample random state of data loading.
#include "ember/data/random.h"

#include <exception>
#include <mutex>
#include <numeric>

#include "ember/core/generator.h"

namespace ember::data {

uint32_t PhiloxStream::next_u32() {
  if (pos_ == 4) {
    philox::block(key_, counter_++, buf_);
    pos_ = 0;
  }
  return buf_[pos_++];
}

uint64_t PhiloxStream::next_u64() {
  uint64_t hi = next_u32();
  return (hi << 32) | next_u32();
}

double PhiloxStream::uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }

uint64_t PhiloxStream::below(uint64_t n) {
  // Lemire's multiply-high with rejection of the short first interval.
  uint64_t x = next_u64();
  __uint128_t m = static_cast<__uint128_t>(x) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      x = next_u64();
      m = static_cast<__uint128_t>(x) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

namespace detail {

static uint64_t splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t mix(uint64_t a, uint64_t b) { return splitmix(splitmix(a) ^ (b * 0xD6E8FEB86659FD93ULL + 1)); }

uint64_t seed_from_default_generator() {
  Generator& g = default_cpu_generator();
  uint64_t key, counter;
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    key = g.current_seed();
    counter = g.reserve(1);
  }
  uint32_t w[4];
  philox::block(key, counter, w);
  return (static_cast<uint64_t>(w[0]) << 32) | w[1];
}

std::vector<size_t> permutation(size_t n, uint64_t key) {
  std::vector<size_t> p(n);
  std::iota(p.begin(), p.end(), size_t{0});
  PhiloxStream rng(key);
  for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
  return p;
}

}  // namespace detail

namespace {
struct ThreadState {
  bool loader_active = false;
  uint64_t seed = 0, epoch = 0;
  std::optional<size_t> index;  // the sample being produced, if any
  int stage = 0;
  bool stream_valid = false;
  PhiloxStream stream;
  std::optional<size_t> failed;
};
thread_local ThreadState t_state;
}  // namespace

LoaderSeedGuard::LoaderSeedGuard(uint64_t seed, uint64_t epoch)
    : prev_active_(t_state.loader_active), prev_seed_(t_state.seed), prev_epoch_(t_state.epoch) {
  t_state.loader_active = true;
  t_state.seed = seed;
  t_state.epoch = epoch;
  t_state.stream_valid = false;
}

LoaderSeedGuard::~LoaderSeedGuard() {
  t_state.loader_active = prev_active_;
  t_state.seed = prev_seed_;
  t_state.epoch = prev_epoch_;
  t_state.stream_valid = false;
}

SampleScope::SampleScope(size_t index, int stage)
    : prev_index_(t_state.index),
      prev_stage_(t_state.stage),
      prev_valid_(t_state.stream_valid),
      prev_stream_(t_state.stream),
      exceptions_(std::uncaught_exceptions()) {
  t_state.index = index;
  t_state.stage = stage;
  t_state.stream_valid = false;
}

SampleScope::~SampleScope() {
  if (std::uncaught_exceptions() > exceptions_ && !t_state.failed) t_state.failed = t_state.index;
  t_state.index = prev_index_;
  t_state.stage = prev_stage_;
  t_state.stream_valid = prev_valid_;
  t_state.stream = prev_stream_;
}

PhiloxStream& sample_rng() {
  ThreadState& s = t_state;
  if (!s.index) {  // not producing a sample: a fresh stream each call
    s.stream = PhiloxStream(detail::seed_from_default_generator());
    return s.stream;
  }
  if (!s.stream_valid) {
    uint64_t base = s.loader_active ? detail::mix(s.seed, s.epoch) : detail::seed_from_default_generator();
    uint64_t key = detail::mix(detail::mix(base, *s.index), static_cast<uint64_t>(s.stage));
    s.stream = PhiloxStream(key);
    s.stream_valid = true;
  }
  return s.stream;
}

std::optional<size_t> failed_sample_index() { return t_state.failed; }
void clear_failed_sample_index() { t_state.failed.reset(); }

}  // namespace ember::data
