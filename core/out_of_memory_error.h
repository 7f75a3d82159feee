// ember::OutOfMemoryError: what a device allocation raises when memory runs out even after
// the caching allocator has given its cache back (PyTorch's torch.OutOfMemoryError /
// c10::OutOfMemoryError), so a program can catch it by type and react, as the Fashion-MNIST
// trainer does by halving its batch. The message is PyTorch's: "CUDA out of memory. Tried to
// allocate 2.00 GiB. GPU 0 has a total capacity of ...".
#pragma once

#include "ember/core/error.h"

namespace ember {

/// An ember::Error (code that catches those still sees it) that means "out of device memory".
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace ember
