// The CPU caching allocator (Note [CPU caching allocator]): freed blocks are reused without
// reaching the system, data pointers are 64-byte aligned, and cpu_empty_cache returns the
// cache. Also Storage ownership: external memory and deleters.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "op_check.h"

using namespace ember;

namespace {
// CI's sanitizer run turns caching off (EMBER_NO_ALLOCATOR_CACHE=1) so AddressSanitizer sees
// every free; the reuse checks then have nothing to observe.
bool caching_off() {
  const char* v = std::getenv("EMBER_NO_ALLOCATOR_CACHE");
  return v && v[0] == '1';
}
}  // namespace

TEST_CASE("test_allocator: a freed block is reused") {
  if (caching_off()) return;
  // An unusual size so no other test's cached block matches: 12345 floats.
  const int64_t n = 12345;
  void* first;
  {
    Tensor a = empty({n});
    first = a.data_ptr();
  }
  CpuAllocatorStats s1 = cpu_allocator_stats();
  CHECK(s1.cached_bytes >= static_cast<size_t>(n) * 4);
  Tensor b = empty({n});
  CpuAllocatorStats s2 = cpu_allocator_stats();
  CHECK(s2.system_allocs == s1.system_allocs);  // served from the cache
  CHECK(b.data_ptr() == first);                 // the very same block
  CHECK(s2.cached_bytes < s1.cached_bytes);
  CHECK(s2.allocated_bytes > s1.allocated_bytes);
  // A request in the same size class reuses it too (classes are 1/4 of a power of two wide):
  // 12345 * 4 = 49380 bytes rounds up to 49152 + 8192 = 57344; 12000 floats = 48000 bytes
  // rounds to 49152, a different class, so only nearby sizes share.
  void* pb = b.data_ptr();
  b.reset();
  CpuAllocatorStats s3 = cpu_allocator_stats();
  Tensor c = empty({14000});  // 56000 bytes: also the 57344 class
  CHECK(cpu_allocator_stats().system_allocs == s3.system_allocs);
  CHECK(c.data_ptr() == pb);
}

TEST_CASE("test_allocator: allocated bytes are tracked") {
  CpuAllocatorStats s0 = cpu_allocator_stats();
  {
    Tensor t = empty({1000}, kDouble);  // 8000 bytes -> the 8192 class
    CHECK(cpu_allocator_stats().allocated_bytes == s0.allocated_bytes + 8192);
    Tensor view = t.view({10, 100});    // views share storage: nothing new
    CHECK(cpu_allocator_stats().allocated_bytes == s0.allocated_bytes + 8192);
  }
  CHECK(cpu_allocator_stats().allocated_bytes == s0.allocated_bytes);
}

TEST_CASE("test_allocator: data pointers are 64-byte aligned") {
  for (int64_t n : {0, 1, 3, 17, 64, 100, 1000, 4097, 100000}) {
    for (ScalarType dt : {kBool, kHalf, kFloat, kDouble}) {
      Tensor t = empty({n}, dt);
      INFO("n = " << n << " dtype " << dt);
      CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
    }
  }
  // Direct allocator calls too, including nbytes = 0 (never null).
  Allocator* a = cpu_allocator();
  CHECK(a->device() == Device(kCPU));
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{65}, size_t{300}, size_t{5000}}) {
    void* p = a->allocate(n);
    CHECK(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    a->deallocate(p, n);
  }
  CHECK(allocator_for(Device(kCPU)) == cpu_allocator());
}

TEST_CASE("test_allocator: cpu_empty_cache returns cached blocks") {
  if (caching_off()) return;
  { Tensor t = empty({33333}); }
  CHECK(cpu_allocator_stats().cached_bytes > 0);
  cpu_empty_cache();
  CpuAllocatorStats s = cpu_allocator_stats();
  CHECK(s.cached_bytes == 0);
  // The next allocation has to go to the system.
  Tensor u = empty({33333});
  CHECK(cpu_allocator_stats().system_allocs == s.system_allocs + 1);
  // Live tensors are unaffected by emptying the cache.
  u.fill_(2.0);
  cpu_empty_cache();
  ember::test::check_close(u.narrow(0, 0, 3), {2, 2, 2});
}

TEST_CASE("test_allocator: storage and version counter basics") {
  Tensor t = zeros({4});
  const Storage& st = t.unsafeGetTensorImpl()->storage();
  CHECK(st->nbytes() == 16);
  CHECK(st->device() == Device(kCPU));
  CHECK(st->data() == t.data_ptr());
  uint32_t v = st->version();
  st->bump_version();
  CHECK(t._version() == v + 1);
  // A view keeps the storage alive after the original handle goes.
  Tensor view = t.narrow(0, 1, 2);
  t.reset();
  view.fill_(3.0);
  ember::test::check_close(view, {3, 3});
  CHECK(view.storage_offset() == 1);
  CHECK(view.unsafeGetTensorImpl()->storage()->nbytes() == 16);
}

TEST_CASE("test_allocator: size classes round up by at most a quarter and are reused exactly") {
  if (caching_off()) return;
  Allocator* a = cpu_allocator();
  // The rounded size the stats report: 64-byte steps to 256, then 4 classes per power of two.
  auto rounded = [](size_t n) -> size_t {
    if (n <= 256) return (n + 63) / 64 * 64;
    size_t p = size_t{1} << (63 - __builtin_clzll(n));
    return (n + p / 4 - 1) / (p / 4) * (p / 4);
  };
  for (size_t n : {size_t{1}, size_t{64}, size_t{65}, size_t{256}, size_t{257}, size_t{320}, size_t{321},
                   size_t{511}, size_t{512}, size_t{513}, size_t{4096}, size_t{4097}, size_t{5120},
                   size_t{5121}, size_t{7168}, size_t{7169}, size_t{8191}, size_t{1} << 20,
                   (size_t{1} << 20) + 1, size_t{3} << 19}) {
    CpuAllocatorStats s0 = cpu_allocator_stats();
    void* p = a->allocate(n);
    CHECK(cpu_allocator_stats().allocated_bytes == s0.allocated_bytes + rounded(n));
    CHECK(rounded(n) - n < std::max<size_t>(64, n / 4 + 1));
    std::memset(p, 0xab, rounded(n));  // the whole class is usable
    a->deallocate(p, n);
    CHECK(cpu_allocator_stats().allocated_bytes == s0.allocated_bytes);
    // Any size of the same class gets the block back; one byte more is the next class up.
    void* q = a->allocate(rounded(n));
    CHECK(q == p);
    a->deallocate(q, rounded(n));
    CpuAllocatorStats s1 = cpu_allocator_stats();
    void* r = a->allocate(rounded(n) + 1);
    CHECK(cpu_allocator_stats().allocated_bytes == s1.allocated_bytes + rounded(rounded(n) + 1));
    CHECK(rounded(rounded(n) + 1) > rounded(n));
    a->deallocate(r, rounded(n) + 1);
  }
}

// The elementwise ops on 16M floats allocate a 64 MB output per call: the cache must hand the
// same block back, so no call maps fresh pages and faults them in (~20 us per 4 KiB page on
// these VMs).
TEST_CASE("test_allocator: a repeated 64 MB allocation is served without page faults") {
  if (caching_off()) return;
  const int64_t n = int64_t{1} << 24;  // 16M floats = 64 MB
  void* first = nullptr;
  { Tensor t = empty({n}); t.fill_(1.0); first = t.data_ptr(); }
  CpuAllocatorStats s0 = cpu_allocator_stats();
  rusage r0{};
  getrusage(RUSAGE_SELF, &r0);
  for (int i = 0; i < 5; ++i) {
    Tensor t = empty({n});
    CHECK(t.data_ptr() == first);
    t.fill_(static_cast<double>(i));  // touches every page
  }
  rusage r1{};
  getrusage(RUSAGE_SELF, &r1);
  CHECK(cpu_allocator_stats().system_allocs == s0.system_allocs);
  // A fresh 64 MB block would fault in 16384 pages each time; allow a little noise.
  CHECK(r1.ru_minflt - r0.ru_minflt < 1000);
}

TEST_CASE("test_allocator: allocations from several threads keep the books balanced") {
  CpuAllocatorStats s0 = cpu_allocator_stats();
  std::atomic<int> wrong{0};
  auto work = [&wrong] {
    for (int i = 0; i < 2000; ++i) {
      Tensor t = empty({1 + i % 300});
      t.fill_(1.0);
      Tensor u = t + t;
      if (u[i % 300 % u.numel()].item<float>() != 2.0f) ++wrong;
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  CHECK(wrong.load() == 0);
  CHECK(cpu_allocator_stats().allocated_bytes == s0.allocated_bytes);
}

// Note [Bounded cache]: a miss gives back cached classes while live + cached would exceed the
// largest live total so far (plus an eighth). Blocks this large are never touched, so they
// cost address space only.
TEST_CASE("test_allocator: a miss gives back stale cached classes beyond the peak") {
  if (caching_off()) return;
  Allocator* a = cpu_allocator();
  const size_t big = size_t{1} << 30;  // larger than anything live in the other tests
  void* p = a->allocate(big);
  a->deallocate(p, big);
  CHECK(cpu_allocator_stats().cached_bytes >= big);
  // Another class: live would be 1.25 GiB beside 1 GiB cached, above the 1.25 GiB peak's budget.
  const size_t other = big + big / 4;
  CpuAllocatorStats s0 = cpu_allocator_stats();
  void* q = a->allocate(other);
  CpuAllocatorStats s1 = cpu_allocator_stats();
  CHECK(s1.system_allocs == s0.system_allocs + 1);
  CHECK(s1.cached_bytes + big <= s0.cached_bytes);  // the 1 GiB block went back (and older ones)
  a->deallocate(q, other);
  // Within the budget nothing is given back: the 1.25 GiB block stays while a small class misses.
  CpuAllocatorStats s2 = cpu_allocator_stats();
  void* r = a->allocate(4096 * 3 + 1);
  CHECK(cpu_allocator_stats().cached_bytes >= other);
  CHECK(cpu_allocator_stats().cached_bytes == s2.cached_bytes);
  a->deallocate(r, 4096 * 3 + 1);
  cpu_empty_cache();
}
