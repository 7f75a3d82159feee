// A libtorch program in the tutorials' style, built unchanged against an installed ember through
// the drop-in headers and find_package(Torch) (.ci/run). It trains a registered Linear layer
// for a few SGD steps on fixed data and checks every number against a hand computation and a
// plain double-precision loop; it also checks the c10/at spellings, TORCH_CHECK's messages and
// torch::jit::load's error. Prints one line per check; exits 1 if any fails.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>
#include <c10/util/irange.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

struct Net : torch::nn::Module {
  Net() { fc = register_module("fc", torch::nn::Linear(2, 1)); }
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc{nullptr};
};

static int failures = 0;

static void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok   " : "FAIL ") << what << "\n";
  if (!ok) ++failures;
}

static bool near(double a, double b) { return std::abs(a - b) <= 1e-5 * (1 + std::abs(b)); }

// The message of the c10::Error that f raises, or "" if it raises none.
template <class F>
static std::string error_of(F f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.what();
  }
  return "";
}

int main() {
  static_assert(std::is_same_v<at::Tensor, torch::Tensor>, "at::Tensor is torch::Tensor");
  static_assert(std::is_same_v<c10::optional<int64_t>, std::optional<int64_t>>);

  // Four samples of two features; the model starts at w = [0.5, -0.5], b = 0.25.
  at::Tensor x = torch::tensor({1.0, 2.0, 3.0, -1.0, 0.0, 1.0, 2.0, 2.0}, at::kFloat).reshape({4, 2});
  at::Tensor y = torch::tensor({1.0, 2.0, 0.0, 3.0}, torch::dtype(torch::kFloat32)).reshape({4, 1});
  c10::IntArrayRef sizes = x.sizes();
  TORCH_CHECK(sizes.size() == 2 && sizes[1] == 2, "expected a (N, 2) input, got ", x.sizes());

  auto net = std::make_shared<Net>();
  {
    torch::NoGradGuard no_grad;
    net->fc->weight.copy_(torch::tensor({0.5, -0.5}).reshape({1, 2}));
    net->fc->bias.fill_(at::Scalar(0.25));
  }
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));

  // The same training in plain doubles: loss = mean((x w + b - y)^2).
  const double xs[4][2] = {{1, 2}, {3, -1}, {0, 1}, {2, 2}}, ys[4] = {1, 2, 0, 3};
  double w[2] = {0.5, -0.5}, b = 0.25;

  c10::optional<int64_t> steps;  // as a command-line option would leave it
  c10::optional<double> unused = c10::nullopt;
  for (const auto step : c10::irange(steps.value_or(3))) {
    optimizer.zero_grad();
    at::Tensor loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    optimizer.step();

    double ref_loss = 0, gw[2] = {0, 0}, gb = 0;
    for (const auto i : c10::irange(4)) {
      double r = xs[i][0] * w[0] + xs[i][1] * w[1] + b - ys[i];
      ref_loss += r * r / 4;
      gw[0] += r * xs[i][0] / 2, gw[1] += r * xs[i][1] / 2, gb += r / 2;  // d/dp of the mean
    }
    w[0] -= 0.1 * gw[0], w[1] -= 0.1 * gw[1], b -= 0.1 * gb;

    at::Tensor weight = net->fc->weight.detach();
    std::cout << "step " << step << ": loss " << loss.item<double>() << ", w = ["
              << weight[0][0].item<double>() << ", " << weight[0][1].item<double>()
              << "], b = " << net->fc->bias.item<double>() << "\n";
    check(near(loss.item<double>(), ref_loss), "loss of step " + std::to_string(step));
    check(near(weight[0][0].item<double>(), w[0]) && near(weight[0][1].item<double>(), w[1]) &&
              near(net->fc->bias.item<double>(), b),
          "parameters after step " + std::to_string(step));
    if (step == 0) {
      // By hand: residuals (-1.25, 0.25, -0.25, -2.75), loss 9.25 / 4; gradients
      // dw = (-6, -8.5) / 2, db = -4 / 2; one step of lr 0.1 gives w = (0.8, -0.075), b = 0.45.
      check(near(loss.item<double>(), 2.3125) && near(w[0], 0.8) && near(w[1], -0.075) && near(b, 0.45),
            "step 0 matches the hand computation");
    }
  }
  check(!unused.has_value(), "c10::nullopt");
  int64_t sum = 0, empty = 0;
  for (const auto i : c10::irange(2, 5)) sum += i;
  for (const auto i : c10::irange(-3)) empty += 1 + i;
  std::vector<int64_t> hits(100, 0);
  at::parallel_for(0, 100, 10, [&](int64_t begin, int64_t end) {
    for (const auto i : c10::irange(begin, end)) hits[i] += 1;
  });
  check(sum == 2 + 3 + 4 && empty == 0 && std::count(hits.begin(), hits.end(), 1) == 100,
        "c10::irange, at::parallel_for");

  // c10 names are ember's.
  c10::Device device(c10::kCPU);
  c10::ScalarType type = at::kFloat;
  check(x.device() == device && x.scalar_type() == type && x.device().type() == c10::DeviceType::CPU,
        "c10::Device, c10::ScalarType");
  check(static_cast<float>(c10::Half(1.5f)) == 1.5f && static_cast<float>(c10::BFloat16(2.0f)) == 2.0f,
        "c10::Half, c10::BFloat16");
  check(std::string(c10::toString(type)) == "Float" && c10::str("a", 1, 'b') == "a1b",
        "c10::toString, c10::str");
  torch::optional<int> maybe = torch::nullopt;
  check(!maybe, "torch::optional, torch::nullopt");

  // TORCH_CHECK raises c10::Error with the streamed message, or libtorch's default text.
  int64_t dims = x.dim();
  check(error_of([&] { TORCH_CHECK(dims == 3, "expected 3 dims, got ", dims); }) == "expected 3 dims, got 2",
        "TORCH_CHECK message");
  check(error_of([&] { TORCH_CHECK(dims == 3); }) ==
            "Expected dims == 3 to be true, but got false.  (Could this error message be improved?  If so, "
            "please report an enhancement request to PyTorch.)",
        "TORCH_CHECK default message");
  std::string internal = error_of([&] { TORCH_INTERNAL_ASSERT(dims > 2, "dims = ", dims); });
  check(internal.rfind("dims > 2 INTERNAL ASSERT FAILED at \"", 0) == 0 &&
            internal.find(", please report a bug to PyTorch. dims = 2") != std::string::npos,
        "TORCH_INTERNAL_ASSERT message");
  check(!error_of([&] { AT_ASSERT(dims == 1); }).empty(), "AT_ASSERT");
  C10_UNUSED int spare = 0;
  TORCH_WARN("a warning from the drop-in headers: ", dims, " dims");

  // TorchScript cannot be loaded; the error says what to do instead.
  torch::jit::script::Module module;
  std::string jit_error = error_of([&] { module = torch::jit::load("model.pt"); });
  check(jit_error.find("torch::jit::load(\"model.pt\")") == 0 &&
            jit_error.find("safetensors") != std::string::npos &&
            jit_error.find("torch::load(model") != std::string::npos,
        "torch::jit::load raises, naming safetensors and torch::load");
  std::cout << "torch::jit::load: " << jit_error << "\n";

  std::cout << (failures ? "FAILED: " + std::to_string(failures) + " checks\n" : "all checks passed\n");
  return failures ? 1 : 0;
}
