// The process-wide deterministic-mode switch and PyTorch's alert; see core/deterministic.h.
#include "ember/core/deterministic.h"

#include <atomic>
#include <iostream>
#include <string>

#include "ember/core/error.h"

namespace ember {
namespace {

// Two flags, read independently: an op checking the mode while another thread flips it sees
// either the old or the new setting of each, and both are only advisory for ops already running.
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_warn_only{false};

std::string not_deterministic_message(const char* op) {
  return detail::str_cat(
      op,
      " does not have a deterministic implementation, but you set "
      "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
      "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
      "application.");
}

}  // namespace

void use_deterministic_algorithms(bool mode, bool warn_only) {
  g_warn_only.store(warn_only, std::memory_order_relaxed);
  g_enabled.store(mode, std::memory_order_relaxed);
}

bool are_deterministic_algorithms_enabled() { return g_enabled.load(std::memory_order_relaxed); }

bool is_deterministic_algorithms_warn_only_enabled() { return g_warn_only.load(std::memory_order_relaxed); }

namespace detail {

void alert_not_deterministic(const char* op) {
  if (!are_deterministic_algorithms_enabled()) return;
  std::string msg = not_deterministic_message(op);
  if (!is_deterministic_algorithms_warn_only_enabled()) throw_error(msg);
  std::cerr << "UserWarning: " << msg << "\n";  // as PyTorch's TORCH_WARN reaches Python users
}

}  // namespace detail
}  // namespace ember
