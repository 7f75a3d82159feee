// Layers as modules: convolutions with their options (stride, padding modes, groups,
// dilation, transposed), pooling and activation modules, Softmax/LogSoftmax, Bilinear, the
// loss modules with their options, the deterministic nn::init functions and nn::utils'
// gradient clipping and parameter-vector helpers. Weights come from sin(arange).
#include "compat.h"

namespace nn = torch::nn;
using compat::show;
using compat::show_int;
using compat::show_ints;

// Deterministic values of a given shape: scale * sin(0.7 * i + phase).
torch::Tensor wave(torch::IntArrayRef sizes, double phase, double scale = 0.5) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return (torch::sin(torch::arange(n, torch::kFloat) * 0.7 + phase) * scale).reshape(sizes);
}

void set_parameters(nn::Module& module, double phase = 0.5) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    p.copy_(wave(p.sizes(), phase));
    phase += 1.0;
  }
}

void convolutions() {
  auto x = wave({2, 2, 5, 5}, 0.1, 1.0);
  nn::Conv2d strided(nn::Conv2dOptions(2, 3, 3).stride(2).padding(1));
  set_parameters(*strided);
  show("conv2d_strided", strided(x));
  nn::Conv2d rect(nn::Conv2dOptions(2, 2, {2, 3}).stride({1, 2}).bias(false));
  set_parameters(*rect);
  show_ints("conv2d_rect_weight_shape", rect->weight.sizes());
  show("conv2d_rect", rect(x));
  nn::Conv2d grouped(nn::Conv2dOptions(2, 4, 3).groups(2).dilation(2));
  set_parameters(*grouped);
  show_ints("conv2d_grouped_weight_shape", grouped->weight.sizes());
  show("conv2d_grouped", grouped(x));
  nn::Conv2d same(nn::Conv2dOptions(2, 2, 3).padding(torch::kSame));
  set_parameters(*same);
  show("conv2d_same", same(x));
  nn::Conv2d reflect(nn::Conv2dOptions(2, 2, 3).padding(1).padding_mode(torch::kReflect));
  set_parameters(*reflect);
  show("conv2d_reflect", reflect(x));
  nn::Conv2d circular(nn::Conv2dOptions(2, 1, 3).padding(1).padding_mode(torch::kCircular));
  set_parameters(*circular);
  show("conv2d_circular", circular(x));

  nn::Conv2d shorthand(2, 1, 2);
  set_parameters(*shorthand);
  show("conv2d_shorthand", shorthand(x));
  nn::Conv1d conv1d(nn::Conv1dOptions(2, 3, 3).stride(2).padding(1));
  set_parameters(*conv1d);
  auto x1 = wave({2, 2, 7}, 0.6, 1.0);
  show("conv1d", conv1d(x1));

  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(2, 1, 3).stride(2).padding(1).output_padding(1));
  set_parameters(*up);
  show_ints("conv_transpose2d_weight_shape", up->weight.sizes());
  show("conv_transpose2d", up(x));

  // Gradients through a conv stack.
  auto leaf = x.detach().requires_grad_(true);
  auto y = grouped(strided(leaf).relu().repeat({1, 1, 2, 2})[0].unsqueeze(0).narrow(1, 0, 2));
  y.pow(2).sum().backward();
  show("conv_input_grad", leaf.grad());
  show("conv_strided_weight_grad", strided->weight.grad());
  show("conv_strided_bias_grad", strided->bias.grad());
  show("conv_grouped_weight_grad", grouped->weight.grad());
}

void pooling_and_activations() {
  auto x = wave({1, 2, 4, 6}, 0.3, 1.0);
  show("max_pool2d_module", nn::MaxPool2d(nn::MaxPool2dOptions({2, 3}))(x));
  show("max_pool2d_ceil", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).ceil_mode(true))(x));
  show("avg_pool2d_module", nn::AvgPool2d(nn::AvgPool2dOptions(2).padding(1).count_include_pad(false))(x));
  show("adaptive_avg_pool2d_module", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({3, 4}))(x));
  show("adaptive_avg_pool2d_global", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1))(x));
  show("adaptive_max_pool2d_module", nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions({2, 4}))(x));
  // libtorch's shorthand constructors: the kernel (or output) size alone.
  show("max_pool2d_shorthand", nn::MaxPool2d(2)(x));
  show("avg_pool2d_shorthand", nn::AvgPool2d(2)(x));
  show("adaptive_avg_pool2d_shorthand", nn::AdaptiveAvgPool2d(3)(x));
  show("adaptive_max_pool2d_shorthand", nn::AdaptiveMaxPool2d(2)(x));
  auto x1 = x.flatten(2);
  show("max_pool1d_shorthand", nn::MaxPool1d(3)(x1));
  show("avg_pool1d_shorthand", nn::AvgPool1d(5)(x1));
  show("adaptive_avg_pool1d_shorthand", nn::AdaptiveAvgPool1d(7)(x1));
  show("max_pool1d_module", nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2).padding(1))(x1));
  show("avg_pool1d_module", nn::AvgPool1d(nn::AvgPool1dOptions(4))(x1));
  show("adaptive_avg_pool1d_module", nn::AdaptiveAvgPool1d(nn::AdaptiveAvgPool1dOptions(5))(x1));

  auto a = wave({2, 5}, 0.2, 2.0);
  show("relu_module", nn::ReLU()(a));
  show("leaky_relu_module", nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.3))(a));
  show("elu_module", nn::ELU(nn::ELUOptions().alpha(2.0))(a));
  show("gelu_module", nn::GELU()(a));
  show("gelu_tanh_module", nn::GELU(nn::GELUOptions().approximate("tanh"))(a));
  show("silu_module", nn::SiLU()(a));
  show("sigmoid_module", nn::Sigmoid()(a));
  show("tanh_module", nn::Tanh()(a));
  show("softmax_module", nn::Softmax(1)(a));
  show("softmax_module_dim0", nn::Softmax(nn::SoftmaxOptions(0))(a));
  show("log_softmax_module", nn::LogSoftmax(1)(a));

  nn::Bilinear bilinear(2, 3, 4);
  set_parameters(*bilinear);
  show_ints("bilinear_weight_shape", bilinear->weight.sizes());
  show("bilinear", bilinear(wave({2, 2}, 0.0, 1.0), wave({2, 3}, 1.0, 1.0)));
}

void losses() {
  auto logits = wave({4, 3}, 0.4, 2.0).requires_grad_(true);
  auto labels = torch::tensor({2, 0, 1, 2}, torch::kLong);
  auto goal = wave({4, 3}, 1.7, 1.0);
  auto probs = torch::sigmoid(wave({4, 3}, 2.5, 2.0));

  nn::CrossEntropyLoss ce;
  auto ce_loss = ce(logits, labels);
  show("cross_entropy_loss", ce_loss);
  ce_loss.backward();
  show("cross_entropy_loss_grad", logits.grad());
  show("cross_entropy_loss_smoothing",
       nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().label_smoothing(0.2))(logits, labels));
  show("cross_entropy_loss_ignore",
       nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().ignore_index(2).reduction(torch::kSum))(logits, labels));
  show("cross_entropy_loss_weight",
       nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().weight(torch::tensor({0.2f, 1.0f, 3.0f})))(logits, labels));
  show("cross_entropy_loss_probs", ce(logits, torch::softmax(goal, 1)));
  show("nll_loss_module", nn::NLLLoss()(torch::log_softmax(logits, 1), labels));
  show("nll_loss_module_none",
       nn::NLLLoss(nn::NLLLossOptions().reduction(torch::kNone))(torch::log_softmax(logits, 1), labels));
  show("mse_loss_module", nn::MSELoss()(logits, goal));
  show("mse_loss_module_none", nn::MSELoss(nn::MSELossOptions(torch::kNone))(logits, goal));
  show("l1_loss_module", nn::L1Loss(nn::L1LossOptions(torch::kSum))(logits, goal));
  show("huber_loss_module", nn::HuberLoss(nn::HuberLossOptions().delta(0.5))(logits, goal));
  show("smooth_l1_loss_module", nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(logits, goal));
  show("bce_loss_module", nn::BCELoss()(probs, torch::sigmoid(goal)));
  show("bce_loss_module_weight",
       nn::BCELoss(nn::BCELossOptions().weight(torch::tensor({1.0f, 0.5f, 2.0f})))(probs, torch::sigmoid(goal)));
  show("bce_with_logits_module_pos_weight",
       nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(torch::tensor({2.0f, 1.0f, 0.5f})))(
           logits, torch::sigmoid(goal)));
  show("kl_div_module_batchmean", nn::KLDivLoss(nn::KLDivLossOptions().reduction(torch::kBatchMean))(
                                      torch::log_softmax(logits, 1), torch::softmax(goal, 1)));
  show("kl_div_module_log_target", nn::KLDivLoss(nn::KLDivLossOptions().log_target(true))(
                                       torch::log_softmax(logits, 1), torch::log_softmax(goal, 1)));
}

void init_and_utils() {
  namespace init = torch::nn::init;
  show("gain_relu", init::calculate_gain(torch::kReLU));
  show("gain_leaky_relu", init::calculate_gain(torch::kLeakyReLU, 0.2));
  show("gain_tanh", init::calculate_gain(torch::kTanh));
  show("gain_sigmoid", init::calculate_gain(torch::kSigmoid));
  auto t = torch::empty({3, 4});
  init::constant_(t, 0.25);
  show("init_constant", t);
  init::ones_(t);
  show("init_ones", t);
  init::zeros_(t);
  show("init_zeros", t);
  init::eye_(t);
  show("init_eye", t);
  auto w = torch::empty({3, 2, 3});
  init::dirac_(w);
  show("init_dirac", w);

  // Clipping and the parameter vector on a small model with known gradients.
  nn::Linear lin(3, 2);
  set_parameters(*lin);
  auto x = wave({4, 3}, 0.8, 2.0);
  lin(x).pow(2).sum().backward();
  show("clip_weight_grad_before", lin->weight.grad());
  double total = nn::utils::clip_grad_norm_(lin->parameters(), 1.0);
  show("clip_grad_norm_total", total);
  show("clip_grad_norm_weight_grad", lin->weight.grad());
  show("clip_grad_norm_bias_grad", lin->bias.grad());
  double total_inf = nn::utils::clip_grad_norm_(lin->parameters(), 0.1, std::numeric_limits<double>::infinity());
  show("clip_grad_norm_inf_total", total_inf);
  show("clip_grad_norm_inf_weight_grad", lin->weight.grad());
  nn::utils::clip_grad_value_(lin->parameters(), 0.02);
  show("clip_grad_value_weight_grad", lin->weight.grad());
  show("clip_grad_value_bias_grad", lin->bias.grad());

  auto vec = nn::utils::parameters_to_vector(lin->parameters());
  show("parameters_to_vector", vec);
  nn::utils::vector_to_parameters(torch::arange(8, torch::kFloat), lin->parameters());
  show("vector_to_parameters_weight", lin->weight);
  show("vector_to_parameters_bias", lin->bias);
  show_int("parameter_numel", vec.numel());
}

int main() {
  convolutions();
  pooling_and_activations();
  losses();
  init_and_utils();
}
