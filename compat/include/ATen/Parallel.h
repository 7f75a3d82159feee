// <ATen/Parallel.h> for ember: at::parallel_for(begin, end, grain_size, f) over ember's OpenMP
// loop (ember::parallel_for takes a count instead of a range), at::get_num_threads and
// at::set_num_threads (ember's own).
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>

#include <ember/compat/namespaces.h>
#include <ember/core/tensor_iter.h>

namespace ember {

/// at::parallel_for: f(chunk_begin, chunk_end) over [begin, end) in chunks of at least
/// grain_size, on ember's threads. As in libtorch, an exception thrown by f is rethrown here
/// (the first one, after every chunk has finished).
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  if (begin >= end) return;
  std::exception_ptr error;
  std::mutex error_mutex;
  parallel_for(end - begin, grain_size, [&](int64_t b, int64_t e) {
    try {
      f(begin + b, begin + e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
}

}  // namespace ember
