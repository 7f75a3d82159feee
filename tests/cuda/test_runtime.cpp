// The CUDA runtime on a real device: devices and guards, streams (current per thread, pool,
// guard), events and elapsed time, the caching allocator (steady-state reuse without
// cudaMalloc, statistics, out of memory, record_stream), pinned memory and asynchronous
// copies from it, and the DataLoader's pin_memory.
#include <cstdlib>
#include <thread>

#include "cuda/parity.h"
#include "ember/cuda/runtime/pinned_allocator.h"
#include "ember/data/dataloader.h"
#include "ember/data/datasets/tensor.h"
#include "ember/data/transforms/stack.h"

using namespace ember;
using namespace ember::test;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

template <class F>
void check_error(F&& f, const char* text) {
  CHECK_THROWS_WITH_AS(f(), doctest::Contains(text), Error);
}

double values_sum(const Tensor& t) {
  double s = 0;
  for (double v : host_values(t)) s += v;
  return s;
}

TensorOptions on_cuda(ScalarType t = kFloat) { return TensorOptions().dtype(t).device(cuda_device()); }

// Keeps the current stream busy for ~10 ms (device-to-device copies of 256 MiB),
// so that work enqueued after it is certainly still pending when the host looks.
void keep_stream_busy(int copies = 64) {
  Tensor a = empty({64 * kMiB}, on_cuda());
  Tensor b = empty({64 * kMiB}, on_cuda());
  for (int i = 0; i < copies; ++i) b.copy_(a);
}

}  // namespace

// ---- devices and guards ----------------------------------------------------------------------

TEST_CASE("cuda runtime: devices are counted and one is current") {
  CHECK(cuda::is_available());
  REQUIRE(cuda::device_count() >= 1);
  int cur = cuda::current_device();
  CHECK(cur >= 0);
  CHECK(cur < cuda::device_count());
  cuda::set_device(0);
  CHECK(cuda::current_device() == 0);
  check_error([] { cuda::set_device(cuda::device_count()); }, "invalid device ordinal");
  cuda::synchronize();
}

TEST_CASE("cuda runtime: DeviceGuard switches for a scope and restores") {
  cuda::set_device(0);
  int last = cuda::device_count() - 1;
  {
    cuda::DeviceGuard guard(last);
    CHECK(cuda::current_device() == last);
    {
      cuda::DeviceGuard noop{Device(kCPU)};  // a CPU device leaves the current one alone
      CHECK(cuda::current_device() == last);
    }
  }
  CHECK(cuda::current_device() == 0);
}

TEST_CASE("cuda runtime: a CUDA device without an index allocates on the current device") {
  Tensor t = empty({4}, TensorOptions().device(Device(kCUDA)));
  CHECK(t.device() == Device(kCUDA, static_cast<int8_t>(cuda::current_device())));
}

// ---- streams ---------------------------------------------------------------------------------

TEST_CASE("cuda runtime: the current stream is the default one until a guard changes it") {
  cuda::CUDAStream def = cuda::getDefaultCUDAStream();
  CHECK(cuda::getCurrentCUDAStream() == def);
  cuda::CUDAStream s1 = cuda::getStreamFromPool();
  cuda::CUDAStream s2 = cuda::getStreamFromPool();
  CHECK(s1 != def);
  CHECK(s1 != s2);  // round-robin over the pool
  CHECK(cuda::getStreamFromPool(/*high_priority=*/true) != def);
  {
    cuda::CUDAStreamGuard guard(s1);
    CHECK(cuda::getCurrentCUDAStream() == s1);
    // The current stream is per thread: another thread still sees the default stream.
    cuda::CUDAStream seen = def;
    std::thread([&] { seen = cuda::getCurrentCUDAStream(0); }).join();
    CHECK(seen == def);
    Tensor x = full({1000}, 2.0, on_cuda());  // work on s1
    s1.synchronize();
    CHECK(s1.query());
  }
  CHECK(cuda::getCurrentCUDAStream() == def);
}

// ---- events ----------------------------------------------------------------------------------

TEST_CASE("cuda runtime: events are created on first record, queried and synchronized") {
  cuda::CUDAEvent e;
  CHECK_FALSE(e.isCreated());
  CHECK(e.query());                       // nothing recorded: nothing pending
  e.block(cuda::getCurrentCUDAStream());  // a no-op before the first record
  keep_stream_busy();
  e.record();
  CHECK(e.isCreated());
  CHECK(e.device_index() == cuda::current_device());
  e.synchronize();
  CHECK(e.query());
  cuda::CUDAEvent moved = std::move(e);
  CHECK(moved.isCreated());
  CHECK_FALSE(e.isCreated());
}

TEST_CASE("cuda runtime: elapsed_time between timing events") {
  cuda::CUDAEvent start(/*enable_timing=*/true), end(/*enable_timing=*/true);
  start.record();
  keep_stream_busy(8);
  end.record();
  end.synchronize();
  float ms = start.elapsed_time(end);
  CHECK(ms > 0.0f);
  CHECK(ms < 10000.0f);

  cuda::CUDAEvent untimed;
  untimed.record();
  untimed.synchronize();
  check_error([&] { (void)untimed.elapsed_time(end); },
              "Both events must be created with argument 'enable_timing=True'.");
  cuda::CUDAEvent never(true);
  check_error([&] { (void)never.elapsed_time(end); },
              "Both events must be recorded before calculating elapsed time.");
}

TEST_CASE("cuda runtime: block makes another stream wait for the event") {
  cuda::CUDAStream producer = cuda::getStreamFromPool();
  cuda::CUDAStream consumer = cuda::getStreamFromPool();
  Tensor src = full({kMiB}, 7.0, on_cuda());
  cuda::synchronize();
  Tensor dst;
  cuda::CUDAEvent ready;
  {
    cuda::CUDAStreamGuard g(producer);
    keep_stream_busy();
    dst = src.clone();  // written on the producer after the busy work
    ready.record();
  }
  ready.block(consumer);
  Tensor out;
  {
    cuda::CUDAStreamGuard g(consumer);
    out = dst.clone();  // must see the finished dst
  }
  consumer.synchronize();
  CHECK(ready.query());
  CHECK(values_sum(out) == 7.0 * kMiB);
}

// ---- the caching allocator -------------------------------------------------------------------

TEST_CASE("cuda allocator: a steady loop reuses cached blocks without new cudaMalloc") {
  if (allocator_cache_off()) return;
  cuda::synchronize();
  // Warm up with the loop's shapes, then nothing may reach the device.
  auto step = [] {
    Tensor a = empty({1000}, on_cuda());       // small pool
    Tensor b = empty({kMiB}, on_cuda());       // large pool: 4 MiB of a 20 MiB segment
    Tensor c = empty({40 * kMiB}, on_cuda());  // large, its own segment
    b.slice(0, 0, 1000).copy_(a);              // some work on the stream
    return c.numel();
  };
  step();
  size_t reserved = cuda::memory_reserved();
  size_t device_allocs = cuda::memory_stats().num_device_alloc;
  for (int i = 0; i < 200; ++i) step();
  CHECK(cuda::memory_reserved() == reserved);
  CHECK(cuda::memory_stats().num_device_alloc == device_allocs);
  // The very same block comes back for the same request on the same stream (from empty
  // pools, so no other cached hole fits better).
  cuda::empty_cache();
  void* p;
  {
    Tensor t = empty({12345}, on_cuda());
    p = t.data_ptr();
  }
  Tensor again = empty({12345}, on_cuda());
  CHECK(again.data_ptr() == p);
}

TEST_CASE("cuda allocator: statistics follow allocations, peaks reset, empty_cache returns memory") {
  if (allocator_cache_off()) return;
  cuda::empty_cache();
  size_t base = cuda::memory_allocated();
  cuda::reset_peak_memory_stats();
  CHECK(cuda::max_memory_allocated() == base);
  {
    Tensor a = empty({1000}, on_cuda());  // 4000 bytes, rounded to 4096
    CHECK(cuda::memory_allocated() == base + 4096);
    Tensor b = empty({30 * kMiB}, on_cuda());  // 120 MiB
    CHECK(cuda::memory_allocated() == base + 4096 + 120 * kMiB);
    CHECK(cuda::memory_reserved() >= cuda::memory_allocated());
  }
  CHECK(cuda::memory_allocated() == base);
  CHECK(cuda::max_memory_allocated() == base + 4096 + 120 * kMiB);
  size_t reserved = cuda::memory_reserved();
  CHECK(cuda::max_memory_reserved() >= reserved);
  cuda::reset_peak_memory_stats();
  CHECK(cuda::max_memory_allocated() == base);
  cuda::empty_cache();
  CHECK(cuda::memory_reserved() + 120 * kMiB <= reserved);
  CHECK(cuda::memory_stats(0).active_blocks == cuda::memory_stats().active_blocks);
}

TEST_CASE("cuda allocator: an impossible request raises PyTorch's out-of-memory message") {
  size_t ooms = cuda::memory_stats().num_ooms;
  try {
    Tensor t = empty({int64_t{1} << 48}, on_cuda());  // 1 PiB
    FAIL("allocated 1 PiB");
  } catch (const Error& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("CUDA out of memory. Tried to allocate 1048576.00 GiB. GPU 0 has a total capacity of ",
                    0) == 0);
    CHECK(msg.find(" is free. Of the allocated memory ") != std::string::npos);
    CHECK(msg.find(" is reserved by ember but unallocated.") != std::string::npos);
  }
  CHECK(cuda::memory_stats().num_ooms == ooms + 1);
  Tensor fine = full({10}, 1.0, on_cuda());  // the allocator goes on working
  CHECK(values_sum(fine) == 10.0);
}

TEST_CASE("cuda allocator: memory used on a second stream is reused only after that stream is done") {
  if (allocator_cache_off()) return;
  cuda::synchronize();
  cuda::empty_cache();  // start from empty pools, so the blocks below are the only candidates
  cuda::CUDAStream side = cuda::getStreamFromPool();
  const int64_t n = 2 * kMiB;  // 8 MiB: the large pool
  Tensor x = full({n}, 3.0, on_cuda());
  void* p = x.data_ptr();
  Tensor result;
  {
    cuda::CUDAEvent x_ready;
    x_ready.record();
    x_ready.block(side);
    cuda::CUDAStreamGuard g(side);
    keep_stream_busy();
    result = x.clone();  // side reads x after the busy work
  }
  cuda::record_stream(x, side);
  x.reset();  // freed while `side` may still read it
  Tensor y = empty({n}, on_cuda());
  CHECK(y.data_ptr() != p);  // not handed out again yet
  side.synchronize();
  Tensor z = empty({n}, on_cuda());
  CHECK(z.data_ptr() == p);  // back once the side stream passed its event
  CHECK(values_sum(result) == 3.0 * n);
}

// ---- pinned memory and asynchronous copies ----------------------------------------------------

TEST_CASE("cuda pinned memory: pin_memory and is_pinned") {
  Tensor t = arange(1000, kFloat);
  CHECK_FALSE(t.is_pinned());
  Tensor p = t.pin_memory();
  CHECK(p.is_pinned());
  CHECK(p.is_cpu());
  CHECK(host_values(p) == host_values(t));
  CHECK(p.pin_memory().is_same(p));       // already pinned: itself
  CHECK(p.slice(0, 10, 20).is_pinned());  // views of pinned memory are pinned
  CHECK(cuda::host_memory_stats().allocated_bytes >= 4000);
  Tensor d = t.to(cuda_device());
  CHECK_FALSE(d.is_pinned());
  check_error([&] { d.pin_memory(); }, "cannot pin 'CUDAFloatType' only dense CPU tensors can be pinned");
}

TEST_CASE("cuda pinned memory: a non_blocking copy from pinned memory is asynchronous and keeps its block") {
  if (allocator_cache_off()) return;
  const int64_t n = 4 * kMiB;  // 16 MiB
  Tensor host = full({n}, 5.0).pin_memory();
  void* p = host.data_ptr();
  keep_stream_busy();  // the copy below queues behind this
  Tensor dev = host.to(cuda_device(), /*non_blocking=*/true);
  host.reset();  // freed while the copy may still be reading it
  Tensor other = empty({n}).pin_memory();
  CHECK(other.data_ptr() != p);  // not reused before the copy is done
  cuda::synchronize();
  Tensor later = empty({n}).pin_memory();
  CHECK(later.data_ptr() == p);
  CHECK(values_sum(dev) == 5.0 * n);
}

TEST_CASE("cuda pinned memory: a DataLoader with pin_memory yields pinned batches") {
  int64_t n = 8;
  auto ds = data::datasets::TensorDataset(arange(n, kFloat).view({n, 1}), arange(n, kLong))
                .map(data::transforms::Stack<>());
  auto loader = data::make_data_loader(std::move(ds), data::DataLoaderOptions(4).pin_memory(true).workers(2));
  int batches = 0;
  for (auto& batch : *loader) {
    CHECK(batch.data.is_pinned());
    CHECK(batch.target.is_pinned());
    Tensor on_device = batch.data.to(cuda_device(), /*non_blocking=*/true);
    CHECK(values_sum(on_device) == values_sum(batch.data));
    ++batches;
  }
  CHECK(batches == 2);
}
