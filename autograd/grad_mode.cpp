// Thread-local grad mode and process-wide anomaly mode.
#include "ember/autograd/grad_mode.h"

#include <atomic>

namespace ember {
namespace {
// initial-exec: read with one TLS-relative load instead of a __tls_get_addr call; every op
// checks it (per-op overhead). libember is linked, not dlopen()ed late, so static TLS holds it.
__attribute__((tls_model("initial-exec"))) thread_local bool g_grad_enabled = true;
std::atomic<bool> g_anomaly{false};
}  // namespace

bool GradMode::is_enabled() { return g_grad_enabled; }
void GradMode::set_enabled(bool enabled) { g_grad_enabled = enabled; }

namespace autograd {
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { g_anomaly.store(enabled); }
}  // namespace autograd
}  // namespace ember
