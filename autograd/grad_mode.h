// Grad mode: whether ops record autograd history on this thread (NoGradGuard, InferenceMode),
// and anomaly mode, which names the op whose backward produced a NaN.
#pragma once

namespace ember {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Turns recording on or off for a scope, restoring the previous state after.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

/// No autograd recording in this scope (torch::NoGradGuard).
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

/// As NoGradGuard; libtorch additionally marks tensors made inside as inference tensors,
/// which ember does not distinguish.
class InferenceMode : public AutoGradMode {
 public:
  explicit InferenceMode(bool enabled = true) : AutoGradMode(!enabled) {}
};

namespace autograd {
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
/// Enables anomaly detection for a scope (torch.autograd.detect_anomaly()).
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};
}  // namespace autograd

}  // namespace ember
