// The GPU check's first stage (scripts/gpu_check.py, "probe"): in a few seconds, what this
// process runs on — driver, CUDA runtime, cuBLAS, cuDNN and NCCL as loaded, beside what ember
// was built against; the device's multiprocessors, memory and shared-memory limit — and one
// call of each kind of GPU code ember has: its own elementwise kernel, a cuBLAS GEMM and a
// cuDNN convolution, each checked against the CPU.
//
//   ember_gpu_probe                  everything; exit 0 when the three calls agree with the CPU,
//                                    1 when one does not, 77 without a GPU
//   ember_gpu_probe --built-against  only the build's versions (no GPU needed: the bundle's manifest)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "ember/cuda/runtime/versions.h"
#include "ember/ember.h"
#ifdef EMBER_PROBE_WITH_DIST
#include "ember/dist/process_group_nccl.h"
#endif

using namespace ember;

namespace {

void print(const cuda::InfoList& info) {
  for (const auto& [what, value] : info) std::printf("%-36s %s\n", (what + ":").c_str(), value.c_str());
}

/// Runs `gpu` on CUDA and `cpu` on the CPU, compares, prints one line; false on a mismatch or error.
bool check(const char* what, const std::function<Tensor()>& gpu, const std::function<Tensor()>& cpu, double tol) {
  try {
    const auto t0 = std::chrono::steady_clock::now();
    Tensor got = gpu();
    cuda::synchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Tensor want = cpu();
    const double err = (got.cpu().to(kDouble) - want.to(kDouble)).abs().max().item<double>();
    const double scale = want.to(kDouble).abs().max().item<double>();
    const bool ok = err <= tol * (1.0 + scale);
    std::printf("probe %-12s %s  max |gpu - cpu| = %.3g (scale %.3g), first call %.1f ms\n", what,
                ok ? "ok  " : "FAIL", err, scale, ms);
    return ok;
  } catch (const std::exception& e) {
    std::printf("probe %-12s FAIL  %s\n", what, e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  print(cuda::build_info());
  if (argc > 1 && std::strcmp(argv[1], "--built-against") == 0) return 0;
  if (!cuda::is_available()) {
    std::printf("ember_gpu_probe: no CUDA device is available\n");
    return 77;
  }
  print(cuda::runtime_info(0));
#ifdef EMBER_PROBE_WITH_DIST
  const std::string nccl = dist::ProcessGroupNCCL::version();
  std::printf("%-36s %s\n", "NCCL loaded:", nccl.empty() ? "not built" : nccl.c_str());
#endif
  const Device gpu(kCUDA, 0);
  manual_seed(0);
  const Tensor x = randn({1 << 20}), a = randn({512, 768}), b = randn({768, 256});
  const Tensor img = randn({8, 3, 32, 32}), w = randn({16, 3, 3, 3});
  bool ok = true;
  ok &= check("elementwise", [&] { return x.to(gpu) * 2.5 + 1.0; }, [&] { return x * 2.5 + 1.0; }, 1e-6);
  // TF32 off (ember's default, as PyTorch's for matmul): float32 products to ~1e-5.
  ok &= check("cuBLAS GEMM", [&] { return matmul(a.to(gpu), b.to(gpu)); }, [&] { return matmul(a, b); }, 1e-4);
  ok &= check("cuDNN conv", [&] { return conv2d(img.to(gpu), w.to(gpu), {}, 1, 1); },
              [&] { return conv2d(img, w, {}, 1, 1); }, 1e-3);
  std::printf("probe: %s\n", ok ? "all three calls agree with the CPU" : "a call FAILED (above)");
  return ok ? 0 : 1;
}
