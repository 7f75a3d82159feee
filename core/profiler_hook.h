// The profiler's hook in run_op (core/op.h): while no profile runs, an op pays one relaxed
// atomic load and a not-taken branch; the recording lives out of line in core/profiler.cpp.
// The user-facing API (Profile, RecordFunction, key_averages, chrome traces) is in
// core/profiler.h.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ember/core/tensor.h"

namespace ember::profiler {
namespace detail {

/// True while a Profile is running (any thread's ops are recorded).
extern std::atomic<bool> g_enabled;

/// What an OpRange wraps; it decides the recorded name ("aten::add", "aten::add_").
enum class OpKind : uint8_t { kOp, kInplace, kView };

/// Opens a range for an op on this thread; returns the token end_op needs (0: not recorded).
uint64_t begin_op(const char* name, const Tensor* inputs, size_t n, OpKind kind) noexcept;
/// Closes the innermost range this thread opened under `token`'s profile.
void end_op(uint64_t token) noexcept;

}  // namespace detail

/// Whether a profile is running: the one test every op makes.
inline bool is_enabled() noexcept { return detail::g_enabled.load(std::memory_order_relaxed); }

/// The range run_op opens around one op (allocation, kernel, autograd recording).
class OpRange {
 public:
  OpRange(const char* name, const TensorList& inputs, detail::OpKind kind = detail::OpKind::kOp) noexcept {
    if (is_enabled()) [[unlikely]] token_ = detail::begin_op(name, inputs.data(), inputs.size(), kind);
  }
  OpRange(const char* name, const Tensor& input, detail::OpKind kind) noexcept {
    if (is_enabled()) [[unlikely]] token_ = detail::begin_op(name, &input, 1, kind);
  }
  ~OpRange() {
    if (token_ != 0) [[unlikely]] detail::end_op(token_);
  }
  OpRange(const OpRange&) = delete;
  OpRange& operator=(const OpRange&) = delete;

 private:
  uint64_t token_ = 0;
};

}  // namespace ember::profiler
