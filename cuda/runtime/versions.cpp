// cuda/runtime/versions.h for a CUDA build: compile-time macros for what ember was built against, the
// runtime's and the libraries' own queries for what this process loaded.
#include "ember/cuda/runtime/versions.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <fstream>
#include <set>
#include <sstream>

#include "ember/cuda/runtime/cuda_check.h"

namespace ember::cuda {
namespace {

/// CUDA's version integers (major * 1000 + minor * 10) as "13.0".
std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cublas_loaded() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return "unknown (cublasGetProperty failed)";
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string mapped_libraries(const std::string& stem) {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> files;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const size_t base = path.rfind('/') + 1;
    if (path.compare(base, stem.size(), stem) == 0 && path.find(".so", base) != std::string::npos) files.insert(path);
  }
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

InfoList build_info() {
  return {{"built against CUDA runtime", cuda_version_text(CUDART_VERSION)},
          {"built against cuBLAS", std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
                                       std::to_string(CUBLAS_VER_PATCH)},
          {"built against cuDNN", cudnn_built_version()}};
}

InfoList runtime_info(int device) {
  int driver = 0, runtime = 0;
  EMBER_CUDA_CHECK(cudaDriverGetVersion(&driver));
  EMBER_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  cudaDeviceProp p{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  int smem_optin = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  size_t free_bytes = 0, total_bytes = 0;
  EMBER_CUDA_CHECK(cudaSetDevice(device));
  EMBER_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  InfoList out{{"driver supports CUDA", cuda_version_text(driver)},
               {"CUDA runtime (static, ember's own)", cuda_version_text(runtime)},
               {"cuBLAS loaded", cublas_loaded()},
               {"cuDNN loaded", cudnn_loaded_version()},
               {"device", std::to_string(device) + ": " + p.name},
               {"compute capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
               {"multiprocessors", std::to_string(p.multiProcessorCount)},
               {"memory", mib(total_bytes) + " (" + mib(free_bytes) + " free)"},
               {"L2 cache", mib(static_cast<size_t>(p.l2CacheSize))},
               {"shared memory per block (opt-in)", std::to_string(smem_optin) + " bytes"},
               {"shared memory per multiprocessor", std::to_string(p.sharedMemPerMultiprocessor) + " bytes"}};
  for (const char* stem : {"libcuda.", "libcublas.", "libcublasLt.", "libcudnn.", "libnccl."}) {
    std::string files = mapped_libraries(stem);
    out.push_back({std::string("mapped ") + stem + "so", files.empty() ? "(not loaded)" : files});
  }
  return out;
}

}  // namespace ember::cuda
