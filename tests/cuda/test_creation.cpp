// Creation ops on CUDA: empty/zeros/ones/full and the *_like forms, arange, linspace, eye,
// tensor(...) with a device. Each is made on both devices and compared exactly (the CUDA fills
// compute in the CPU's arithmetic).
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

/// make(device) on the CPU and on CUDA: same values, shape and dtype (exactly, by default).
template <class F>
void check_creation(F make, std::optional<Tol> tol = Tol{0, 0}) {
  Tensor on_cpu = make(Device(kCPU));
  Tensor on_cuda = make(cuda_device());
  check_same(on_cuda, on_cpu, tol);
}

TensorOptions on(Device d, ScalarType t) { return TensorOptions().dtype(t).device(d); }

}  // namespace

TEST_CASE("cuda creation: empty/zeros/ones/full for every dtype") {
  for (ScalarType t : kAllTypes) {
    check_creation([t](Device d) { return zeros({3, 5}, on(d, t)); });
    check_creation([t](Device d) { return ones({2, 0, 4}, on(d, t)); });
    check_creation([t](Device d) { return full({}, 1, on(d, t)); });
    check_creation([t](Device d) { return full({7}, t == kBool ? Scalar(true) : Scalar(3), on(d, t)); });
    Tensor e = empty({4, 2}, on(cuda_device(), t));
    CHECK(e.is_cuda());
    CHECK(e.dtype() == t);
  }
  check_creation([](Device d) { return full({1 << 20 | 3}, 0.25, TensorOptions().device(d)); });
  check_creation([](Device d) { return full({3}, 7, TensorOptions().device(d)); });  // int64 inferred
  check_creation([](Device d) { return scalar_tensor(2.5, TensorOptions().device(d)); });
}

TEST_CASE("cuda creation: the *_like forms keep the device unless told otherwise") {
  Tensor x = make_input({3, 4}, kHalf).to(cuda_device());
  for (Tensor y : {empty_like(x), zeros_like(x), ones_like(x), full_like(x, 2), rand_like(x), randn_like(x)}) {
    CHECK(y.is_cuda());
    CHECK(y.dtype() == kHalf);
    CHECK(y.sizes().vec() == std::vector<int64_t>{3, 4});
  }
  check_same(zeros_like(x), zeros({3, 4}, kHalf));
  check_same(ones_like(x, kInt32), ones({3, 4}, kInt32));
  check_same(full_like(x, -1.5, kDouble), full({3, 4}, -1.5, kDouble));
  CHECK(zeros_like(x, TensorOptions().device(kCPU)).is_cpu());
  Tensor g = ones_like(x, TensorOptions().dtype(kFloat).requires_grad(true));
  CHECK(g.is_cuda());
  CHECK(g.requires_grad());
}

TEST_CASE("cuda creation: arange for every dtype, both step signs, fractional steps") {
  for (ScalarType t : kNumericTypes) {
    check_creation([t](Device d) { return arange(10, on(d, t)); });
    check_creation([t](Device d) { return arange(2, 40, 3, on(d, t)); });
    check_creation([t](Device d) { return arange(50, 3, -4, on(d, t)); });
    check_creation([t](Device d) { return arange(0, 0, on(d, t)); });
  }
  for (ScalarType t : kFloatTypes) {
    check_creation([t](Device d) { return arange(-1.0, 1.0, 0.1, on(d, t)); });
    check_creation([t](Device d) { return arange(0.5, 7.25, 0.25, on(d, t)); });
  }
  check_creation([](Device d) { return arange(0, 2.5, 0.5, on(d, kLong)); });  // step 0 in int64
  check_creation([](Device d) { return arange(1, 4, TensorOptions().device(d)); });
  check_creation([](Device d) { return arange(0.0, 3.0, 0.5, TensorOptions().device(d)); });
  // Multi-block with a tail, in float (where double arithmetic then a cast must match).
  check_creation([](Device d) { return arange(-3.0, 3.0, 6.0 / (1 << 20 | 3), on(d, kFloat)); });
  check_creation([](Device d) { return arange(int64_t{1} << 20 | 3, on(d, kInt64)); });
}

TEST_CASE("cuda creation: linspace for every dtype and step count") {
  for (ScalarType t : kNumericTypes) {
    for (int64_t steps : {0, 1, 2, 5, 11, 100}) {
      check_creation([t, steps](Device d) { return linspace(1, 17, steps, on(d, t)); });  // no negatives: uint8
      check_creation([t, steps](Device d) { return linspace(9, 2, steps, on(d, t)); });
    }
  }
  for (ScalarType t : kFloatTypes)
    check_creation([t](Device d) { return linspace(-1.25, 3.5, 1001, on(d, t)); });
  check_creation([](Device d) { return linspace(0.0, 1.0, 1 << 20 | 3, on(d, kFloat)); });
  check_creation([](Device d) { return linspace(0.0, 1.0, 1 << 20 | 3, on(d, kDouble)); });
}

TEST_CASE("cuda creation: eye for every dtype and shape") {
  for (ScalarType t : kAllTypes) {
    check_creation([t](Device d) { return eye(4, on(d, t)); });
    check_creation([t](Device d) { return eye(3, 6, on(d, t)); });
    check_creation([t](Device d) { return eye(6, 2, on(d, t)); });
    check_creation([t](Device d) { return eye(0, 3, on(d, t)); });
  }
  check_creation([](Device d) { return eye(1100, TensorOptions().device(d)); });
}

TEST_CASE("cuda creation: tensor(...) and requires_grad on a device") {
  check_creation([](Device d) { return tensor({{1.5, -2.0}, {3.0, 4.25}}, TensorOptions().device(d)); });
  check_creation([](Device d) { return tensor({1, 2, 3}, on(d, kHalf)); });
  check_creation([](Device d) { return tensor({true, false}, TensorOptions().device(d)); });
  Tensor r = arange(0.0, 4.0, 1.0, TensorOptions().device(cuda_device()).requires_grad(true));
  CHECK(r.requires_grad());
  CHECK(r.is_cuda());
  Tensor z = zeros({2}, TensorOptions().device(kCUDA).requires_grad(true));
  CHECK(z.device() == cuda_device());
}

TEST_CASE("cuda creation: errors name the CUDA kernels as PyTorch's") {
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message([] { arange(5, on(cuda_device(), kBool)); }).find("\"arange_cuda\" not implemented for 'Bool'") !=
        std::string::npos);
  CHECK(message([] { linspace(0, 1, 5, on(cuda_device(), kBool)); })
            .find("\"linspace_cuda\" not implemented for 'Bool'") != std::string::npos);
  // Errors that do not name a kernel are the CPU's.
  CHECK(message([] { arange(0, 5, 0, TensorOptions().device(cuda_device())); }) == message([] { arange(0, 5, 0); }));
  CHECK(message([] { eye(-1, TensorOptions().device(cuda_device())); }) == message([] { eye(-1); }));
  CHECK(message([] { zeros({-2}, TensorOptions().device(cuda_device())); }) == message([] { zeros({-2}); }));
}
