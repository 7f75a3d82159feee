// pin_memory / is_pinned on the CPU side: without a CUDA device nothing is pinned and
// pin_memory says so in PyTorch's words; with one, the copy is pinned and equal.
// (Asynchronous copies from pinned memory are tested in tests/cuda/test_runtime.cpp.)
#include "op_check.h"

using namespace ember;

TEST_CASE("test_pin_memory: is_pinned and pin_memory") {
  Tensor t = arange(6, kFloat).view({2, 3});
  CHECK_FALSE(t.is_pinned());
  if (!cuda::is_available()) {
    CHECK_THROWS_WITH_AS(t.pin_memory(), "Cannot access accelerator device when none is available.", Error);
    CHECK(cuda::memory_allocated() == 0);  // torch.cuda's statistics before CUDA is used
    cuda::empty_cache();                   // and a no-op
    return;
  }
  Tensor p = t.pin_memory();
  CHECK(p.is_pinned());
  CHECK(test::values(p) == test::values(t));
  CHECK(p.sizes().vec() == t.sizes().vec());
  Tensor q = t.t().pin_memory();  // a non-contiguous source is pinned row-major
  CHECK(q.is_pinned());
  CHECK(test::values(q) == test::values(t.t()));
}

TEST_CASE("test_pin_memory: pin_memory keeps the autograd history") {
  if (!cuda::is_available()) return;
  Tensor x = arange(3, kDouble).requires_grad_();
  Tensor p = x.pin_memory();
  CHECK(p.requires_grad());
  (p * 2).sum().backward();
  CHECK(test::values(x.grad()) == std::vector<double>{2, 2, 2});
}
