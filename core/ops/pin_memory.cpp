// pin_memory / is_pinned: CPU tensors in page-locked memory, which CUDA copies can read and
// write asynchronously on a stream (Tensor::to(kCUDA, /*non_blocking=*/true)). The memory
// comes from the pinned caching allocator (cuda/pinned_allocator.h).
#include "ember/core/shape.h"
#include "ember/core/tensor.h"
#include "ember/cuda/device.h"
#include "ember/cuda/pinned_allocator.h"

namespace ember {

bool Tensor::is_pinned(std::optional<Device>) const {
  return is_cpu() && cuda::is_pinned_ptr(impl_->storage()->data());
}

Tensor Tensor::pin_memory(std::optional<Device>) const {
  // libtorch's Tensor::toString() names the type, e.g. "CUDAFloatType".
  EMBER_CHECK(is_cpu(), "cannot pin '", device().is_cuda() ? "CUDA" : "", scalar_type_name(dtype()),
              "Type' only dense CPU tensors can be pinned");
  if (is_pinned()) return *this;
  EMBER_CHECK(cuda::is_available(), "Cannot access accelerator device when none is available.");
  // Row-major (PyTorch keeps a dense tensor's strides; the values are the same).
  auto storage = Storage::make(nbytes(), cuda::pinned_allocator());
  Tensor out(
      intrusive_ptr<TensorImpl>::make(std::move(storage), dtype(), sizes(), contiguous_strides(sizes()), 0));
  out.copy_(*this);  // records the copy for autograd when this tensor requires grad
  return out;
}

}  // namespace ember
