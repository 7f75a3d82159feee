// The Fashion-MNIST trainer's out-of-memory fallback (examples/oom_retry.h) with an injected
// failure: a fake step that runs out of memory above a given batch size. The batch halves
// until the step fits, the cache is emptied once per retry, each retry is announced in the
// trainer's words, later steps keep the smaller size, other errors pass through untouched,
// and running out at batch size 1 stops with a clear error. Also: the pieces a batch is cut
// into, ember::OutOfMemoryError's place in the error hierarchy, and that the CUDA caching
// allocator's bookkeeping (cuda/runtime/block_pool.h, driven by a full fake device) raises it.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/core/out_of_memory_error.h"
#include "ember/cuda/runtime/block_pool.h"
#include "ember/examples/oom_retry.h"

namespace {

/// A training step that fits in "memory" only with at most `fits` examples at once; it
/// records the batch sizes it was run with and returns the size that worked.
struct FakeStep {
  int64_t fits;
  std::vector<int64_t> tried;
  int64_t operator()(int64_t batch_size) {
    tried.push_back(batch_size);
    if (batch_size > fits)
      throw ember::OutOfMemoryError(
          "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
          "80.00 GiB of which 2.00 MiB is free.");
    return batch_size;
  }
};

/// A device with no free memory at all.
class FullDevice final : public ember::cuda::MemoryBackend {
 public:
  void* malloc(size_t) override { return nullptr; }
  void free(void*) override {}
  Event record_event(ember::cuda::CUDAStream) override { return nullptr; }
  bool event_done(Event) override { return true; }
  void wait_event(Event) override {}
  void release_event(Event) override {}
  MemInfo mem_info() override { return {0, size_t{1} << 30}; }
};

}  // namespace

TEST_CASE("test_oom_retry: a step that fits runs once, without a message or an emptied cache") {
  int64_t batch = 64;
  FakeStep step{64, {}};
  int emptied = 0;
  std::ostringstream log;
  CHECK(trainer::run_with_oom_retry(
            batch, step, [&] { ++emptied; }, log) == 64);
  CHECK(step.tried == std::vector<int64_t>{64});
  CHECK(batch == 64);
  CHECK(emptied == 0);
  CHECK(log.str().empty());
}

TEST_CASE("test_oom_retry: out of memory halves the batch, empties the cache, says so and retries the step") {
  int64_t batch = 64;
  FakeStep step{20, {}};
  int emptied = 0;
  std::ostringstream log;
  CHECK(trainer::run_with_oom_retry(
            batch, step, [&] { ++emptied; }, log) == 16);
  CHECK(step.tried == std::vector<int64_t>{64, 32, 16});
  CHECK(batch == 16);
  CHECK(emptied == 2);
  CHECK(log.str() ==
        "CUDA out of memory at batch size 64; retrying with 32\n"
        "CUDA out of memory at batch size 32; retrying with 16\n");
  // The next step starts from the size that worked.
  FakeStep next{20, {}};
  CHECK(trainer::run_with_oom_retry(
            batch, next, [&] { ++emptied; }, log) == 16);
  CHECK(next.tried == std::vector<int64_t>{16});
}

TEST_CASE(
    "test_oom_retry: odd sizes round down, and out of memory at batch size 1 stops with a clear error") {
  int64_t batch = 5;
  FakeStep step{0, {}};
  int emptied = 0;
  std::ostringstream log;
  try {
    trainer::run_with_oom_retry(
        batch, step, [&] { ++emptied; }, log);
    FAIL("no error at batch size 1");
  } catch (const ember::OutOfMemoryError&) {
    FAIL("the allocator's error escaped instead of the trainer's");
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    CHECK(what.find("CUDA out of memory at batch size 1; cannot retry with a smaller batch") == 0);
    CHECK(what.find("Tried to allocate 20.00 MiB") != std::string::npos);
  }
  CHECK(step.tried == std::vector<int64_t>{5, 2, 1});
  CHECK(emptied == 2);
  CHECK(log.str() ==
        "CUDA out of memory at batch size 5; retrying with 2\n"
        "CUDA out of memory at batch size 2; retrying with 1\n");
}

TEST_CASE("test_oom_retry: other errors are not retried") {
  int64_t batch = 64;
  int calls = 0, emptied = 0;
  std::ostringstream log;
  auto failing = [&](int64_t) -> int {
    ++calls;
    throw ember::Error("Expected all tensors to be on the same device");
  };
  CHECK_THROWS_WITH_AS(trainer::run_with_oom_retry(
                           batch, failing, [&] { ++emptied; }, log),
                       "Expected all tensors to be on the same device", ember::Error);
  CHECK(calls == 1);
  CHECK(batch == 64);
  CHECK(emptied == 0);
  CHECK(log.str().empty());
}

TEST_CASE(
    "test_oom_retry: OutOfMemoryError is an ember::Error, as torch.OutOfMemoryError is a RuntimeError") {
  try {
    throw ember::OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.");
  } catch (const ember::Error& e) {
    CHECK(std::string(e.what()) == "CUDA out of memory. Tried to allocate 2.00 GiB.");
  }
}

TEST_CASE("test_oom_retry: a batch is cut into pieces of at most the batch size, in order") {
  using Pieces = std::vector<std::pair<int64_t, int64_t>>;
  CHECK(trainer::micro_batches(64, 64) == Pieces{{0, 64}});
  CHECK(trainer::micro_batches(64, 128) == Pieces{{0, 64}});
  CHECK(trainer::micro_batches(64, 32) == Pieces{{0, 32}, {32, 32}});
  CHECK(trainer::micro_batches(10, 4) == Pieces{{0, 4}, {4, 4}, {8, 2}});
  CHECK(trainer::micro_batches(3, 1) == Pieces{{0, 1}, {1, 1}, {2, 1}});
  CHECK(trainer::micro_batches(0, 4).empty());
}

TEST_CASE("test_oom_retry: the CUDA caching allocator's out-of-memory error is an OutOfMemoryError") {
  FullDevice device;
  ember::cuda::BlockPool pool(device, 0);
  CHECK_THROWS_AS(pool.allocate(4096, ember::cuda::CUDAStream(nullptr, 0)), ember::OutOfMemoryError);
  ember::cuda::BlockPool uncached(device, 0, /*caching=*/false);
  CHECK_THROWS_AS(uncached.allocate(4096, ember::cuda::CUDAStream(nullptr, 0)), ember::OutOfMemoryError);
}
