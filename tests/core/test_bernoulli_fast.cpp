// The vectorized scalar-p bernoulli_ (core/cpu/random.cpp) and dropout's fused noise against
// the scalar sampler: the same Philox stream bit for bit, on odd sizes, on generator offsets
// whose eight-block groups straddle a 2^32 counter boundary, for probabilities at the edges,
// and for non-contiguous tensors (which take the general path).
#include "ember/core/generator.h"
#include "ember/core/ops/dropout.h"
#include "ember/core/ops/random_internal.h"
#include "op_check.h"

using namespace ember;
using ember::test::values;

namespace {

/// Sets the CPU generator to (seed, offset).
void seek(uint64_t seed, uint64_t offset) {
  manual_seed(seed);
  default_generator(Device(kCPU)).set_offset(offset);
}

}  // namespace

TEST_CASE("bernoulli_ with a scalar p draws the scalar sampler's numbers") {
  const uint64_t offsets[] = {0, 5, (uint64_t{1} << 32) - 13, (uint64_t{3} << 32) - 3};
  for (ScalarType t : {kFloat, kDouble})
    for (int64_t n : {1, 7, 8, 9, 31, 1000, 70001})
      for (double p : {1e-20, 0.1, 0.25, 0.5, 0.75, 1 - 1e-12})
        for (uint64_t off : offsets) {
          CAPTURE(n);
          CAPTURE(p);
          CAPTURE(off);
          seek(11, off);
          Tensor fast = empty({n}, t).bernoulli_(p);
          uint64_t after = default_generator(Device(kCPU)).offset();
          seek(11, off);
          Tensor ref = empty({n}, t);
          detail::bernoulli_scalar_reference_(ref, p);
          CHECK(values(fast) == values(ref));
          CHECK(default_generator(Device(kCPU)).offset() == after);
        }
}

TEST_CASE("bernoulli_ on a non-contiguous tensor and in 16-bit types keeps the stream") {
  seek(3, 0);
  Tensor base = zeros({9, 13});
  Tensor view = base.t();
  view.bernoulli_(0.3);
  seek(3, 0);
  Tensor ref = empty({13, 9});
  detail::bernoulli_scalar_reference_(ref, 0.3);
  CHECK(values(view) == values(ref));
  for (ScalarType t : {kHalf, kBFloat16}) {
    seek(4, 100);
    Tensor h = empty({37}, t).bernoulli_(0.6);
    seek(4, 100);
    Tensor r = empty({37}, t);
    detail::bernoulli_scalar_reference_(r, 0.6);
    CHECK(values(h) == values(r));
  }
}

TEST_CASE("dropout's fused noise equals bernoulli_ then div_") {
  for (ScalarType t : {kFloat, kDouble, kHalf})
    for (int64_t n : {1, 15, 16, 17, 4099})
      for (double p : {0.1, 0.25, 0.5, 0.9}) {
        CAPTURE(n);
        CAPTURE(p);
        Tensor x = randn({n}).to(t);
        manual_seed(21);
        Tensor y = dropout(x, p, true);
        manual_seed(21);
        Tensor noise = empty_like(x).bernoulli_(1 - p);
        noise.div_(1 - p);
        CHECK(values(y) == values(x * noise));
        // The non-contiguous input: the same mask over its logical order.
        Tensor x2 = randn({2, n}).to(t).t();
        manual_seed(22);
        Tensor y2 = dropout(x2, p, true);
        manual_seed(22);
        Tensor noise2 = empty_like(x2).bernoulli_(1 - p).div_(1 - p);
        CHECK(values(y2) == values(x2 * noise2));
      }
}
