// How the Fashion-MNIST trainer survives a CUDA out-of-memory error inside a training step:
// it halves its batch size, empties the CUDA cache, says so on stderr and runs the step
// again. "Batch size" here is how many examples go through the network at once: the
// loader's batch stays whole and is cut into pieces of that size whose gradients add up
// (each piece's mean loss weighted by its share of the batch), so one optimizer step still
// covers the whole batch and the learning-rate schedule, counted in steps, stays as
// planned. Header-only (ember's error types and the standard library), so the retry logic
// is tested on the CPU with an injected failure (tests/optim/test_oom_retry.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ember/ember.h>

namespace trainer {

/// The pieces [start, start + length) that cut a batch of n examples into runs of at most
/// `size` (the last one shorter).
inline std::vector<std::pair<int64_t, int64_t>> micro_batches(int64_t n, int64_t size) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t start = 0; start < n; start += size) out.emplace_back(start, std::min(size, n - start));
  return out;
}

/// Runs step(batch_size) and returns its result. When it raises ember::OutOfMemoryError,
/// halves batch_size (which the caller keeps, so later steps start from the size that
/// worked), calls empty_cache, writes "CUDA out of memory at batch size 64; retrying with 32"
/// to `log` and runs the step again from its start (the step must redo all of its work: it
/// zeroes the gradients before its first piece). Out of memory at batch size 1 ends the
/// retries with a std::runtime_error that says so, with the allocator's message.
template <class Step>
auto run_with_oom_retry(int64_t& batch_size, Step&& step, const std::function<void()>& empty_cache,
                        std::ostream& log = std::cerr) {
  for (;;) {
    try {
      return step(batch_size);
    } catch (const ember::OutOfMemoryError& e) {
      if (batch_size <= 1)
        throw std::runtime_error("CUDA out of memory at batch size 1; cannot retry with a smaller batch (" +
                                 std::string(e.what()) + ")");
      const int64_t smaller = batch_size / 2;
      log << "CUDA out of memory at batch size " << batch_size << "; retrying with " << smaller << std::endl;
      batch_size = smaller;
      empty_cache();
    }
  }
}

}  // namespace trainer
