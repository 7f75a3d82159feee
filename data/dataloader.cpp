// The DataLoader's non-template pieces: worker error messages, the pin_memory decision and
// warning, and the timeout error.
#include "ember/data/dataloader.h"

#include <atomic>
#include <iostream>
#include <sstream>

#include "ember/cuda/cuda.h"

namespace ember::data::detail {

std::string loader_error(int worker, const std::exception& e, const std::optional<size_t>& sample,
                         const std::vector<size_t>& indices) {
  // PyTorch: "Caught ValueError in DataLoader worker process 0." plus the original error; the
  // sample index is ember's addition (its traceback would show it).
  std::ostringstream s;
  s << "Caught " << (dynamic_cast<const Error*>(&e) ? "Error" : "exception") << " in DataLoader ";
  if (worker < 0)
    s << "main process";
  else
    s << "worker process " << worker;
  if (sample) {
    s << " while loading sample " << *sample;
  } else if (!indices.empty()) {
    s << " while loading the batch of samples " << indices.front() << ".." << indices.back();
  }
  s << ": " << e.what();
  return s.str();
}

namespace {
std::atomic<bool> g_pin_memory_warned{false};
}

bool check_pin_memory(bool pin_memory) {
  if (!pin_memory) return false;
  if (cuda::is_available()) return true;
  if (!g_pin_memory_warned.exchange(true))
    std::cerr << "UserWarning: 'pin_memory' argument is set as true but no accelerator is found, then device "
                 "pinned memory won't be used.\n";
  return false;
}

void reset_pin_memory_warning() { g_pin_memory_warned = false; }

void throw_timeout(std::chrono::milliseconds timeout) {
  std::ostringstream s;
  s << "DataLoader timed out after " << static_cast<double>(timeout.count()) / 1000.0 << " seconds";
  ::ember::detail::throw_error(s.str());
}

}  // namespace ember::data::detail
