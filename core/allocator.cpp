// The CPU caching allocator.
//
// Note [CPU caching allocator]
// glibc returns large blocks (>= 128 KiB by default) to the OS on free, and on these VMs
// each first touch of a fresh page costs ~20 us, so an allocator that gives memory back
// makes a training step several times slower (PyTorch measured 29 ms vs 4.5 ms for an MLP
// step). We round each request up to a size class (4 classes per power of two, so waste
// is under 25%) and keep freed blocks in a per-class free list. Blocks leave the cache through
// cpu_empty_cache(), when the cache would exceed kMaxCachedBytes, or when a request misses
// its class while live + cached bytes exceed the live peak by an eighth (Note [Bounded cache]).
// EMBER_NO_ALLOCATOR_CACHE=1 turns caching off, so that AddressSanitizer sees every free
// (a cached block would hide a use-after-free); CI's sanitizer run sets it.
#include "ember/core/allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "ember/core/error.h"

namespace ember {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kMaxCachedBytes = size_t{4} << 30;
constexpr size_t kNumClasses = 4 + 4 * 56 + 4;  // see class_index

/// The rounded size of a request: 64-byte steps up to 256, then four classes per power of two.
size_t size_class(size_t n) {
  if (n <= 256) return (n + kAlignment - 1) / kAlignment * kAlignment;
  size_t p = std::bit_floor(n);   // n in [p, 2p)
  size_t step = p / 4;             // four classes per power of two
  return (n + step - 1) / step * step;
}

/// A dense index for size_class(n): 0..3 for 64..256 bytes, then 4 per power of two (2p is
/// the first class of the next power, so the index is continuous).
size_t class_index(size_t n) {
  if (n <= 256) return (n + kAlignment - 1) / kAlignment - 1;
  int lg = std::bit_width(n) - 1;                  // p = 2^lg, lg >= 8
  size_t step = size_t{1} << (lg - 2);
  size_t k = (n + step - 1) >> (lg - 2);           // 4..8
  return static_cast<size_t>(lg - 8) * 4 + k;
}

/// The size of class index i (the inverse of class_index).
size_t class_size(size_t i) {
  if (i < 4) return (i + 1) * kAlignment;
  size_t lg = (i - 4) / 4 + 8, k = (i - 4) % 4 + 4;  // size = k * 2^(lg - 2)
  return k << (lg - 2);
}

/// A test-and-test-and-set lock: the allocator's critical sections are a few instructions,
/// where std::mutex's lock/unlock pair cost as much as the rest of a tiny op's allocation.
/// Waiters yield, so a holder whose core was taken away is not spun against.
class SpinLock {
 public:
  void lock() {
    for (int spins = 0; flag_.exchange(true, std::memory_order_acquire); ++spins) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
      }
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

class CpuCachingAllocator final : public Allocator {
 public:
  CpuCachingAllocator() {
    const char* off = std::getenv("EMBER_NO_ALLOCATOR_CACHE");
    caching_ = !(off && off[0] == '1');
  }
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) nbytes = 1;
    size_t sz = size_class(nbytes);
    size_t idx = class_index(nbytes);
    std::vector<void*> release;  // cached blocks to return to the system (see trim_locked)
    size_t prev_peak = 0;
    {
      std::lock_guard<SpinLock> g(mu_);
      last_use_[idx] = ++tick_;
      std::vector<void*>& bin = free_[idx];
      if (!bin.empty()) {
        void* p = bin.back();
        bin.pop_back();
        cached_ -= sz;
        allocated_ += sz;
        peak_ = std::max(peak_, allocated_);
        return p;
      }
      allocated_ += sz;
      prev_peak = peak_;
      peak_ = std::max(peak_, allocated_);
      ++system_allocs_;
      trim_locked(idx, release);
    }
    for (void* q : release) std::free(q);
    void* p = std::aligned_alloc(kAlignment, sz);
    if (!p) {
      cpu_empty_cache();
      p = std::aligned_alloc(kAlignment, sz);
    }
    if (!p) {
      std::lock_guard<SpinLock> g(mu_);
      allocated_ -= sz;
      if (peak_ == allocated_ + sz) peak_ = std::max(prev_peak, allocated_);  // a failed request is no peak
      detail::throw_error(detail::str_cat(
          "[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: not enough memory: you tried to allocate ",
          nbytes, " bytes."));
    }
    return p;
  }

  void deallocate(void* p, size_t nbytes) override {
    if (!p) return;
    if (nbytes == 0) nbytes = 1;
    size_t sz = size_class(nbytes);
    size_t idx = class_index(nbytes);
    {
      std::lock_guard<SpinLock> g(mu_);
      allocated_ -= sz;
      if (caching_ && cached_ + sz <= kMaxCachedBytes) {
        free_[idx].push_back(p);  // may allocate the bin's storage: done under the lock
        cached_ += sz;
        return;
      }
    }
    std::free(p);
  }

  Device device() const override { return kCPU; }

  void empty_cache() {
    std::vector<void*> blocks;
    {
      std::lock_guard<SpinLock> g(mu_);
      for (auto& bin : free_) {
        blocks.insert(blocks.end(), bin.begin(), bin.end());
        bin.clear();
        bin.shrink_to_fit();
      }
      cached_ = 0;
    }
    for (void* p : blocks) std::free(p);
  }

  /// Note [Bounded cache]
  /// Blocks stay cached only while the footprint (live + cached) fits in the largest live
  /// total seen so far plus an eighth: a request that misses its class first gives back the
  /// least recently requested classes until it fits. So memory freed once (a data set's
  /// conversion temporaries, an evaluation pass's batch shapes) is not held beside what is
  /// used next, and peak memory stays near that of an allocator that returns everything,
  /// while a steady loop, which requests the same classes each iteration, never misses.
  void trim_locked(size_t idx, std::vector<void*>& release) {
    size_t budget = peak_ + peak_ / 8;
    while (cached_ > 0 && allocated_ + cached_ > budget) {
      size_t victim = kNumClasses;
      for (size_t i = 0; i < kNumClasses; ++i)
        if (i != idx && !free_[i].empty() && (victim == kNumClasses || last_use_[i] < last_use_[victim]))
          victim = i;
      if (victim == kNumClasses) break;
      size_t block = class_size(victim);
      for (void* q : free_[victim]) {
        release.push_back(q);
        cached_ -= block;
      }
      free_[victim].clear();
    }
  }

  CpuAllocatorStats stats() {
    std::lock_guard<SpinLock> g(mu_);
    return {allocated_, cached_, system_allocs_};
  }

 private:
  bool caching_ = true;
  SpinLock mu_;
  std::array<std::vector<void*>, kNumClasses> free_;
  std::array<uint64_t, kNumClasses> last_use_{};  // tick_ of each class's latest request
  uint64_t tick_ = 0;
  size_t peak_ = 0;  // the largest allocated_ so far
  size_t cached_ = 0;
  size_t allocated_ = 0;
  size_t system_allocs_ = 0;
};

CpuCachingAllocator& instance() {
  // Leaked on purpose: tensors in static objects may be freed after main returns.
  static auto* a = new CpuCachingAllocator();
  return *a;
}

}  // namespace

Allocator* cpu_allocator() { return &instance(); }
CpuAllocatorStats cpu_allocator_stats() { return instance().stats(); }
void cpu_empty_cache() { instance().empty_cache(); }

}  // namespace ember

#include "ember/cuda/cuda.h"

namespace ember {
Allocator* allocator_for(Device d) {
  if (d.is_cpu()) return cpu_allocator();
  // A CUDA device without an index is the current one, as in PyTorch.
  return cuda::allocator(d.has_index() ? d.index() : cuda::current_device());
}
}  // namespace ember
