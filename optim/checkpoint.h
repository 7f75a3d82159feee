// Training checkpoints: model, optimizer, LR scheduler, the CPU random generator and progress
// counters in ONE safetensors file, written atomically, so a run resumes exactly where it
// stopped (same parameters bit for bit, same dropout masks) and a crash mid-save keeps the
// previous checkpoint; with mixed precision also the GradScaler. Also libtorch's
// ember::save(optimizer, path) / ember::load(optimizer, path).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <type_traits>

#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"
#include "ember/core/arg.h"
#include "ember/nn/module.h"
#include "ember/optim/optimizer.h"

namespace ember::amp {
class GradScaler;
}

namespace ember::optim {

// Note [Checkpoint file layout]
// A checkpoint is a safetensors file (readable with safetensors.torch.load_file) holding
//   "model.<key>"      the model's state_dict() (PyTorch's keys, e.g. "model.fc1.weight")
//   "optimizer.<key>"  Optimizer::state_dict() (Note [Optimizer state dict])
//   "scheduler.<key>"  the scheduler's state_dict(), when one was saved
//   "scaler.<key>"     the amp::GradScaler's state_dict(), when one was saved (none for a
//                      disabled scaler, whose state_dict() is empty)
//   "rng.cpu"          the default CPU generator's state (uint8, Generator::get_state())
//   "rng.cuda.<d>"     each visible CUDA device's default generator state, likewise (none in
//                      a CPU-only run; on loading, devices this machine lacks are skipped)
// and metadata strings "ember.checkpoint" = "1", "ember.epoch", "ember.step",
// "ember.best_metric" (shortest round-trip decimal, "nan" when unset), "ember.has_scheduler",
// "ember.has_scaler" (absent in files saved before scalers were: read as "0"), plus the
// caller's own metadata (keys must not start with "ember.").

/// Progress saved alongside the state: what a training loop needs to resume. Options-style
/// (`CheckpointInfo().epoch(3).best_metric(0.91)`; read with `info.epoch()`).
struct CheckpointInfo {
  using Metadata = std::map<std::string, std::string>;
  /// Epochs completed.
  EMBER_ARG(int64_t, epoch) = 0;
  /// Optimizer steps taken.
  EMBER_ARG(int64_t, step) = 0;
  /// The best validation metric so far (NaN: none yet).
  EMBER_ARG(double, best_metric) = std::numeric_limits<double>::quiet_NaN();
  /// Your own strings (keys must not start with "ember.").
  EMBER_ARG(Metadata, metadata);
};

/// Refers to any scheduler with state_dict()/load_state_dict(): every LRScheduler and
/// ReduceLROnPlateau. Empty by default (no scheduler). Keeps a reference, not a copy.
class SchedulerRef {
 public:
  using Dict = OrderedDict<std::string, Tensor>;
  SchedulerRef() = default;
  SchedulerRef(std::nullptr_t) {}  // NOLINT: no scheduler
  // A GradScaler has the same two methods but is not a scheduler: it has its own argument
  // (save_checkpoint(path, model, optimizer, nullptr, scaler)).
  template <class S>
  requires(!std::same_as<std::remove_cv_t<S>, SchedulerRef>) &&
          (!std::same_as<std::remove_cv_t<S>, amp::GradScaler>) && requires(S& s, const Dict& d) {
    { s.state_dict() } -> std::convertible_to<Dict>;
    s.load_state_dict(d);
  }
  SchedulerRef(S& s)  // NOLINT: implicit, so a scheduler passes as itself
      : state_dict_([&s] { return Dict(s.state_dict()); }),
        load_state_dict_([&s](const Dict& d) { s.load_state_dict(d); }) {}
  template <class S>
  SchedulerRef(S* s) : SchedulerRef(s ? SchedulerRef(*s) : SchedulerRef()) {}  // NOLINT

  explicit operator bool() const { return static_cast<bool>(state_dict_); }
  Dict state_dict() const { return state_dict_(); }
  void load_state_dict(const Dict& d) const { load_state_dict_(d); }

 private:
  std::function<Dict()> state_dict_;
  std::function<void(const Dict&)> load_state_dict_;
};

/// Writes model, optimizer, the CPU RNG and `info` to `path` atomically (see the Note).
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     const CheckpointInfo& info = {});
/// As above, also saving the scheduler's state.
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     SchedulerRef scheduler, const CheckpointInfo& info = {});

/// As above, also saving the GradScaler's state (pass nullptr as the scheduler for none).
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     SchedulerRef scheduler, const amp::GradScaler& scaler, const CheckpointInfo& info = {});

/// Restores model (strictly), optimizer, the CPU RNG and, when given, the scheduler, from a
/// checkpoint; returns its CheckpointInfo. The objects must be built as the saved ones were
/// (same architecture, optimizer type, parameter groups and scheduler type). A checkpoint
/// saved with a scheduler may be loaded without one (its state is ignored); asking for a
/// scheduler the file lacks is an error. All or nothing: the whole file is read and checked
/// (the model's keys and shapes included) before anything changes, and if the optimizer,
/// scheduler, scaler or RNG rejects its state (built differently) the ones already restored
/// get their previous state back before the error propagates.
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                               SchedulerRef scheduler = {});
/// As above, also restoring the GradScaler (after the scheduler, before the RNG); the file
/// must have been saved with one. A checkpoint saved with a scaler loads without one too.
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                               SchedulerRef scheduler, amp::GradScaler& scaler);
/// Restores only the model's weights from a checkpoint (e.g. for evaluation); a mismatch
/// (missing or unexpected keys when strict, any shape) raises with the model unchanged.
CheckpointInfo load_checkpoint_model(const std::string& path, nn::Module& model, bool strict = true);
/// Reads only a checkpoint's CheckpointInfo.
CheckpointInfo load_checkpoint_info(const std::string& path);

}  // namespace ember::optim

namespace ember {
/// libtorch's torch::save(optimizer, path): the optimizer's state_dict() as safetensors.
void save(const optim::Optimizer& optimizer, const std::string& path);
/// libtorch's torch::load(optimizer, path).
void load(optim::Optimizer& optimizer, const std::string& path);
}  // namespace ember
