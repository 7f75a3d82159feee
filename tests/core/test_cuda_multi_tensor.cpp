// The multi-tensor launch plan of the fused CUDA optimizer steps (cuda/multi_tensor.h) on the
// CPU: the tables fit CUDA's 4 KB of kernel arguments, every element of every tensor is
// visited exactly once by the blocks' chunk_of ranges (the kernel's own index math), the
// limits on tensors and blocks per launch hold, tensors that do not fit one launch continue
// in the next one, empty tensors take no block, and fill_table packs pointers, sizes and
// per-tensor scalars into the slots the blocks name. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/core/error.h"
#include "ember/cuda/multi_tensor.h"

using namespace ember;
using namespace ember::cuda;

namespace {

/// Runs `plan` as the kernels would (fill_table, then chunk_of for every block) and counts
/// the visits of every element of every tensor; checks every launch against the table's limits.
template <int Depth, int Scalars>
std::vector<std::vector<int>> visits(const std::vector<int64_t>& numels,
                                     const std::vector<MultiTensorLaunch>& plan) {
  using Table = TensorTable<Depth, Scalars>;
  std::vector<std::vector<int>> seen(numels.size());
  for (size_t t = 0; t < numels.size(); ++t) seen[t].assign(static_cast<size_t>(numels[t]), 0);
  for (const MultiTensorLaunch& launch : plan) {
    REQUIRE(!launch.blocks.empty());
    REQUIRE(static_cast<int>(launch.tensors.size()) <= Table::kMaxTensors);
    REQUIRE(static_cast<int>(launch.blocks.size()) <= Table::kMaxBlocks);
    auto table = std::make_unique<Table>();
    // Each tensor's "pointer" is its index, so the test can tell which tensor a slot holds.
    fill_table(
        launch, [](int, size_t i) { return reinterpret_cast<void*>(i + 1); },
        [&](size_t i) { return numels[i]; },
        [](int j, size_t i) { return 1000.0 * j + static_cast<double>(i); }, *table);
    for (int b = 0; b < static_cast<int>(launch.blocks.size()); ++b) {
      const ChunkRange r = chunk_of(*table, b);
      REQUIRE(r.slot >= 0);
      REQUIRE(r.slot < static_cast<int>(launch.tensors.size()));
      const size_t t = reinterpret_cast<size_t>(table->ptrs[0][r.slot]) - 1;
      CHECK(t == launch.tensors[static_cast<size_t>(r.slot)]);
      REQUIRE(r.begin >= 0);
      REQUIRE(r.begin < r.end);
      REQUIRE(r.end <= numels[t]);
      CHECK(r.end - r.begin <= kMultiTensorChunk);
      for (int64_t i = r.begin; i < r.end; ++i) ++seen[t][static_cast<size_t>(i)];
    }
  }
  return seen;
}

template <int Depth, int Scalars>
void check_exactly_once(const std::vector<int64_t>& numels) {
  using Table = TensorTable<Depth, Scalars>;
  auto plan = plan_multi_tensor(numels, Table::kMaxTensors, Table::kMaxBlocks);
  auto seen = visits<Depth, Scalars>(numels, plan);
  for (size_t t = 0; t < numels.size(); ++t) {
    CAPTURE(t);
    int64_t wrong = 0;
    for (int v : seen[t]) wrong += v != 1;
    CHECK(wrong == 0);
  }
}

}  // namespace

TEST_CASE(
    "test_cuda_multi_tensor: every table fits the 4 KB of kernel arguments with room for the step's "
    "scalars") {
  CHECK(sizeof(TensorTable<2, 0>) <= kMultiTensorTableBytes);  // SGD without momentum
  CHECK(sizeof(TensorTable<3, 1>) <= kMultiTensorTableBytes);  // SGD with momentum
  CHECK(sizeof(TensorTable<4, 2>) <= kMultiTensorTableBytes);  // Adam
  CHECK(sizeof(TensorTable<5, 2>) <= kMultiTensorTableBytes);  // Adam with amsgrad
  CHECK(kMultiTensorTableBytes + 256 <= 4096);
  // Enough tensors per launch that a small model's step is one or two launches.
  CHECK(TensorTable<5, 2>::kMaxTensors >= 30);
  CHECK(TensorTable<2, 0>::kMaxTensors >= 60);
  CHECK(TensorTable<2, 0>::kMaxTensors <= 255);  // slots are bytes
}

TEST_CASE("test_cuda_multi_tensor: small tensors share one launch, one block each") {
  std::vector<int64_t> numels = {10, 1, 65536, 300};
  auto plan = plan_multi_tensor(numels, 8, 16);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].tensors == std::vector<size_t>{0, 1, 2, 3});
  REQUIRE(plan[0].blocks.size() == 4);
  for (int b = 0; b < 4; ++b) {
    CHECK(plan[0].blocks[b].slot == b);
    CHECK(plan[0].blocks[b].chunk == 0);
  }
  check_exactly_once<4, 2>(numels);
}

TEST_CASE(
    "test_cuda_multi_tensor: a tensor larger than a chunk takes one block per chunk, the last one partial") {
  std::vector<int64_t> numels = {3 * kMultiTensorChunk + 17, 5};
  auto plan = plan_multi_tensor(numels, 8, 16);
  REQUIRE(plan.size() == 1);
  REQUIRE(plan[0].blocks.size() == 5);
  for (int c = 0; c < 4; ++c) {
    CHECK(plan[0].blocks[c].slot == 0);
    CHECK(plan[0].blocks[c].chunk == c);
  }
  CHECK(plan[0].blocks[4].slot == 1);
  check_exactly_once<4, 2>(numels);
  check_exactly_once<2, 0>(numels);
}

TEST_CASE("test_cuda_multi_tensor: more tensors than a table holds start a new launch") {
  std::vector<int64_t> numels(7, 100);
  auto plan = plan_multi_tensor(numels, 3, 100);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].tensors == std::vector<size_t>{0, 1, 2});
  CHECK(plan[1].tensors == std::vector<size_t>{3, 4, 5});
  CHECK(plan[2].tensors == std::vector<size_t>{6});
  // With the real limits: 70 small tensors (a deep model's biases) in as few launches as fit.
  using Table = TensorTable<5, 2>;
  std::vector<int64_t> many(70, 1000);
  auto real = plan_multi_tensor(many, Table::kMaxTensors, Table::kMaxBlocks);
  CHECK(real.size() == static_cast<size_t>((70 + Table::kMaxTensors - 1) / Table::kMaxTensors));
  check_exactly_once<5, 2>(many);
}

TEST_CASE(
    "test_cuda_multi_tensor: a tensor whose chunks overflow a launch continues in the next, in its own "
    "slot") {
  const int64_t c = kMultiTensorChunk;
  std::vector<int64_t> numels = {2 * c, 5 * c + 1, 10};
  auto plan = plan_multi_tensor(numels, 8, 4);
  // Launch 1: tensor 0's two chunks and tensor 1's chunks 0-1; launch 2: tensor 1's last
  // chunks 2-5, which fill it; launch 3: tensor 2.
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].tensors == std::vector<size_t>{0, 1});
  CHECK(plan[1].tensors == std::vector<size_t>{1});
  CHECK(plan[1].blocks.front().chunk == 2);
  CHECK(plan[1].blocks.back().chunk == 5);
  CHECK(plan[2].tensors == std::vector<size_t>{2});
  for (const auto& l : plan) CHECK(l.blocks.size() <= 4);
  // The same shapes under the real limits, and a tensor of more chunks than a launch has
  // blocks (a 25M-element embedding).
  check_exactly_once<5, 2>(numels);
  check_exactly_once<3, 1>({7, 25'000'000, 3, 0, 1});
  using Table = TensorTable<3, 1>;
  auto big = plan_multi_tensor({25'000'000}, Table::kMaxTensors, Table::kMaxBlocks);
  const int64_t chunks = (25'000'000 + c - 1) / c;
  CHECK(big.size() == static_cast<size_t>((chunks + Table::kMaxBlocks - 1) / Table::kMaxBlocks));
}

TEST_CASE("test_cuda_multi_tensor: empty tensors get no block, and all-empty lists no launch") {
  CHECK(plan_multi_tensor({0, 0, 0}, 8, 8).empty());
  CHECK(plan_multi_tensor({}, 8, 8).empty());
  auto plan = plan_multi_tensor({0, 4, 0, 9}, 8, 8);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].tensors == std::vector<size_t>{1, 3});
  check_exactly_once<4, 2>({0, 4, 0, 9});
}

TEST_CASE("test_cuda_multi_tensor: fill_table packs each slot's pointers, size and scalars") {
  std::vector<int64_t> numels = {5, 70000, 8};
  auto plan = plan_multi_tensor(numels, 8, 8);
  REQUIRE(plan.size() == 1);
  auto table = std::make_unique<TensorTable<3, 2>>();
  fill_table(
      plan[0],
      [](int k, size_t i) { return reinterpret_cast<void*>(16 * (10 * i + static_cast<size_t>(k) + 1)); },
      [&](size_t i) { return numels[i]; },
      [](int j, size_t i) { return j == 0 ? -0.5 * static_cast<double>(i) : 2.0; }, *table);
  for (size_t s = 0; s < 3; ++s) {
    for (int k = 0; k < 3; ++k)
      CHECK(reinterpret_cast<size_t>(table->ptrs[k][s]) == 16 * (10 * s + static_cast<size_t>(k) + 1));
    CHECK(table->numel[s] == numels[s]);
    CHECK(table->scalars[0][s] == -0.5 * static_cast<double>(s));
    CHECK(table->scalars[1][s] == 2.0);
  }
  // Tensor 1 has two chunks: blocks 1 and 2, the second starting at element 65536.
  ChunkRange r = chunk_of(*table, 2);
  CHECK(r.slot == 1);
  CHECK(r.begin == kMultiTensorChunk);
  CHECK(r.end == 70000);
  CHECK_THROWS_AS(fill_table(
                      MultiTensorLaunch{std::vector<size_t>(300, 0), {}}, [](int, size_t) { return nullptr; },
                      [](size_t) { return int64_t{0}; }, [](int, size_t) { return 0.0; }, *table),
                  Error);
}
