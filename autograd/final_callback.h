// queue_callback: work to run when the backward pass now running has finished
// (PyTorch's Variable._execution_engine.queue_callback). DistributedDataParallel waits for
// its last gradient allreduces this way, after the engine has accumulated every gradient
// and before backward() returns. Kept out of engine.h so that adding it rebuilt nothing.
#pragma once

#include <functional>

namespace ember::autograd {

/// Runs `callback` on this thread after the current backward pass has run its last node,
/// before backward()/grad() returns; callbacks run in the order queued, and one may queue
/// another. Outside a backward pass raises PyTorch's "Final callbacks can only be installed
/// during backward pass.". A pass that raises drops its callbacks.
void queue_callback(std::function<void()> callback);

}  // namespace ember::autograd
