// What the CUDA backend was built against and what this process has loaded: the CUDA runtime,
// cuBLAS, cuDNN and the driver, with the file each came from, and the device's limits. Plain
// C++ (no CUDA headers); the GPU check's probe prints both (tests/cuda/gpu_probe.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ember::cuda {

/// (what, value) pairs, in the order they are printed.
using InfoList = std::vector<std::pair<std::string, std::string>>;

/// The CUDA runtime, cuBLAS and cuDNN versions ember was compiled against; needs no GPU.
InfoList build_info();

/// The driver, runtime, cuBLAS and cuDNN versions this process uses, the shared libraries it
/// has mapped, and device `device`'s name, compute capability, multiprocessors, memory, L2
/// size and per-block shared-memory opt-in limit. Raises without a usable GPU.
InfoList runtime_info(int device = 0);

// The parts of the two lists above that live elsewhere. (Not in a namespace `detail`: inside
// ember::cuda that name would hide ember::detail from the code that includes this header.)

/// cuDNN's compile-time and loaded versions (cuda/runtime/cudnn_handle.cpp), "not built" without it.
std::string cudnn_built_version();
std::string cudnn_loaded_version();
/// The files of the libraries named `stem` (libcublas, libcudnn, ...) mapped into this
/// process, from /proc/self/maps, comma-separated; "" when none is.
std::string mapped_libraries(const std::string& stem);

}  // namespace ember::cuda
