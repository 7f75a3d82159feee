// Copies on and across CUDA devices: every dtype pair's cast, host<->device transfers of
// strided tensors, broadcasting copy_, fill_, clone/contiguous, overlapping copies.
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("cuda copy: to(device) and back keeps values for every dtype") {
  for (ScalarType t : kAllTypes) {
    Tensor x = make_input({5, 7}, t);
    Tensor back = x.to(cuda_device()).to(Device(kCPU));
    CHECK(back.is_cpu());
    check_same(back.to(cuda_device()), x, Tol{0, 0});
  }
}

TEST_CASE("cuda copy: every dtype pair casts as on the CPU") {
  for (ScalarType from : kAllTypes)
    for (ScalarType to : kAllTypes)
      check_parity([to](const TensorList& x) { return x[0].to(to); }, {make_input({3, 33}, from, -100, 100)});
}

TEST_CASE("cuda copy: strided, transposed and broadcast sources") {
  for (ScalarType t : {kFloat, kHalf, kInt64, kBool}) {
    check_parity([](const TensorList& x) { return x[0].t().contiguous(); }, {make_input({17, 9}, t)});
    check_parity([](const TensorList& x) { return x[0].slice(1, 0, 9, 2).clone(); }, {make_input({4, 9}, t)});
    check_parity([](const TensorList& x) { return x[0].expand({6, 5}).contiguous(); }, {make_input({1, 5}, t)});
    check_parity([](const TensorList& x) { return x[0].permute({2, 0, 1}).to(kDouble); }, {make_input({3, 4, 5}, t)});
  }
}

TEST_CASE("cuda copy: copy_ into a strided destination, with broadcasting and casting") {
  check_parity(
      [](const TensorList& x) {
        Tensor dst = x[0];
        dst.t().copy_(x[1]);  // (5,3) view of a (3,5) tensor, source (1,3) broadcast
        return dst;
      },
      {make_input({3, 5}, kFloat), make_input({1, 3}, kInt32)});
}

TEST_CASE("cuda copy: host tensors of other dtypes and layouts go to the device and back") {
  Tensor host = make_input({6, 4}, kDouble).t();  // non-contiguous, float64
  Tensor dev = empty({4, 6}, TensorOptions().dtype(kFloat).device(cuda_device()));
  dev.copy_(host);
  check_same(dev, host.to(kFloat));
  Tensor back = empty({6, 4}, kHalf).t();
  back.copy_(dev);
  check_same(back.to(cuda_device()), host.to(kHalf));
}

TEST_CASE("cuda copy: overlapping source and destination read the source first") {
  check_parity(
      [](const TensorList& x) {
        Tensor y = x[0].clone();
        y.slice(0, 1, 8).copy_(y.slice(0, 0, 7));
        return y;
      },
      {make_input({8, 3}, kFloat)});
}

TEST_CASE("cuda fill_ and zero_ on every dtype, also through a strided view") {
  for (ScalarType t : kAllTypes) {
    check_parity(
        [](const TensorList& x) {
          Tensor y = x[0].clone();
          y.slice(1, 0, 6, 2).fill_(1);
          y.select(0, 0).zero_();
          return y;
        },
        {make_input({4, 6}, t)});
  }
  Tensor h = full({1000003}, 2.5, TensorOptions().dtype(kHalf).device(cuda_device()));
  CHECK(h.to(Device(kCPU)).to(kDouble).sum().item<double>() == doctest::Approx(2.5 * 1000003));
}

TEST_CASE("cuda copy: a gradient flows back through to(device)") {
  Tensor x = make_input({3, 4}, kDouble).requires_grad_(true);
  Tensor y = x.to(cuda_device());
  CHECK(y.requires_grad());
  (y.to(Device(kCPU)) * 2).sum().backward();
  check_same(x.grad().to(cuda_device()), full({3, 4}, 2.0, kDouble));
}
