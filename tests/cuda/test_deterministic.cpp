// Deterministic mode on CUDA (core/deterministic.h): an assigning scatter whose indices repeat
// raises PyTorch's alert naming the op (or warns with warn_only), while distinct indices, a
// one-element value and accumulation run as usual; cuDNN convolutions pick deterministic
// algorithms (also under benchmark), so forward and backward repeat bit for bit.
#include <cstring>
#include <iostream>
#include <sstream>

#include "cuda/parity.h"
#include "ember/core/backends.h"
#include "ember/core/deterministic.h"

using namespace ember;
using namespace ember::test;

namespace {

struct DeterministicScope {
  bool was = are_deterministic_algorithms_enabled(), warn = is_deterministic_algorithms_warn_only_enabled();
  explicit DeterministicScope(bool warn_only = false) { use_deterministic_algorithms(true, warn_only); }
  ~DeterministicScope() { use_deterministic_algorithms(was, warn); }
};

template <class F>
void check_error(F&& fn, const std::string& text) {
  std::string what;
  try {
    fn();
  } catch (const Error& e) {
    what = e.what();
  }
  INFO("error text: " << what);
  CHECK(what.find(text) != std::string::npos);
}

Tensor longs_on_cuda(std::vector<int64_t> v) { return tensor(v).to(cuda_device()); }
Tensor doubles_on_cuda(std::vector<double> v) { return tensor(v).to(cuda_device()); }

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  Tensor ca = a.to(Device(kCPU)).contiguous(), cb = b.to(Device(kCPU)).contiguous();
  return ca.sizes().vec() == cb.sizes().vec() && std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

}  // namespace

TEST_CASE("cuda deterministic mode: repeated indices in index_put_ and scatter raise the alert") {
  DeterministicScope on;
  Tensor dst = zeros({5}, TensorOptions().dtype(kDouble).device(cuda_device()));
  check_error(
      [&] {
        index_put_(dst, {longs_on_cuda({1, 3, 1})}, doubles_on_cuda({1, 2, 3}), false);
      },
      "index_put_ with accumulate=False and repeated indices on CUDA does not have a deterministic "
      "implementation, but you set 'torch.use_deterministic_algorithms(True)'.");
  Tensor d2 = zeros({2, 4}, TensorOptions().dtype(kDouble).device(cuda_device()));
  Tensor idx2 = longs_on_cuda({0, 2, 2, 1, 3, 0}).view({2, 3});
  Tensor src2 = doubles_on_cuda({1, 2, 3, 4, 5, 6}).view({2, 3});
  check_error([&] { d2.scatter(1, idx2, src2); }, "scatter with a src tensor and repeated indices on CUDA");
  // No race, no alert: distinct indices, a one-element value, a scalar, accumulation.
  index_put_(dst, {longs_on_cuda({4, 0, 2})}, doubles_on_cuda({1, 2, 3}), false);
  CHECK(host_values(dst) == std::vector<double>{2, 0, 3, 0, 1});
  index_put_(dst, {longs_on_cuda({1, 1})}, doubles_on_cuda({7}), false);
  CHECK(host_values(dst) == std::vector<double>{2, 7, 3, 0, 1});
  index_put_(dst, {longs_on_cuda({1, 1})}, doubles_on_cuda({1, 2}), true);
  CHECK(host_values(dst) == std::vector<double>{2, 10, 3, 0, 1});
  CHECK(host_values(d2.scatter(1, idx2, 9.0).view({-1})) == std::vector<double>{9, 0, 9, 0, 9, 9, 0, 9});
  CHECK(host_values(d2.scatter(1, longs_on_cuda({3, 0, 1, 2}).view({2, 2}),
                               doubles_on_cuda({1, 2, 3, 4}).view({2, 2}))
                        .view({-1})) == std::vector<double>{2, 0, 0, 1, 0, 3, 4, 0});
}

TEST_CASE("cuda deterministic mode: warn_only warns and runs") {
  DeterministicScope on(/*warn_only=*/true);
  Tensor dst = zeros({3}, TensorOptions().dtype(kDouble).device(cuda_device()));
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  index_put_(dst, {longs_on_cuda({0, 0})}, doubles_on_cuda({1, 2}), false);
  std::cerr.rdbuf(old);
  CHECK(captured.str().find(
            "UserWarning: index_put_ with accumulate=False and repeated indices on CUDA does not "
            "have a deterministic implementation") == 0);
  const double v = host_values(dst)[0];
  CHECK((v == 1 || v == 2));
}

TEST_CASE("cuda deterministic mode: cuDNN convolution repeats bit for bit, also with benchmark on") {
  DeterministicScope on;
  const bool was_benchmark = backends::cudnn::benchmark;
  for (bool bench : {false, true}) {
    INFO("benchmark " << bench);
    backends::cudnn::benchmark = bench;
    Tensor x = make_input({16, 8, 32, 32}, kFloat, -1, 1, 1).to(cuda_device());
    Tensor w = make_input({16, 8, 3, 3}, kFloat, -1, 1, 2).to(cuda_device());
    auto run = [&] {
      Tensor xl = x.detach().requires_grad_(), wl = w.detach().requires_grad_();
      Tensor y = conv2d(xl, wl, Tensor(), 1, 1);
      (y * y).sum().backward();
      return std::vector<Tensor>{y.detach(), xl.grad(), wl.grad()};
    };
    auto first = run(), second = run();
    for (size_t i = 0; i < first.size(); ++i) CHECK(bitwise_equal(first[i], second[i]));
  }
  backends::cudnn::benchmark = was_benchmark;
}
