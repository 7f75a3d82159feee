// Tensors past 2^31 elements on CUDA (the GPU half of tests/reliability/test_big_tensors.cpp):
// a 2^31 + 4096 element uint8 tensor drawn by random_ and bernoulli_ (every element, which the
// GPU does in milliseconds), checked at the far end against Philox computed on the host, then
// written through a broadcasting copy and read back through index_select, amax and argmax.
// Also pytorch#125224's CUDA case: restoring the generator's state replays, and the draws after
// it never repeat the earlier ones.
#include <mutex>
#include <set>

#include "cuda/parity.h"
#include "ember/core/philox.h"

using namespace ember;
using namespace ember::test;

namespace {
constexpr int64_t k2to31 = int64_t{1} << 31;

/// Puts the current CUDA device's generator at (seed, offset).
void put_cuda_generator_at(uint64_t seed, uint64_t offset) {
  Generator& g = default_cuda_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_current_seed(seed);
  g.set_offset(offset);
}

}  // namespace

TEST_CASE("cuda big tensors: random_, bernoulli_, copy, index_select and argmax past 2^31 elements") {
  const int64_t n = k2to31 + 4096;
  TensorOptions u8 = TensorOptions().dtype(kByte).device(cuda_device());
  Tensor x = empty({n}, u8);
  Tensor far = tensor(std::vector<int64_t>{0, k2to31 - 1, k2to31, k2to31 + 4095}).to(cuda_device());

  put_cuda_generator_at(31, 0);
  x.random_(0, 256);
  std::vector<double> got = host_values(x.index_select(0, far));
  std::vector<double> want;
  for (int64_t k : {int64_t{0}, k2to31 - 1, k2to31, k2to31 + 4095})
    want.push_back(static_cast<double>(philox::bits64(31, static_cast<uint64_t>(k)) % 256));
  CHECK(got == want);
  // The last 4096 (all past 2^31): Philox's numbers, so not all zero and near 127.5 on average.
  std::vector<double> tail = host_values(x.narrow(0, k2to31, 4096));
  double mean = 0;
  size_t mismatches = 0;
  for (size_t k = 0; k < 4096; ++k) {
    mismatches += tail[k] != static_cast<double>(philox::bits64(31, static_cast<uint64_t>(k2to31) + k) % 256);
    mean += tail[k] / 4096;
  }
  CHECK(mismatches == 0);
  CHECK(mean > 115);
  CHECK(mean < 140);

  put_cuda_generator_at(32, 0);
  Tensor b = empty({n}, TensorOptions().dtype(kBool).device(cuda_device())).bernoulli_(0.25);
  std::vector<double> bt = host_values(b.narrow(0, n - 4096, 4096));
  for (size_t k = 0; k < 4096; k += 97) {
    INFO("element " << n - 4096 + static_cast<int64_t>(k));
    CHECK(bt[k] == (philox::uniform01(32, static_cast<uint64_t>(n - 4096) + k) < 0.25 ? 1.0 : 0.0));
  }

  // i % 64 by a broadcasting copy, one large value past 2^31: amax and argmax find it.
  x.view({n / 64, 64}).copy_(arange(64, u8).expand({n / 64, 64}));
  x.narrow(0, k2to31 + 7, 1).fill_(250);
  CHECK(host_values(x.index_select(0, far)) == std::vector<double>{0, 63, 0, 63});
  CHECK(x.amax().item<uint8_t>() == 250);
  CHECK(x.argmax().item<int64_t>() == k2to31 + 7);
  CHECK(x.sum(kByte).item<uint8_t>() == static_cast<uint8_t>(250 - 7));
}

// Just under 2^31 one-byte elements, the n-d kernels take 32-bit offsets (every byte offset
// fits) while i + the grid's stride (2^28 threads) passes INT32_MAX: with a 32-bit loop counter
// the last round wrapped negative and wrote before the tensor (Note [grid-stride counter width]
// in cuda/loops.cuh). A broadcasting add (gpu_map's n-d kernel) and an index_select
// (cuda/index.cu's indexed move), each checked on its whole last row.
TEST_CASE("cuda big tensors: n-d elementwise and gather just under 2^31 elements (32-bit offsets)") {
  const int64_t rows = 65536, cols = 32767;  // 2^31 - 65536 elements
  const TensorOptions i64 = TensorOptions().dtype(kLong).device(cuda_device());
  Tensor r = arange(0, rows, i64).to(kByte).view({rows, 1});  // k mod 256
  Tensor c = arange(0, cols, i64).to(kByte).view({1, cols});
  Tensor y = r + c;
  REQUIRE(y.sizes() == IntArrayRef{rows, cols});
  std::vector<double> last = host_values(y.narrow(0, rows - 1, 1).reshape({cols}));
  size_t bad = 0;
  for (int64_t j = 0; j < cols; ++j) bad += last[static_cast<size_t>(j)] != static_cast<double>(((rows - 1) + j) % 256);
  CHECK(bad == 0);

  Tensor src = arange(0, rows * 2, i64).to(kByte).view({rows, 2});  // src[i][k] = (2 i + k) mod 256
  Tensor idx = arange(0, cols, i64).remainder(2);
  Tensor out = src.index_select(1, idx);
  REQUIRE(out.sizes() == IntArrayRef{rows, cols});
  last = host_values(out.narrow(0, rows - 1, 1).reshape({cols}));
  bad = 0;
  for (int64_t j = 0; j < cols; ++j) bad += last[static_cast<size_t>(j)] != static_cast<double>((2 * (rows - 1) + j % 2) % 256);
  CHECK(bad == 0);
}

TEST_CASE("cuda pytorch#125224: restoring the CUDA generator's state replays; later draws are new") {
  manual_seed(125224);
  Generator& g = default_cuda_generator();
  std::vector<uint8_t> state;
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    state = g.get_state();
  }
  TensorOptions f64 = TensorOptions().dtype(kDouble).device(cuda_device());
  std::vector<double> a = host_values(rand({1000}, f64));
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    g.set_state(state);
  }
  CHECK(host_values(rand({1000}, f64)) == a);
  std::vector<double> c = host_values(rand({1000}, f64));
  std::set<double> both(a.begin(), a.end());
  both.insert(c.begin(), c.end());
  CHECK(both.size() == 2000);
}
