// Tensors past 2^31 elements: indexing, copies, views and reductions need 64-bit offsets, and
// random numbers 64-bit generator counters. One CPU case allocates a 2^31 + 4096 element
// uint8 tensor (2 GiB) and makes a few passes over it; EMBER_SKIP_BIG_TENSORS=1 skips it on
// machines without the memory (CI runs it). The same checks on the GPU, where drawing 2^31
// random numbers is cheap, are in tests/cuda/test_big_tensors.cpp.
//
// Drawing 2^31 numbers on the CPU is not done here: ember draws one Philox block per element
// (core/ops/random.cpp), about 10-20 s for 2^31 on two cores. Instead the generator's counter
// is put past 2^31 and 2^32 directly and the numbers are checked against Philox itself, and
// random_ writes into a strided view that lies past 2^31.
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/philox.h"
#include "op_check.h"

using namespace ember;
using ember::test::longs;
using ember::test::values;

namespace {
constexpr int64_t k2to31 = int64_t{1} << 31;

bool skip_big() {
  const char* skip = std::getenv("EMBER_SKIP_BIG_TENSORS");
  if (skip && *skip && std::string(skip) != "0") {
    MESSAGE("EMBER_SKIP_BIG_TENSORS is set: the 2 GiB tensor case is skipped");
    return true;
  }
  return false;
}

/// Moves the default CPU generator to (seed, offset); returns the seed (Philox's key).
uint64_t put_generator_at(uint64_t seed, uint64_t offset) {
  Generator& g = default_cpu_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_current_seed(seed);
  g.set_offset(offset);
  return seed;
}
}  // namespace

TEST_CASE("big tensors: a uint8 tensor of 2^31 + 4096 elements: copy, index, views, reductions, random_") {
  if (skip_big()) return;
  const int64_t n = k2to31 + 4096;  // a multiple of 64
  Tensor x = empty({n}, kByte);
  // i % 64 everywhere, written by a broadcasting copy (one TensorIter over all 2^31 + 4096).
  x.view({n / 64, 64}).copy_(arange(64, kByte).expand({n / 64, 64}));
  CHECK(values(x.index_select(0, longs({0, 63, k2to31 - 1, k2to31, k2to31 + 5, n - 1}))) ==
        std::vector<double>{0, 63, 63, 0, 5, 63});
  // Writes through views at the far end.
  x.narrow(0, n - 3, 3).fill_(200);
  x.narrow(0, k2to31 + 7, 1).fill_(250);
  CHECK(x.index({n - 1}).item<uint8_t>() == 200);
  // Reductions over all of it: the maximum and its index lie past 2^31 (an int32 index would wrap).
  CHECK(x.amax().item<uint8_t>() == 250);
  CHECK(x.argmax().item<int64_t>() == k2to31 + 7);
  // A uint8 sum wraps modulo 256: every element counts. The pattern sums to 0 mod 256 (2^25 + 64
  // rows of 2016); the writes changed 61 + 62 + 63 -> 600 and 7 -> 250: 657 = 145 mod 256.
  CHECK(x.sum(kByte).item<uint8_t>() == 145);
  // The exact int64 sum of all of it, widened element by element (it once made a 17 GiB int64
  // copy first): (n / 64) rows of 2016, plus 600 - 186 and 250 - 7 from the writes.
  CHECK(x.sum().item<int64_t>() == n / 64 * 2016 + 414 + 243);
  // The exact sum of the last 4096 (a narrow past 2^31): 64 rows of 2016, with both changes.
  CHECK(x.narrow(0, n - 4096, 4096).sum().item<int64_t>() == 64 * 2016 - 186 + 600 - 7 + 250);
  // 2-d views: row 1 of (2, n/2) ends at the last element; its transpose reads it too.
  Tensor m = x.view({2, n / 2});
  CHECK(m.select(0, 1).select(0, n / 2 - 1).item<uint8_t>() == 200);
  CHECK(m.t().select(0, n / 2 - 1).select(0, 1).item<uint8_t>() == 200);
  CHECK(x.as_strided({2}, {n - 1}).select(0, 1).item<uint8_t>() == 200);

  // random_ into every other element of the 4096 past 2^31: the values land at those offsets,
  // equal Philox's numbers for the generator's state, and the elements between are untouched.
  uint64_t key = put_generator_at(31, 0);
  Tensor strided = x.narrow(0, k2to31, 4096).slice(0, 0, 4096, 2);
  strided.random_(0, 256);
  std::vector<double> got = values(x.narrow(0, k2to31, 4096));
  double mean = 0;
  for (int64_t k = 0; k < 2048; ++k) {
    double want = static_cast<double>(philox::bits64(key, static_cast<uint64_t>(k)) % 256);
    if (got[static_cast<size_t>(2 * k)] != want) {
      FAIL_CHECK("element " << k2to31 + 2 * k << ": got " << got[2 * k] << ", expected " << want);
      break;
    }
    mean += want / 2048;
  }
  CHECK(mean > 110);  // uniform on 0..255: 127.5, standard error 1.6
  CHECK(mean < 145);
  CHECK(got[1] == 1);
  CHECK(got[7] == 250);
  CHECK(got[4091] == 59);
  CHECK(got[4095] == 200);
}

TEST_CASE("big tensors: random numbers with the generator's counter past 2^31 and 2^32") {
  for (uint64_t offset : {uint64_t{k2to31} - 5, (uint64_t{1} << 32) - 5, (uint64_t{1} << 40) + 3}) {
    INFO("offset " << offset);
    uint64_t key = put_generator_at(2024, offset);
    std::vector<double> r = values(empty({64}, kByte).random_(0, 256));
    std::vector<double> want(64);
    for (size_t k = 0; k < 64; ++k) want[k] = static_cast<double>(philox::bits64(key, offset + k) % 256);
    CHECK(r == want);
    // The generator moved by exactly the 64 blocks drawn.
    {
      Generator& g = default_cpu_generator();
      std::lock_guard<std::mutex> lock(g.mutex());
      CHECK(g.offset() == offset + 64);
    }
    // bernoulli_ on float takes the 8-lane path, whose counters' low words wrap at 2^32 - 5
    // + 5: it must decide exactly as the scalar rule u(key, counter + k) < p.
    put_generator_at(2024, offset);
    std::vector<double> b = values(empty({61}, kFloat).bernoulli_(0.3));
    std::vector<double> bwant(61);
    for (size_t k = 0; k < 61; ++k) bwant[k] = philox::uniform01(key, offset + k) < 0.3 ? 1.0 : 0.0;
    CHECK(b == bwant);
    // randint draws the same numbers from the same state.
    put_generator_at(2024, offset);
    CHECK(values(randint(0, 256, {64}, kByte)) == want);
  }
}
