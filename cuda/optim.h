// The fused optimizer steps on CUDA tensors (the CUDA side of optim/sgd.cpp, optim/adam.cpp
// and optim/adamw.cpp): each updates many parameters in few kernel launches (cuda/
// multi_tensor.h). Plain C++ declarations; the kernels are in cuda/optim.cu
// (cuda/no_cuda.cpp in a build without CUDA).
//
// Every list holds tensors of one CUDA device and one floating dtype (float32, float64,
// float16, bfloat16), contiguous, list k's tensor i of the shape of params[i]; the optimizer
// checks this (optim/fused_step.h) and creates the state tensors before the call. The
// arithmetic is the CPU step's, operation for operation, in opmath_t (float for the 16-bit
// types, which are rounded once per stored value) with the scalars the host computed in
// double, converted as the CPU converts them.
#pragma once

#include <cstdint>
#include <vector>

namespace ember {
class Tensor;
}

namespace ember::cuda {

/// The options of SGD's step (torch.optim.SGD's).
struct SGDStepArgs {
  double lr = 0;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

/// One SGD step: d = grad + weight_decay param; with momentum, buf = d on a parameter's
/// first step (first_step[i] != 0; the buffer's old contents are ignored) and
/// buf = momentum buf + (1 - dampening) d after, then d = nesterov ? d + momentum buf : buf;
/// finally param -= lr d. momentum_buffers is empty when momentum is 0.
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              const std::vector<Tensor>& momentum_buffers, const std::vector<uint8_t>& first_step,
              const SGDStepArgs& args);

/// The options of Adam's and AdamW's step shared by all parameters.
struct AdamStepArgs {
  double lr = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double decoupled_decay = 0;  // AdamW: param *= 1 - lr decoupled_decay first (when != 0)
  double l2 = 0;               // Adam: grad + l2 param (when != 0)
  bool amsgrad = false;
};

/// One Adam/AdamW step, optim::detail::adam_step's arithmetic: decay, then
/// m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g g, (amsgrad: vmax = max(vmax, v)),
/// param += -step_size[i] m / (sqrt(v or vmax) / bias_correction2_sqrt[i] + eps). The
/// per-parameter scalars come from the parameter's own step count. max_exp_avg_sqs is empty
/// unless amsgrad.
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step_size,
               const std::vector<double>& bias_correction2_sqrt, const AdamStepArgs& args);

}  // namespace ember::cuda
