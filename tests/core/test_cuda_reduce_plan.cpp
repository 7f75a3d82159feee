// The launch plans of the CUDA reductions and scans (cuda/reduce_plan.h) on the CPU: the
// index maps reach every element in row-major order after merging dims, the thread mapping
// the kernels follow covers every (output, reduced element) pair exactly once, the choice
// between rows and columns of lanes, and when the reduced range (or a scan's lines) is split
// into chunks. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <map>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/cuda/reduce_plan.h"

using namespace ember;
using namespace ember::cuda;

namespace {

constexpr int kH200Sms = 132;

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * sizes[d + 1];
  return st;
}

/// Offsets of every (output, reduced) pair in row-major order, computed directly.
std::vector<std::vector<int64_t>> expected_offsets(const std::vector<int64_t>& sizes,
                                                   const std::vector<int64_t>& strides, uint64_t mask) {
  std::vector<int64_t> kept, red;
  for (size_t d = 0; d < sizes.size(); ++d) ((mask >> d) & 1 ? red : kept).push_back(static_cast<int64_t>(d));
  auto count = [&](const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= sizes[d];
    return n;
  };
  auto offset = [&](const std::vector<int64_t>& dims, int64_t i) {
    int64_t off = 0;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      off += (i % sizes[*it]) * strides[*it];
      i /= sizes[*it];
    }
    return off;
  };
  std::vector<std::vector<int64_t>> out(count(kept));
  for (int64_t o = 0; o < count(kept); ++o)
    for (int64_t r = 0; r < count(red); ++r) out[o].push_back(offset(kept, o) + offset(red, r));
  return out;
}

/// Runs the kernel's thread mapping (cuda/reduce.cuh, reduce_kernel) on the CPU: which
/// (output, reduced position) pairs each thread of each block folds, and how often.
std::map<std::pair<int64_t, int64_t>, int> simulate(const ReducePlan& p) {
  std::map<std::pair<int64_t, int64_t>, int> seen;
  for (int64_t bx = 0; bx < p.grid_x; ++bx)
    for (int64_t by = 0; by < p.splits; ++by)
      for (int ty = 0; ty < p.block_y; ++ty)
        for (int tx = 0; tx < p.block_x; ++tx) {
          int lane = p.outputs_along_x ? ty : tx, lanes = p.lanes();
          int slot = p.outputs_along_x ? tx : ty;
          int64_t o = bx * p.outputs_per_block() + slot;
          if (o >= p.n_out) continue;
          int64_t begin = by * p.chunk, end = std::min(p.n_red, begin + p.chunk);
          for (int64_t r = begin + lane; r < end; r += int64_t{lanes} * kReduceIlp)
            for (int j = 0; j < kReduceIlp; ++j)
              if (r + j * lanes < end) ++seen[{o, r + j * lanes}];
        }
  return seen;
}

void check_plan_covers(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, uint64_t mask,
                       int sms) {
  INFO("sizes " << sizes.size() << "-d, mask " << mask << ", sms " << sms);
  ReducePlan p = plan_reduce(IntArrayRef(sizes.data(), sizes.size()),
                             IntArrayRef(strides.data(), strides.size()), mask, sms);
  CHECK(p.block_x * p.block_y == kReduceThreads);
  auto want = expected_offsets(sizes, strides, mask);
  REQUIRE(p.n_out == static_cast<int64_t>(want.size()));
  for (int64_t o = 0; o < p.n_out; ++o) {
    REQUIRE(p.n_red == static_cast<int64_t>(want[o].size()));
    for (int64_t r = 0; r < p.n_red; ++r) CHECK(p.kept.offset(o) + p.reduced.offset(r) == want[o][r]);
  }
  auto seen = simulate(p);
  CHECK(static_cast<int64_t>(seen.size()) == p.n_out * p.n_red);
  for (const auto& [key, times] : seen) CHECK(times == 1);
}

ReducePlan plan_of(const std::vector<int64_t>& sizes, uint64_t mask, int sms = kH200Sms) {
  auto st = contiguous_strides(sizes);
  return plan_reduce(IntArrayRef(sizes.data(), sizes.size()), IntArrayRef(st.data(), st.size()), mask, sms);
}

}  // namespace

TEST_CASE("cuda reduce plan: index maps follow row-major order through merged and strided dims") {
  check_plan_covers({3, 4, 5}, contiguous_strides({3, 4, 5}), 0b010, 0);
  check_plan_covers({3, 4, 5}, contiguous_strides({3, 4, 5}), 0b101, 0);
  check_plan_covers({3, 4, 5}, contiguous_strides({3, 4, 5}), 0b111, 0);
  check_plan_covers({3, 4, 5}, contiguous_strides({3, 4, 5}), 0b000, 0);  // no reduced dim
  check_plan_covers({6, 1, 7}, {1, 6, 6}, 0b001, 0);                      // transposed, size-1 dim
  check_plan_covers({4, 5, 6}, {60, 2, 10}, 0b110, 0);                    // permuted and sliced
  check_plan_covers({2, 3, 4, 5}, {1, 2, 6, 24}, 0b1010, 0);              // reversed layout
  check_plan_covers({8, 9}, {0, 1}, 0b01, 0);                             // expanded (stride 0)
  check_plan_covers({}, {}, 0, 0);                                        // 0-dim
  check_plan_covers({3, 0, 4}, contiguous_strides({3, 0, 4}), 0b010, 0);  // empty reduction
}

TEST_CASE("cuda reduce plan: every pair is folded once, with and without splits") {
  check_plan_covers({50000}, {1}, 1, kH200Sms);                          // one long row, split
  check_plan_covers({30000, 3}, {3, 1}, 0b01, kH200Sms);                 // sums over dim 0, split
  check_plan_covers({37, 130}, contiguous_strides({37, 130}), 0b10, 4);  // rows of lanes
  check_plan_covers({130, 37}, contiguous_strides({130, 37}), 0b01, 4);  // columns of lanes
  check_plan_covers({9, 2, 700}, {1400, 1, 2}, 0b101, kH200Sms);         // outer dims strided
}

TEST_CASE("cuda reduce plan: rows of lanes for dense reduced dims, columns for dense kept dims") {
  ReducePlan rows = plan_of({64, 1000}, 0b10);
  CHECK_FALSE(rows.outputs_along_x);
  CHECK(rows.block_x == 256);  // 1000 elements: a full block of lanes per output
  CHECK(rows.grid_x == 64);
  ReducePlan few = plan_of({1000, 6}, 0b10);
  CHECK_FALSE(few.outputs_along_x);
  CHECK(few.block_x == 2);  // 6 elements: 2 lanes of up to kReduceIlp each, 128 outputs a block
  CHECK(few.block_y == 128);
  ReducePlan cols = plan_of({1000, 64}, 0b01);
  CHECK(cols.outputs_along_x);
  CHECK(cols.block_x == 32);  // one warp reads 32 neighbouring outputs of a row
  CHECK(cols.block_y == 8);
  CHECK(cols.grid_x == 2);
  ReducePlan narrow = plan_of({100000, 4}, 0b01);
  CHECK(narrow.outputs_along_x);
  CHECK(narrow.block_x == 4);
  CHECK(narrow.block_y == 64);
}

TEST_CASE("cuda reduce plan: the reduced range is split only when outputs cannot fill the GPU") {
  int64_t n = (int64_t{1} << 20) + 3;
  ReducePlan all = plan_of({n}, 1);
  CHECK(all.n_out == 1);
  CHECK(all.splits > 1);
  CHECK(all.splits <= int64_t{kBlocksPerSm} * kH200Sms);
  CHECK(all.chunk % (all.lanes() * kReduceIlp) == 0);
  CHECK(all.splits * all.chunk >= n);
  CHECK((all.splits - 1) * all.chunk < n);
  CHECK(plan_of({n}, 1, /*sms=*/0).splits == 1);
  CHECK(plan_of({4096, 4096}, 0b10).splits == 1);  // 4096 outputs already fill the GPU
  CHECK(plan_of({100, 10}, 0b10).splits == 1);     // too little work to split
  ReducePlan dim0 = plan_of({1 << 20, 4}, 0b01);
  CHECK(dim0.outputs_along_x);
  CHECK(dim0.splits > 1);
}

TEST_CASE("cuda reduce plan: partials are folded per output in one unsplit pass") {
  ReducePlan one = plan_partials(1, 500);
  CHECK(one.n_out == 1);
  CHECK(one.n_red == 500);
  CHECK_FALSE(one.outputs_along_x);
  CHECK(one.splits == 1);
  CHECK(one.reduced.offset(7) == 7);
  ReducePlan many = plan_partials(6, 40);
  CHECK(many.outputs_along_x);
  CHECK(many.splits == 1);
  CHECK(many.kept.offset(5) + many.reduced.offset(3) == 3 * 6 + 5);  // partials[split][output]
}

TEST_CASE("cuda reduce plan: too many unmergeable dims are refused") {
  std::vector<int64_t> sizes(30, 2), strides(30);
  for (int d = 0; d < 30; ++d) strides[d] = int64_t{1} << d;  // reversed layout: nothing merges
  CHECK_THROWS_AS(plan_reduce(IntArrayRef(sizes.data(), 30), IntArrayRef(strides.data(), 30), 1, 0), Error);
}

TEST_CASE("cuda scan plan: lines are cut into runs only when there are few of them") {
  std::vector<int64_t> one_line = {(1 << 20) + 3};
  ScanPlan p = plan_scan(IntArrayRef(one_line.data(), 1), 0, kH200Sms);
  CHECK(p.outer == 1);
  CHECK(p.inner == 1);
  CHECK(p.chunks > 1);
  CHECK(p.chunks <= 4 * 1024 + 1);  // about 4 sqrt(n) runs: the prefix pass stays short
  CHECK(p.chunk >= kScanMinChunk);
  CHECK(p.chunks * p.chunk >= p.n);
  CHECK((p.chunks - 1) * p.chunk < p.n);

  std::vector<int64_t> many = {4096, 100, 80};
  ScanPlan q = plan_scan(IntArrayRef(many.data(), 3), 1, kH200Sms);
  CHECK(q.outer == 4096);
  CHECK(q.n == 100);
  CHECK(q.inner == 80);
  CHECK(q.chunks == 1);  // 327680 lines keep every SM full
  CHECK(q.chunk == 100);
  std::vector<int64_t> fewer = {4096, 100, 8};  // 32768 lines: about a quarter of the GPU
  ScanPlan r = plan_scan(IntArrayRef(fewer.data(), 3), 1, kH200Sms);
  CHECK(r.chunks > 1);
  CHECK(r.chunks * r.chunk >= 100);

  std::vector<int64_t> short_lines = {3, 40};
  CHECK(plan_scan(IntArrayRef(short_lines.data(), 2), 1, kH200Sms).chunks == 1);

  ScanPlan scalar = plan_scan(IntArrayRef(), 0, kH200Sms);
  CHECK(scalar.units() == 1);
  CHECK(scalar.chunk == 1);
}
