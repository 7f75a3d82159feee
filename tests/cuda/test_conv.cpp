// Convolutions on CUDA (cuDNN, cuda/conv.cpp) against the CPU: forward, input gradient, weight
// gradient and bias gradient (all through backward) of conv1d, conv2d with stride, padding,
// dilation and groups (depthwise included), conv_transpose1d/2d with output_padding (one at
// least the stride, Note [Gradients cuDNN accepts]), the trainer's layers and a ResNet layer,
// in float32 and float64 and, more loosely, float16 and bfloat16; each again with
// ember::backends::cudnn::benchmark and ::deterministic. Also TF32, double backward, empty
// batches, non-contiguous inputs, streams and threads, a batch past cuDNN's 32-bit limit, and
// the errors (integer dtypes, cuDNN disabled).
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/parity.h"
#include "ember/core/backends.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Sets a backends flag for a scope and restores it.
class FlagGuard {
 public:
  FlagGuard(backends::Flag& flag, bool value) : flag_(flag), old_(flag) { flag_ = value; }
  ~FlagGuard() { flag_ = old_; }
  FlagGuard(const FlagGuard&) = delete;
  FlagGuard& operator=(const FlagGuard&) = delete;

 private:
  backends::Flag& flag_;
  bool old_;
};

using ConvFn = std::function<Tensor(const TensorList&)>;

/// One convolution to compare: inputs (x, weight, optional bias) as shapes, and the call.
struct ConvCase {
  std::string name;
  std::vector<int64_t> x, w, b;  // b empty: no bias
  ConvFn f;
};

std::vector<ConvCase> cases() {
  using V = std::vector<int64_t>;
  return {
      {"conv1d", {2, 3, 10}, {5, 3, 4}, {5}, [](const TensorList& t) { return conv1d(t[0], t[1], t[2]); }},
      {"conv1d stride 2 padding 1 dilation 2 groups 2", {3, 4, 17}, {6, 2, 3}, {6},
       [](const TensorList& t) { return conv1d(t[0], t[1], t[2], 2, 1, 2, 2); }},
      {"conv2d plain", {2, 3, 7, 6}, {4, 3, 3, 2}, {4}, [](const TensorList& t) { return conv2d(t[0], t[1], t[2]); }},
      {"conv2d stride (2,1) padding (1,2) dilation (2,1)", {2, 4, 11, 9}, {6, 4, 3, 2}, {6},
       [](const TensorList& t) { return conv2d(t[0], t[1], t[2], V{2, 1}, V{1, 2}, V{2, 1}); }},
      {"conv2d groups 2, no bias", {2, 4, 8, 8}, {6, 2, 3, 3}, {},
       [](const TensorList& t) { return conv2d(t[0], t[1], {}, 1, 1, 1, 2); }},
      {"conv2d depthwise", {2, 8, 10, 10}, {8, 1, 3, 3}, {8},
       [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 1, 1, 1, 8); }},
      {"conv2d depthwise multiplier 2 stride 2", {2, 8, 11, 11}, {16, 1, 5, 5}, {16},
       [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 2, 2, 1, 8); }},
      {"conv2d 1x1 stride 2 (downsample)", {2, 8, 9, 9}, {16, 8, 1, 1}, {},
       [](const TensorList& t) { return conv2d(t[0], t[1], {}, 2); }},
      {"conv2d padding same", {2, 3, 9, 8}, {4, 3, 3, 3}, {4},
       [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 1, "same"); }},
      {"conv_transpose2d stride 2 padding 1 output_padding 1", {2, 4, 5, 6}, {4, 3, 3, 3}, {3},
       [](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], 2, 1, 1); }},
      {"conv_transpose2d groups 2 stride (2,3) output_padding (1,2)", {2, 4, 4, 5}, {4, 2, 3, 3}, {4},
       [](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], V{2, 3}, 0, V{1, 2}, 2); }},
      {"conv_transpose2d output_padding >= stride (below dilation)", {2, 4, 5, 5}, {4, 2, 3, 3}, {4},
       [](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], 1, 0, 1, 2, 2); }},
      {"conv_transpose1d stride 3 output_padding 2", {2, 3, 7}, {3, 2, 4}, {2},
       [](const TensorList& t) { return conv_transpose1d(t[0], t[1], t[2], 3, 1, 2); }},
      {"trainer conv1: batch 4, 1->32, 3x3, padding 1", {4, 1, 28, 28}, {32, 1, 3, 3}, {32},
       [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 1, 1); }},
      {"trainer conv2: batch 4, 32->64, 3x3, padding 1", {4, 32, 14, 14}, {64, 32, 3, 3}, {64},
       [](const TensorList& t) { return conv2d(t[0], t[1], t[2], 1, 1); }},
      {"ResNet layer: 64->64, 3x3, padding 1", {2, 64, 14, 14}, {64, 64, 3, 3}, {},
       [](const TensorList& t) { return conv2d(t[0], t[1], {}, 1, 1); }},
  };
}

/// Products sum C * KH * KW terms (weight gradients N * OH * OW), in an order cuDNN chooses:
/// tolerances are a few units in the last place of sums of that size. Inputs are in [-1, 1).
Tol conv_tol(ScalarType t) {
  switch (t) {
    case kDouble: return {1e-9, 1e-9};
    case kFloat: return {2e-4, 1e-4};
    case kHalf: return {5e-2, 1e-2};
    default: return {1e-1, 3e-2};  // bfloat16: 8 bits of mantissa
  }
}

/// The output and the gradients of every input of c.f on `device`, computing in `dtype` from
/// `values` (exactly representable in the dtype under test), backpropagating a seeded
/// gradient of that dtype (the same values on both devices).
TensorList run_case(const ConvCase& c, const TensorList& values, ScalarType grad_dtype, ScalarType dtype,
                    Device device) {
  TensorList leaves;
  for (const Tensor& v : values) {
    if (!v.defined()) {
      leaves.push_back(Tensor());
      continue;
    }
    Tensor l = v.to(dtype).to(device).detach();
    l.requires_grad_(true);
    leaves.push_back(l);
  }
  Tensor out = c.f(leaves);
  const Tensor gout = make_input(out.sizes(), grad_dtype, -1, 1, /*seed=*/4242).to(dtype).to(device);
  out.backward(gout);
  TensorList res{out};
  for (const Tensor& l : leaves) res.push_back(l.defined() ? l.grad() : Tensor());
  return res;
}

/// c on CUDA in `dtype` against the CPU: output, input gradient, weight gradient, bias
/// gradient. The CPU computes in the same dtype for float32/float64 and in float32 (from the
/// same 16-bit values) for float16/bfloat16, which ember's CPU convolution does not take
/// (float16) or rounds differently (bfloat16).
void check_case(const ConvCase& c, ScalarType dtype, std::optional<Tol> tol = {}) {
  INFO(c.name << ", dtype " << dtype);
  const ScalarType ref = dtype == kHalf || dtype == kBFloat16 ? kFloat : dtype;
  auto value = [&](const std::vector<int64_t>& shape) { return make_input(shape, dtype, -1, 1).to(kDouble); };
  const TensorList values{value(c.x), value(c.w), c.b.empty() ? Tensor() : value(c.b)};
  const TensorList want = run_case(c, values, dtype, ref, kCPU);
  const TensorList got = run_case(c, values, dtype, dtype, cuda_device());
  const char* what[] = {"output", "input gradient", "weight gradient", "bias gradient"};
  for (size_t i = 0; i < want.size(); ++i) {
    if (!want[i].defined()) continue;
    REQUIRE(got[i].defined());
    CHECK(got[i].dtype() == dtype);
    check_same(got[i].to(ref), want[i], tol.value_or(conv_tol(dtype)), what[i]);
  }
}

/// Every case in float32 and float64 under the current backends flags (TF32 off, so float32
/// is compared at float32's precision).
void check_all_cases() {
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  for (const ConvCase& c : cases())
    for (ScalarType t : {kFloat, kDouble}) check_case(c, t);
}

}  // namespace

TEST_CASE("cuda conv: forward and every gradient against the CPU, cuDNN's heuristics") {
  FlagGuard heuristics(backends::cudnn::benchmark, false);
  FlagGuard any(backends::cudnn::deterministic, false);
  check_all_cases();
}

TEST_CASE("cuda conv: the same with benchmark = true (timed algorithm choice)") {
  FlagGuard timed(backends::cudnn::benchmark, true);
  check_all_cases();
  check_all_cases();  // the second round runs the cached choices
}

TEST_CASE("cuda conv: the same with deterministic = true, and the same bits every run") {
  FlagGuard det(backends::cudnn::deterministic, true);
  check_all_cases();
  {
    FlagGuard timed(backends::cudnn::benchmark, true);
    check_all_cases();
  }
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  for (const ConvCase& c : cases()) {
    INFO(c.name);
    const TensorList values{make_input(c.x, kFloat, -1, 1).to(kDouble), make_input(c.w, kFloat, -1, 1).to(kDouble),
                            c.b.empty() ? Tensor() : make_input(c.b, kFloat, -1, 1).to(kDouble)};
    const TensorList first = run_case(c, values, kFloat, kFloat, cuda_device());
    const TensorList second = run_case(c, values, kFloat, kFloat, cuda_device());
    for (size_t i = 0; i < first.size(); ++i)
      if (first[i].defined()) CHECK(equal(first[i].cpu(), second[i].cpu()));
  }
}

TEST_CASE("cuda conv: float16 and bfloat16 (float accumulation) against float32 on the CPU") {
  for (const ConvCase& c : cases())
    for (ScalarType t : {kHalf, kBFloat16}) check_case(c, t);
}

TEST_CASE("cuda conv: float32 with TF32 allowed (PyTorch's default for cuDNN) stays close") {
  FlagGuard tf32(backends::cudnn::allow_tf32, true);
  // TF32 rounds the inputs to 10 bits of mantissa: errors of ~1e-3 relative per product.
  for (const ConvCase& c : cases()) check_case(c, kFloat, Tol{3e-2, 5e-3});
}

TEST_CASE("cuda conv: double backward (the weight gradient's own gradients) matches the CPU") {
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  for (const ConvCase& c : cases()) {
    INFO(c.name);
    auto run = [&](Device d) {
      const Tensor x = make_input(c.x, kDouble, -1, 1, 11).to(d).requires_grad_(true);
      const Tensor w = make_input(c.w, kDouble, -1, 1, 12).to(d).requires_grad_(true);
      Tensor out = c.f({x, w, Tensor()});
      const Tensor g = make_input(out.sizes(), kDouble, -1, 1, 13).to(d).requires_grad_(true);
      TensorList gw = autograd::grad({out}, {w, x}, {g}, std::nullopt, /*create_graph=*/true);
      (gw[0].pow(2).sum() + gw[1].pow(2).sum()).backward();
      return TensorList{gw[0], gw[1], x.grad(), w.grad(), g.grad()};
    };
    const TensorList want = run(kCPU), got = run(cuda_device());
    for (size_t i = 0; i < want.size(); ++i) check_same(got[i], want[i], conv_tol(kDouble), std::to_string(i));
  }
}

TEST_CASE("cuda conv: non-contiguous inputs, empty batches, empty outputs") {
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  check_grad_parity([](const TensorList& t) { return conv2d(t[0].transpose(2, 3), t[1].transpose(2, 3), t[2], 1, 1); },
                    {make_input({2, 3, 7, 6}, kFloat, -1, 1), make_input({4, 3, 3, 3}, kFloat, -1, 1),
                     make_input({4}, kFloat, -1, 1)},
                    conv_tol(kFloat));
  check_grad_parity([](const TensorList& t) { return conv2d(t[0].slice(3, 0, 9, 2), t[1], {}, 2); },
                    {make_input({2, 3, 8, 9}, kFloat, -1, 1), make_input({5, 3, 3, 3}, kFloat, -1, 1)},
                    conv_tol(kFloat));
  // Empty batch: an empty output; the weight and bias gradients are zeros.
  check_grad_parity([](const TensorList& t) { return conv2d(t[0], t[1], t[2], 1, 1); },
                    {make_input({0, 3, 5, 5}, kFloat), make_input({4, 3, 3, 3}, kFloat), make_input({4}, kFloat)});
  check_grad_parity([](const TensorList& t) { return conv_transpose2d(t[0], t[1], t[2], 2); },
                    {make_input({0, 3, 5, 5}, kFloat), make_input({3, 4, 3, 3}, kFloat), make_input({4}, kFloat)});
  // Unbatched inputs.
  check_grad_parity([](const TensorList& t) { return conv1d(t[0], t[1], t[2], 1, 1); },
                    {make_input({3, 9}, kFloat, -1, 1), make_input({2, 3, 3}, kFloat, -1, 1),
                     make_input({2}, kFloat, -1, 1)},
                    conv_tol(kFloat));
}

TEST_CASE("cuda conv on pool streams and other threads") {
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  const std::vector<ConvCase> all = cases();
  const ConvCase& c = all[14];  // the trainer's second layer
  {
    cuda::CUDAStreamGuard guard(cuda::getStreamFromPool());
    check_case(c, kFloat);
  }
  {
    cuda::CUDAStreamGuard guard(cuda::getStreamFromPool(true));
    check_case(c, kFloat);
  }
  // Each thread takes a cuDNN handle of its own (doctest's CHECK is not thread-safe: the
  // threads only compute, the main thread compares).
  const Tensor x = make_input({4, 32, 14, 14}, kFloat, -1, 1), w = make_input({64, 32, 3, 3}, kFloat, -1, 1);
  const Tensor want = conv2d(x, w, {}, 1, 1);
  for (int round = 0; round < 3; ++round) {
    Tensor got;
    std::thread worker([&] { got = conv2d(x.to(cuda_device()), w.to(cuda_device()), {}, 1, 1).cpu(); });
    worker.join();
    CHECK(allclose(got, want, 1e-4, 2e-4));
  }
}

TEST_CASE("cuda conv: a batch past cuDNN's 32-bit tensors runs in several calls") {
  // 33000 images of 256 x 256: 2.16e9 elements, past 2^31 - 1 (8.6 GB in float32). The result
  // must equal that of the same convolution image by image (each call small).
  FlagGuard no_tf32(backends::cudnn::allow_tf32, false);
  try {
    ember::manual_seed(7);
    const Tensor x = rand({33000, 1, 256, 256}, TensorOptions().device(cuda_device())).requires_grad_(true);
    const Tensor w = rand({1, 1, 3, 3}, TensorOptions().device(cuda_device())).requires_grad_(true);
    Tensor y = conv2d(x, w);
    y.backward(ones_like(y));
    // 65536 elements per image: 32767 images per call, so 32766 | 32767 is the chunk boundary.
    for (int64_t i : {int64_t{0}, int64_t{32766}, int64_t{32767}, int64_t{32999}}) {
      INFO("image " << i);
      const Tensor xi = x.detach().narrow(0, i, 1).clone().requires_grad_(true);
      Tensor yi = conv2d(xi, w.detach());
      CHECK(allclose(y.detach().narrow(0, i, 1).cpu(), yi.detach().cpu(), 1e-5, 1e-5));
      yi.backward(ones_like(yi));
      CHECK(allclose(x.grad().narrow(0, i, 1).cpu(), xi.grad().cpu(), 1e-5, 1e-5));
    }
    // The weight gradient adds the chunks up: sum over images of (the sum of each 3x3 window).
    NoGradGuard no_grad;
    const int64_t o = 254;
    Tensor want = empty({1, 1, 3, 3}, kDouble);
    const Tensor sums = x.detach().sum(0).to(kDouble);  // (1, 256, 256)
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 3; ++b)
        want.narrow(2, a, 1).narrow(3, b, 1).fill_(sums.narrow(1, a, o).narrow(2, b, o).sum().item<double>());
    CHECK(allclose(w.grad().cpu().to(kDouble), want, 1e-3, 1e-3));
  } catch (const Error& e) {
    if (!std::string(e.what()).starts_with("CUDA out of memory")) throw;
    MESSAGE("skipped: the device has too little memory for this case (" << e.what() << ")");
  }
}

TEST_CASE("cuda conv errors: integer dtypes, cuDNN disabled, and the CPU's argument errors") {
  for (ScalarType t : {kBool, kUInt8, kInt32, kInt64}) {
    INFO("dtype " << t);
    const Tensor x = make_input({1, 2, 5, 5}, t).to(cuda_device()), w = make_input({3, 2, 3, 3}, t).to(cuda_device());
    std::string msg;
    try {
      (void)conv2d(x, w);
    } catch (const Error& e) {
      msg = e.what();
    }
    CHECK(msg == std::string("getCudnnDataTypeFromScalarType() not supported for ") + scalar_type_name(t));
  }
  {
    FlagGuard off(backends::cudnn::enabled, false);
    const Tensor x = make_input({1, 2, 5, 5}, kFloat).to(cuda_device());
    const Tensor w = make_input({3, 2, 3, 3}, kFloat).to(cuda_device());
    std::string msg;
    try {
      (void)conv2d(x, w);
    } catch (const Error& e) {
      msg = e.what();
    }
    CHECK(msg.find("convolution on CUDA needs cuDNN") != std::string::npos);
  }
  // Shape errors are raised before any kernel, in the same words on both devices.
  check_error_parity([](const TensorList& t) { return conv2d(t[0], t[1]); },
                     {make_input({1, 3, 5, 5}, kFloat), make_input({4, 2, 3, 3}, kFloat)});
  check_error_parity([](const TensorList& t) { return conv2d(t[0], t[1]); },
                     {make_input({1, 2, 2, 2}, kFloat), make_input({4, 2, 3, 3}, kFloat)});
  check_error_parity([](const TensorList& t) { return conv_transpose2d(t[0], t[1], {}, 1, 0, 2, 1, 1); },
                     {make_input({1, 2, 5, 5}, kFloat), make_input({2, 3, 3, 3}, kFloat)});
}
