// The CPU caching allocator (Note [CPU caching allocator]): freed blocks are reused without
// reaching the system, data pointers are 64-byte aligned, and cpu_empty_cache returns the
// cache. Also Storage ownership: external memory and deleters.
#include <cstdint>
#include <cstdlib>

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
