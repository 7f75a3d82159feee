// Deterministic mode: torch.use_deterministic_algorithms. When it is on, an op whose kernel
// could give different bits from run to run (a cuDNN algorithm that adds with atomics, a CUDA
// scatter whose repeated indices race) either takes a deterministic path or raises PyTorch's
// error naming the op; with warn_only it prints PyTorch's warning instead and runs anyway.
// (libtorch spells the switch at::globalContext().setDeterministicAlgorithms(b, warn_only).)
#pragma once

namespace ember {

/// Turns deterministic mode on or off for the whole process (any thread may call it, and the
/// ops that run after it see the new setting). warn_only: an op without a deterministic
/// implementation warns on stderr instead of raising.
void use_deterministic_algorithms(bool mode, bool warn_only = false);
/// Whether deterministic mode is on (torch.are_deterministic_algorithms_enabled).
bool are_deterministic_algorithms_enabled();
/// Whether deterministic mode only warns (torch.is_deterministic_algorithms_warn_only_enabled).
bool is_deterministic_algorithms_warn_only_enabled();

namespace detail {
/// Called by an op that has no deterministic implementation on the path it is about to take,
/// before it runs: does nothing when deterministic mode is off; otherwise raises (or, with
/// warn_only, warns) "<op> does not have a deterministic implementation, but you set
/// 'torch.use_deterministic_algorithms(True)'. ..." as PyTorch's alertNotDeterministic does.
void alert_not_deterministic(const char* op);
}  // namespace detail

}  // namespace ember
