// Thread-local grad mode and process-wide anomaly mode.
#include "ember/autograd/grad_mode.h"

#include <atomic>

namespace ember {
namespace {
thread_local bool g_grad_enabled = true;
std::atomic<bool> g_anomaly{false};
}  // namespace

bool GradMode::is_enabled() { return g_grad_enabled; }
void GradMode::set_enabled(bool enabled) { g_grad_enabled = enabled; }

namespace autograd {
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { g_anomaly.store(enabled); }
}  // namespace autograd
}  // namespace ember
