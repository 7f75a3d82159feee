// The flags of core/backends.h, with PyTorch's defaults.
#include "ember/core/backends.h"

namespace ember::backends {

namespace cuda::matmul {
Flag allow_tf32(false);
}  // namespace cuda::matmul

namespace cudnn {
Flag enabled(true);
Flag benchmark(false);
Flag deterministic(false);
Flag allow_tf32(true);
}  // namespace cudnn

}  // namespace ember::backends
