// The CUDA entry points of a build without CUDA: every one says so.
#include "ember/core/error.h"
#include "ember/cuda/cuda.h"

namespace ember::cuda {
namespace {
[[noreturn]] void no_cuda() { detail::throw_error("ember was built without CUDA"); }
}  // namespace

bool is_available() { return false; }
int device_count() { return 0; }
Allocator* allocator(int) { no_cuda(); }
void copy(const Tensor&, const Tensor&) { no_cuda(); }
void fill(const Tensor&, const Scalar&) { no_cuda(); }

}  // namespace ember::cuda
