// nn modules: a custom Module with registered children (Conv2d, MaxPool2d, Flatten, a
// Sequential of Linear/ReLU), a parameter and a buffer of its own; parameter names and shapes,
// forward, losses and backward. Parameters are set from sin(arange) under NoGradGuard, so no
// random numbers are involved. Then containers, dtype conversion and the F:: functions.
#include "compat.h"

namespace F = torch::nn::functional;
using compat::show;
using compat::show_flag;
using compat::show_int;
using compat::show_ints;
using compat::show_text;

// Deterministic values of a given shape: scale * sin(0.7 * i + phase).
torch::Tensor wave(torch::IntArrayRef sizes, double phase, double scale = 0.5) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return (torch::sin(torch::arange(n, torch::kFloat) * 0.7 + phase) * scale).reshape(sizes);
}

// Overwrites every parameter in place, in named_parameters() order.
void set_parameters(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  double phase = 0.5;
  for (auto& item : module.named_parameters()) {
    item.value().copy_(wave(item.value().sizes(), phase));
    phase += 1.0;
  }
}

struct NetImpl : torch::nn::Module {
  NetImpl() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)));
    pool = register_module("pool", torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
    flatten = register_module("flatten", torch::nn::Flatten());
    head = register_module("head", torch::nn::Sequential(torch::nn::Linear(16, 8), torch::nn::ReLU(),
                                                         torch::nn::Linear(torch::nn::LinearOptions(8, 3))));
    scale = register_parameter("scale", torch::ones({3}));
    offset = register_buffer("offset", torch::full({3}, 0.25));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = pool(torch::relu(conv(x)));
    return head->forward(flatten(x)) * scale + offset;
  }

  torch::nn::Conv2d conv{nullptr};
  torch::nn::MaxPool2d pool{nullptr};
  torch::nn::Flatten flatten{nullptr};
  torch::nn::Sequential head{nullptr};
  torch::Tensor scale, offset;
};
TORCH_MODULE(Net);

void custom_module() {
  Net net;
  set_parameters(*net);
  for (const auto& item : net->named_parameters()) show_ints(item.key().c_str(), item.value().sizes());
  for (const auto& item : net->named_buffers()) show(item.key().c_str(), item.value());
  show_int("parameter_count", static_cast<int64_t>(net->parameters().size()));
  show_int("children_count", static_cast<int64_t>(net->children().size()));
  show_int("modules_count", static_cast<int64_t>(net->modules().size()));
  for (const auto& item : net->named_children()) show_text("child", item.key());
  for (const auto& item : net->named_modules()) show_text("module", "[" + item.key() + "]");
  show("conv_weight", net->conv->weight);
  show("head_1_bias", net->head->ptr<torch::nn::LinearImpl>(2)->bias);

  auto x = wave({2, 1, 4, 4}, 0.3, 1.0);
  auto out = net->forward(x);
  show("forward", out);
  show("call_operator", net(x));
  show("conv_out", net->conv(x));
  show("pool_out", net->pool(net->conv(x)));

  auto target = torch::tensor({0, 2}, torch::kLong);
  auto ce = F::cross_entropy(out, target);
  show("cross_entropy", ce);
  show("nll_loss", F::nll_loss(F::log_softmax(out, 1), target));
  show("cross_entropy_sum", F::cross_entropy(out, target, F::CrossEntropyFuncOptions().reduction(torch::kSum)));
  show("cross_entropy_smoothing",
       F::cross_entropy(out, target, F::CrossEntropyFuncOptions().label_smoothing(0.1)));
  show("cross_entropy_weight",
       F::cross_entropy(out, target, F::CrossEntropyFuncOptions().weight(torch::tensor({1.0f, 2.0f, 0.5f}))));
  show("nll_loss_none",
       F::nll_loss(F::log_softmax(out, 1), target, F::NLLLossFuncOptions().reduction(torch::kNone)));
  auto goal = wave({2, 3}, 2.0);
  show("mse_loss", F::mse_loss(out, goal));
  show("mse_loss_sum", F::mse_loss(out, goal, F::MSELossFuncOptions(torch::kSum)));
  show("l1_loss", F::l1_loss(out, goal));
  show("smooth_l1_loss", F::smooth_l1_loss(out, goal));
  show("bce_with_logits", F::binary_cross_entropy_with_logits(out, torch::sigmoid(goal)));

  (ce + F::mse_loss(out, goal)).backward();
  for (const auto& item : net->named_parameters()) show((item.key() + "_grad").c_str(), item.value().grad());

  show_flag("training", net->is_training());
  net->eval();
  show_flag("eval_training", net->is_training());
  show_flag("eval_child_training", net->head->is_training());
  net->train();
  show_flag("train_child_training", net->conv->is_training());

  // The whole tree in float64: parameters and buffers convert in place.
  net->to(torch::kDouble);
  show_text("double_weight_dtype", compat::type_name(net->conv->weight.scalar_type()));
  show_text("double_buffer_dtype", compat::type_name(net->offset.scalar_type()));
  show("double_forward", net->forward(x.to(torch::kDouble)));
}

void containers() {
  torch::nn::Sequential seq({{"fc", torch::nn::Linear(3, 2)}, {"act", torch::nn::Tanh()}});
  set_parameters(*seq);
  for (const auto& item : seq->named_parameters()) show_ints(item.key().c_str(), item.value().sizes());
  auto input = wave({4, 3}, 1.5, 1.0);
  show("named_sequential", seq->forward(input));
  show_int("sequential_size", static_cast<int64_t>(seq->size()));
  show("sequential_forward_typed", seq->forward<torch::Tensor>(input));
  torch::nn::AnyModule any(seq->ptr<torch::nn::LinearImpl>(0));
  show("any_module_forward", any.forward<torch::Tensor>(input));

  torch::nn::Sequential chain;
  chain->push_back(torch::nn::Linear(3, 5));
  chain->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.1)));
  chain->push_back(torch::nn::Linear(torch::nn::LinearOptions(5, 2).bias(false)));
  chain->push_back(torch::nn::Sigmoid());
  set_parameters(*chain);
  for (const auto& item : chain->named_parameters()) show_ints(item.key().c_str(), item.value().sizes());
  show("pushed_sequential", chain->forward(input));

  // Plain functions as modules, with bound extra arguments.
  torch::nn::Sequential with_functions(torch::nn::Linear(3, 4), torch::nn::Functional(torch::relu),
                                       torch::nn::Linear(4, 3), torch::nn::Functional(torch::leaky_relu, 0.2),
                                       torch::nn::Functional([](torch::Tensor t) { return t * 2 + 1; }));
  set_parameters(*with_functions);
  show_int("functional_sequential_parameters", static_cast<int64_t>(with_functions->parameters().size()));
  show("functional_sequential", with_functions->forward(input));
  show("functional_call", torch::nn::Functional(torch::elu, 0.5, 1.0, 1.0)(input - 0.5));

  torch::nn::ModuleList list(torch::nn::Linear(2, 2), torch::nn::GELU());
  list->push_back(torch::nn::Linear(2, 1));
  set_parameters(*list);
  for (const auto& item : list->named_parameters()) show_ints(item.key().c_str(), item.value().sizes());
  show_int("module_list_size", static_cast<int64_t>(list->size()));
  auto h = wave({3, 2}, 0.1, 1.0);
  for (const auto& module : *list) {
    if (auto* linear = module->as<torch::nn::Linear>()) h = linear->forward(h);
    else if (auto* gelu = module->as<torch::nn::GELU>()) h = gelu->forward(h);
  }
  show("module_list_forward", h);

  torch::nn::Linear lin(torch::nn::LinearOptions(4, 2));
  set_parameters(*lin);
  auto lx = wave({2, 4}, 0.4, 1.0);
  show("linear", lin(lx));
  show("F_linear", F::linear(lx, lin->weight, lin->bias));
  show("identity", torch::nn::Identity()(lx));
  show("unflatten", torch::nn::Unflatten(torch::nn::UnflattenOptions(1, {2, 2}))(lx));
  show("flatten_module", torch::nn::Flatten(torch::nn::FlattenOptions().start_dim(0))(lx));
}

void functional() {
  auto x = wave({1, 2, 3, 3}, 0.2, 1.0);
  show("softmax", F::softmax(x, F::SoftmaxFuncOptions(1)));
  show("softmax_last", F::softmax(x, -1));
  show("log_softmax", F::log_softmax(x, F::LogSoftmaxFuncOptions(2)));
  show("relu", F::relu(x));
  show("leaky_relu", F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)));
  show("elu", F::elu(x, F::ELUFuncOptions().alpha(0.5)));
  show("gelu", F::gelu(x));
  show("silu", F::silu(x));
  show("pad_constant", F::pad(x, F::PadFuncOptions({1, 0, 0, 1}).value(-1.0)));
  show("pad_reflect", F::pad(x, F::PadFuncOptions({1, 1, 2, 0}).mode(torch::kReflect)));
  show("pad_replicate", F::pad(x, F::PadFuncOptions({2, 1, 1, 1}).mode(torch::kReplicate)));
  show("pad_circular", F::pad(x, F::PadFuncOptions({1, 2, 1, 0}).mode(torch::kCircular)));
  show("interpolate_nearest",
       F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{5, 4}).mode(torch::kNearest)));
  show("interpolate_bilinear", F::interpolate(x, F::InterpolateFuncOptions()
                                                     .size(std::vector<int64_t>{4, 5})
                                                     .mode(torch::kBilinear)
                                                     .align_corners(false)));
  show("interpolate_bilinear_corners", F::interpolate(x, F::InterpolateFuncOptions()
                                                             .scale_factor(std::vector<double>{2.0, 2.0})
                                                             .mode(torch::kBilinear)
                                                             .align_corners(true)));
  show("max_pool2d", F::max_pool2d(x, F::MaxPool2dFuncOptions(2).stride(1)));
  show("max_pool2d_padded", F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1)));
  show("avg_pool2d", F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).stride(1)));
  show("avg_pool2d_ceil", F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).ceil_mode(true)));
  show("adaptive_avg_pool2d", F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({2, 2})));
  show("adaptive_max_pool2d", F::adaptive_max_pool2d(x, F::AdaptiveMaxPool2dFuncOptions(2)));
  auto w = wave({3, 2, 2, 2}, 0.9);
  show("conv2d", F::conv2d(x, w));
  show("conv2d_stride_pad", F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(1)));
  show("conv2d_bias", F::conv2d(x, w, F::Conv2dFuncOptions().bias(torch::tensor({0.1f, -0.2f, 0.3f}))));

  // Gradients through the functional forms.
  auto leaf = x.detach().requires_grad_(true);
  auto y = F::interpolate(F::max_pool2d(F::pad(leaf, F::PadFuncOptions({1, 1, 1, 1}).mode(torch::kReflect)),
                                        F::MaxPool2dFuncOptions(2)),
                          F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 3}).mode(torch::kBilinear).align_corners(false));
  (F::softmax(y, 1) * wave({1, 2, 3, 3}, 1.1)).sum().backward();
  show("functional_chain_grad", leaf.grad());
}

int main() {
  custom_module();
  containers();
  functional();
}
