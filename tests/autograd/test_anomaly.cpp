// Anomaly mode: a backward that produces NaN is named, with PyTorch's text.
#include "op_check.h"

using namespace ember;
using ember::autograd::AutogradContext;
using ember::test::check_error;

namespace {

// Backward returns NaN in its second gradient.
struct NanSecond : autograd::Function<NanSecond> {
  static Tensor forward(AutogradContext*, Tensor a, Tensor b) { return a + b; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0] * NAN}; }
};

}  // namespace

TEST_CASE("DetectAnomalyGuard names the node that returned NaN") {
  // (x / y) * 0 with y = 0: the forward value is nan (inf * 0), harmless to backward; the
  // gradient arriving at DivBackward0 is 0, and 0 / y = 0 / 0 = nan in its 0th output.
  Tensor x = tensor({1.0f, 2.0f}, requires_grad());
  Tensor y = zeros({2});
  CHECK(!autograd::AnomalyMode::is_enabled());
  {
    autograd::DetectAnomalyGuard guard;
    CHECK(autograd::AnomalyMode::is_enabled());
    check_error([&] { ((x / y) * 0).sum().backward(); },
                "Function 'DivBackward0' returned nan values in its 0th output.");
  }
  CHECK(!autograd::AnomalyMode::is_enabled());
  // Without the guard the NaN simply lands in .grad.
  ((x / y) * 0).sum().backward();
  CHECK(std::isnan(x.grad()[0].item<double>()));
}

TEST_CASE("anomaly mode reports the output index and custom function names") {
  Tensor a = tensor({1.0f}, requires_grad()), b = tensor({2.0f}, requires_grad());
  autograd::DetectAnomalyGuard guard;
  check_error([&] { NanSecond::apply(a, b).sum().backward(); },
              "Function 'torch::autograd::CppNode<(anonymous namespace)::NanSecond>' returned nan values in its "
              "1th output.");
  // Healthy gradients pass through untouched.
  Tensor c = tensor({3.0f}, requires_grad());
  (c * c).sum().backward();
  CHECK(c.grad().item<double>() == 6.0);
}

TEST_CASE("guards nest") {
  {
    autograd::DetectAnomalyGuard outer;
    {
      autograd::DetectAnomalyGuard inner;
      CHECK(autograd::AnomalyMode::is_enabled());
    }
    CHECK(autograd::AnomalyMode::is_enabled());
  }
  CHECK(!autograd::AnomalyMode::is_enabled());
}
