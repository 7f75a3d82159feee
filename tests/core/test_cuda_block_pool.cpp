// The CUDA caching allocators' bookkeeping (cuda/runtime/block_pool.h) on the CPU, through a fake
// device: size rounding, reuse, splitting and merging, small vs large pools, stream-ordered
// reuse and record_stream, statistics, empty_cache, the out-of-memory retry and message, and
// the pinned host pool. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/cuda/runtime/block_pool.h"

using namespace ember;
using namespace ember::cuda;

namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

CUDAStream stream(uintptr_t id, int device = 0) {
  return CUDAStream(reinterpret_cast<CUDAStream::Handle>(id), device);
}
const CUDAStream kA = stream(0x100);
const CUDAStream kB = stream(0x200);

// A device with `capacity` bytes: addresses are handed out from a counter (never touched),
// events complete only when the test says so (or the pool waits for them).
class FakeDevice final : public MemoryBackend {
 public:
  explicit FakeDevice(size_t capacity = size_t{1} << 30) : capacity_(capacity) {}

  void* malloc(size_t nbytes) override {
    if (used_ + nbytes > capacity_) return nullptr;
    ++mallocs;
    used_ += nbytes;
    void* p = reinterpret_cast<void*>(next_);
    next_ += nbytes + 4096;  // a gap, so separate segments never look adjacent
    live_[p] = nbytes;
    return p;
  }
  void free(void* ptr) override {
    auto it = live_.find(ptr);
    REQUIRE(it != live_.end());
    used_ -= it->second;
    live_.erase(it);
    ++frees;
  }
  Event record_event(CUDAStream s) override {
    events_.push_back(std::make_unique<FakeEvent>(FakeEvent{s}));
    ++recorded;
    return events_.back().get();
  }
  bool event_done(Event e) override { return static_cast<FakeEvent*>(e)->done; }
  void wait_event(Event e) override {
    static_cast<FakeEvent*>(e)->done = true;
    ++waits;
  }
  void release_event(Event e) override {
    static_cast<FakeEvent*>(e)->released = true;
    ++released;
  }
  MemInfo mem_info() override { return {capacity_ - used_, capacity_}; }

  /// `s` has finished everything enqueued so far.
  void complete(CUDAStream s) {
    for (auto& e : events_)
      if (e->stream == s) e->done = true;
  }
  size_t used() const { return used_; }

  int mallocs = 0, frees = 0, recorded = 0, waits = 0, released = 0;

 private:
  struct FakeEvent {
    CUDAStream stream;
    bool done = false;
    bool released = false;
  };
  size_t capacity_;
  size_t used_ = 0;
  uintptr_t next_ = 0x10000000;
  std::map<void*, size_t> live_;
  std::vector<std::unique_ptr<FakeEvent>> events_;
};

char* cp(void* p) { return static_cast<char*>(p); }

}  // namespace

TEST_CASE("test_cuda_block_pool: sizes are rounded as PyTorch's") {
  CHECK(BlockPool::round_size(1) == 512);
  CHECK(BlockPool::round_size(512) == 512);
  CHECK(BlockPool::round_size(513) == 1024);
  CHECK(BlockPool::round_size(MiB + 1) == MiB + 512);
  // Up to 1 MiB: 2 MiB segments; below 10 MiB: 20 MiB; from 10 MiB: the size rounded to 2 MiB.
  CHECK(BlockPool::segment_size(512) == 2 * MiB);
  CHECK(BlockPool::segment_size(MiB) == 2 * MiB);
  CHECK(BlockPool::segment_size(MiB + 512) == 20 * MiB);
  CHECK(BlockPool::segment_size(10 * MiB - 512) == 20 * MiB);
  CHECK(BlockPool::segment_size(10 * MiB) == 10 * MiB);
  CHECK(BlockPool::segment_size(11 * MiB + 512) == 12 * MiB);
}

TEST_CASE("test_cuda_block_pool: a freed block is reused without a new segment") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(1000, kA);
  pool.free(a);
  void* b = pool.allocate(1000, kA);
  CHECK(b == a);
  CHECK(dev.mallocs == 1);
  // A steady loop of allocations and frees stays inside the first segments.
  for (int i = 0; i < 100; ++i) {
    void* x = pool.allocate(3000, kA);
    void* y = pool.allocate(5 * MiB, kA);
    pool.free(x);
    pool.free(y);
  }
  CHECK(dev.mallocs == 2);  // one small, one large segment
  CHECK(dev.frees == 0);
  pool.free(b);
}

TEST_CASE("test_cuda_block_pool: blocks are split from one segment and best fit is chosen") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(1000, kA);
  void* b = pool.allocate(1000, kA);
  void* c = pool.allocate(1000, kA);
  CHECK(cp(b) == cp(a) + 1024);  // the rest of a's segment, right after it
  CHECK(cp(c) == cp(b) + 1024);
  CHECK(dev.mallocs == 1);
  CHECK(pool.stats().reserved_bytes == 2 * MiB);
  CHECK(pool.stats().allocated_bytes == 3 * 1024);
  // A 1 KiB hole and the ~2 MiB tail are free: a small request takes the hole.
  pool.free(b);
  void* d = pool.allocate(600, kA);
  CHECK(d == b);
  pool.free(a);
  pool.free(c);
  pool.free(d);
}

TEST_CASE("test_cuda_block_pool: freed neighbours merge back into a whole segment") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(1000, kA);
  void* b = pool.allocate(1000, kA);
  void* c = pool.allocate(1000, kA);
  pool.free(a);
  pool.free(c);  // merges with the tail
  pool.free(b);  // merges with both sides
  // The whole segment is one free block again: a 1 MiB request fits at its start...
  void* big = pool.allocate(MiB, kA);
  CHECK(big == a);
  CHECK(dev.mallocs == 1);
  pool.free(big);
  // ...and empty_cache can give it back (a split segment could not be released).
  pool.empty_cache();
  CHECK(dev.frees == 1);
  CHECK(dev.used() == 0);
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("test_cuda_block_pool: small and large requests come from separate pools") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* small = pool.allocate(MiB, kA);
  CHECK(pool.stats().reserved_bytes == 2 * MiB);
  void* large = pool.allocate(MiB + 1, kA);  // just above 1 MiB: a 20 MiB segment
  CHECK(pool.stats().reserved_bytes == 22 * MiB);
  CHECK(dev.mallocs == 2);
  pool.free(small);
  // The free 2 MiB small segment would fit, but large requests never use small blocks.
  void* large2 = pool.allocate(MiB + MiB / 2, kA);
  CHECK(dev.mallocs == 2);  // from the rest of the 20 MiB segment
  CHECK(cp(large2) == cp(large) + MiB + 512);
  // 12 MiB still fits in the 20 MiB segment's rest; 30 MiB gets a segment of its own.
  void* mid = pool.allocate(11 * MiB + 1, kA);
  CHECK(dev.mallocs == 2);
  void* huge = pool.allocate(29 * MiB + 1, kA);
  CHECK(dev.mallocs == 3);
  CHECK(pool.stats().reserved_bytes == 52 * MiB);
  pool.free(mid);
  pool.free(large);
  pool.free(large2);
  pool.free(huge);
}

TEST_CASE("test_cuda_block_pool: a large block is not split for a remainder of 1 MiB or less") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  // 19.5 MiB gets a 20 MiB segment; the 0.5 MiB left stays part of the block.
  void* p = pool.allocate(19 * MiB + MiB / 2, kA);
  CHECK(pool.stats().allocated_bytes == 20 * MiB);
  pool.free(p);
  // 5 MiB from a 20 MiB segment: 15 MiB left, which is split off.
  void* q = pool.allocate(5 * MiB, kA);
  CHECK(q == p);
  CHECK(pool.stats().allocated_bytes == 5 * MiB);
  pool.free(q);
}

TEST_CASE("test_cuda_block_pool: a block freed on one stream is not handed to another") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(4096, kA);
  pool.free(a);
  void* b = pool.allocate(4096, kB);
  CHECK(b != a);
  CHECK(dev.mallocs == 2);  // stream B gets a segment of its own
  void* c = pool.allocate(4096, kA);
  CHECK(c == a);
  // Same stream handle on another device is another stream.
  pool.free(c);
  void* d = pool.allocate(4096, stream(0x100, 1));
  CHECK(d != a);
  pool.free(b);
  pool.free(d);
}

TEST_CASE("test_cuda_block_pool: record_stream delays reuse until the other stream is done") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(1000, kA);
  pool.record_stream(a, kA);  // its own stream: nothing to wait for
  pool.free(a);
  CHECK(dev.recorded == 0);
  CHECK(pool.allocate(1000, kA) == a);

  pool.record_stream(a, kB);
  pool.record_stream(a, kB);  // once per stream
  pool.free(a);
  CHECK(dev.recorded == 1);
  CHECK(pool.stats().allocated_bytes == 0);
  // Stream B may still be reading `a`: the next request on A gets other memory.
  void* b = pool.allocate(1000, kA);
  CHECK(b != a);
  void* c = pool.allocate(1000, kA);
  CHECK(c != a);
  dev.complete(kB);
  void* d = pool.allocate(1000, kA);
  CHECK(d == a);
  CHECK(dev.released == 1);
  for (void* p : {b, c, d}) pool.free(p);
  // Pointers the pool does not know are ignored by record_stream, refused by free.
  int local = 0;
  pool.record_stream(&local, kB);
  CHECK_THROWS_WITH_AS(pool.free(&local), doctest::Contains("invalid device pointer"), ember::Error);
}

TEST_CASE("test_cuda_block_pool: a block waiting on events does not merge until they complete") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(MiB, kA);
  pool.record_stream(a, kB);
  pool.free(a);
  pool.empty_cache();  // waits for the pending event, then releases the whole segment
  CHECK(dev.waits == 1);
  CHECK(dev.frees == 1);
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("test_cuda_block_pool: statistics and peak reset") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* a = pool.allocate(1000, kA);
  void* b = pool.allocate(2000, kA);
  void* c = pool.allocate(30 * MiB, kA);
  MemoryStats s = pool.stats();
  CHECK(s.allocated_bytes == 1024 + 2048 + 30 * MiB);
  CHECK(s.max_allocated_bytes == s.allocated_bytes);
  CHECK(s.reserved_bytes == 32 * MiB);
  CHECK(s.active_blocks == 3);
  CHECK(s.segments == 2);
  CHECK(s.num_device_alloc == 2);
  pool.free(c);
  pool.free(b);
  s = pool.stats();
  CHECK(s.allocated_bytes == 1024);
  CHECK(s.max_allocated_bytes == 1024 + 2048 + 30 * MiB);
  CHECK(s.reserved_bytes == 32 * MiB);  // cached, not returned
  pool.reset_peak_stats();
  s = pool.stats();
  CHECK(s.max_allocated_bytes == 1024);
  CHECK(s.max_reserved_bytes == 32 * MiB);
  pool.empty_cache();
  s = pool.stats();
  CHECK(s.reserved_bytes == 2 * MiB);
  CHECK(s.max_reserved_bytes == 32 * MiB);
  pool.free(a);
}

TEST_CASE("test_cuda_block_pool: empty_cache releases only segments with nothing allocated") {
  FakeDevice dev;
  BlockPool pool(dev, 0);
  void* kept = pool.allocate(1000, kA);
  void* gone = pool.allocate(4 * MiB, kA);
  void* gone2 = pool.allocate(1000, kB);
  pool.free(gone);
  pool.free(gone2);
  pool.empty_cache();
  CHECK(dev.frees == 2);
  CHECK(pool.stats().reserved_bytes == 2 * MiB);
  CHECK(pool.stats().allocated_bytes == 1024);
  // The kept block is still valid and returns to its segment normally.
  pool.free(kept);
  CHECK(pool.allocate(1000, kA) == kept);
}

TEST_CASE("test_cuda_block_pool: out of memory frees the cache and retries, then raises PyTorch's message") {
  FakeDevice dev(30 * MiB);
  BlockPool pool(dev, 0);
  void* a = pool.allocate(5 * MiB, kA);   // a 20 MiB segment
  pool.free(a);                           // cached on stream A
  void* b = pool.allocate(12 * MiB, kB);  // 20 + 12 > 30: the cached segment must go first
  CHECK(dev.frees == 1);
  CHECK(pool.stats().num_alloc_retries == 1);
  CHECK(pool.stats().reserved_bytes == 12 * MiB);

  std::string expected =
      "CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of 30.00 MiB of which "
      "18.00 MiB is free. Of the allocated memory 12.00 MiB is allocated by ember, and 0 bytes is reserved "
      "by "
      "ember but unallocated.";
  CHECK_THROWS_WITH_AS(pool.allocate(100 * MiB, kA), expected.c_str(), ember::Error);
  CHECK(pool.stats().num_ooms == 1);
  CHECK(pool.stats().num_alloc_retries == 2);
  pool.free(b);
}

TEST_CASE("test_cuda_block_pool: the out-of-memory message counts reserved but unallocated memory") {
  FakeDevice dev(30 * MiB);
  BlockPool pool(dev, 3);
  void* a = pool.allocate(1000, kA);  // a 2 MiB segment that cannot be released (a is in it)
  std::string expected =
      "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 3 has a total capacity of 30.00 MiB of which "
      "28.00 MiB is free. Of the allocated memory 1024 bytes is allocated by ember, and 2.00 MiB is reserved "
      "by ember but unallocated.";
  CHECK(out_of_memory_message(3, 30 * MiB, {28 * MiB, 30 * MiB}, 1024, 2 * MiB + 1024) == expected);
  CHECK_THROWS_WITH_AS(pool.allocate(29 * MiB, kA), expected.c_str(), ember::Error);
  pool.free(a);
}

TEST_CASE("test_cuda_block_pool: format_size follows PyTorch's units") {
  CHECK(format_size(0) == "0 bytes");
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(1536) == "1.50 KiB");
  CHECK(format_size(MiB) == "1024.00 KiB");
  CHECK(format_size(20 * MiB) == "20.00 MiB");
  CHECK(format_size(size_t{2} << 30) == "2.00 GiB");
  CHECK(format_size(size_t{81} << 30) == "81.00 GiB");
}

TEST_CASE("test_cuda_block_pool: without caching every block is its own exact segment") {
  FakeDevice dev;
  BlockPool pool(dev, 0, /*caching=*/false);
  void* a = pool.allocate(1000, kA);
  CHECK(pool.stats().allocated_bytes == 1000);
  pool.free(a);
  CHECK(dev.frees == 1);
  void* b = pool.allocate(1000, kA);
  CHECK(dev.mallocs == 2);
  pool.free(b);
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("test_cuda_block_pool: pinned host blocks are cached by power-of-two size") {
  FakeDevice host;
  HostBlockPool pool(host);
  void* a = pool.allocate(1000);  // a 1 KiB block
  CHECK(pool.allocated_bytes() == KiB);
  CHECK(pool.contains(a));
  CHECK(pool.contains(cp(a) + 1023));  // a view into the block
  CHECK_FALSE(pool.contains(cp(a) + 1024));
  pool.free(a);
  CHECK(pool.cached_bytes() == KiB);
  CHECK(pool.allocate(600) == a);  // also rounds to 1 KiB
  CHECK(host.mallocs == 1);
  void* big = pool.allocate(3000);  // 4 KiB: another block
  CHECK(big != a);
  pool.free(big);
  pool.free(a);
  pool.empty_cache();
  CHECK(host.frees == 2);
  CHECK(pool.cached_bytes() == 0);
}

TEST_CASE("test_cuda_block_pool: a pinned block used by an async copy waits for its stream") {
  FakeDevice host;
  HostBlockPool pool(host);
  void* a = pool.allocate(KiB);
  pool.record_use(cp(a) + 100, kB);  // a copy from a view of it, on stream B
  pool.free(a);
  CHECK(host.recorded == 1);
  CHECK(pool.cached_bytes() == 0);  // not reusable yet
  void* b = pool.allocate(KiB);
  CHECK(b != a);
  host.complete(kB);
  void* c = pool.allocate(KiB);
  CHECK(c == a);
  pool.free(b);
  pool.free(c);
  CHECK_THROWS_WITH_AS(pool.free(c), doctest::Contains("invalid pinned memory pointer"), ember::Error);
}
