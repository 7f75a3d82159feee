// The launch plans of the CUDA softmax kernels (cuda/softmax_plan.h) on the CPU: which kernel
// each shape gets, block sizes within the kernels' launch bounds and shared memory, and the
// kernels' thread-to-element maps (run here exactly as the kernels loop) reaching every
// element of every softmax line exactly once, including past the grid cap. Then the running
// (max, sum) pair of cuda/softmax_math.h, folded in the block kernel's order (per thread, a
// shuffle butterfly per warp, the warps in order), against the CPU softmax on rows with
// -inf, NaN and +inf. No GPU involved.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "ember/cuda/softmax_math.h"
#include "ember/cuda/softmax_plan.h"

using namespace ember::cuda;

namespace {

/// Runs the kernels' loops (cuda/softmax.cu) for plan p, with `grid` blocks instead of p.grid
/// when given: how often each (line, position along n) is visited, line = o * inner + i.
std::map<std::pair<int64_t, int64_t>, int> simulate(const SoftmaxPlan& p, int64_t grid = 0) {
  if (grid == 0) grid = p.grid;
  std::map<std::pair<int64_t, int64_t>, int> seen;
  for (int64_t b = 0; b < grid; ++b)
    for (int64_t u = b; u < p.units; u += grid)
      for (int ty = 0; ty < p.block_y; ++ty)
        for (int tx = 0; tx < p.block_x; ++tx) {
          switch (p.kernel) {
            case SoftmaxKernel::kRegisterRows: {
              int64_t row = p.register_row(u, ty);
              if (row >= p.outer) break;
              for (int i = 0; i < p.per_lane; ++i)
                if (p.register_col(tx, i) < p.n) ++seen[{row, p.register_col(tx, i)}];
              break;
            }
            case SoftmaxKernel::kBlockRows:
              for (int64_t j = tx; j < p.n; j += p.block_x) ++seen[{u, j}];
              break;
            case SoftmaxKernel::kStrided: {
              int64_t col = p.strided_col(u, tx);
              if (col >= p.inner) break;
              for (int64_t j = ty; j < p.n; j += p.block_y) ++seen[{p.strided_outer(u) * p.inner + col, j}];
              break;
            }
          }
        }
  return seen;
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

void check_covers(int64_t outer, int64_t n, int64_t inner, int64_t grid = 0) {
  INFO("outer " << outer << ", n " << n << ", inner " << inner << ", grid " << grid);
  SoftmaxPlan p = plan_softmax(outer, n, inner);
  auto seen = simulate(p, grid);
  CHECK(static_cast<int64_t>(seen.size()) == outer * n * inner);
  for (const auto& [key, times] : seen) CHECK(times == 1);
}

/// The limits the kernels rely on: launch bounds, shared memory, full warps for shuffles.
void check_limits(const SoftmaxPlan& p) {
  CHECK(is_pow2(p.block_x));
  CHECK(is_pow2(p.block_y));
  CHECK(p.grid >= 1);
  CHECK(p.grid <= kSoftmaxMaxGrid);
  switch (p.kernel) {
    case SoftmaxKernel::kRegisterRows:
      if (p.block_x <= 32) {  // a row's lanes share a warp (shuffle width), 128-thread blocks
        CHECK(p.threads() == kSoftmaxRegisterThreads);
        CHECK(is_pow2(p.per_lane));
        CHECK(p.per_lane <= 32);
      } else {  // one row a block (the fold's barriers), the block kernel's one instantiation
        CHECK(p.block_y == 1);
        CHECK(p.block_x <= kSoftmaxBlockMaxThreads);
        CHECK(p.per_lane == kSoftmaxBlockPerLane);
      }
      CHECK(int64_t{p.block_x} * p.per_lane >= p.n);
      break;
    case SoftmaxKernel::kBlockRows:
      CHECK(p.block_y == 1);
      CHECK(p.block_x >= 32);  // whole warps: the fold's second stage uses shared memory per warp
      CHECK(p.block_x <= kSoftmaxBlockMaxThreads);
      break;
    case SoftmaxKernel::kStrided:
      CHECK(p.block_x <= 32);
      CHECK(p.threads() <= kSoftmaxStridedThreads);  // the shared-memory fold's size
      break;
  }
}

}  // namespace

TEST_CASE("cuda softmax plan: the kernel and block shape for each row length") {
  SoftmaxPlan tiny = plan_softmax(100, 7, 1);
  CHECK(tiny.kernel == SoftmaxKernel::kRegisterRows);
  CHECK(tiny.block_x == 8);  // 8 lanes of one element; 16 rows per 128-thread block
  CHECK(tiny.per_lane == 1);
  CHECK(tiny.block_y == 16);
  CHECK(tiny.units == 7);
  SoftmaxPlan one = plan_softmax(5, 1, 1);
  CHECK(one.block_x == 1);
  CHECK(one.block_y == 128);
  SoftmaxPlan mid = plan_softmax(64, 33, 1);
  CHECK(mid.block_x == 32);
  CHECK(mid.per_lane == 2);
  SoftmaxPlan full = plan_softmax(64, 1024, 1);
  CHECK(full.kernel == SoftmaxKernel::kRegisterRows);
  CHECK(full.per_lane == 32);
  CHECK(full.block_y == 4);
  SoftmaxPlan past = plan_softmax(64, 1025, 1);  // a block per row, 8 elements a lane
  CHECK(past.kernel == SoftmaxKernel::kRegisterRows);
  CHECK(past.block_x == 256);
  CHECK(past.block_y == 1);
  CHECK(past.per_lane == 8);
  CHECK(past.units == 64);
  SoftmaxPlan bench = plan_softmax(8192, 4096, 1);
  CHECK(bench.kernel == SoftmaxKernel::kRegisterRows);
  CHECK(bench.block_x == 512);
  CHECK(plan_softmax(3, 3000, 1).block_x == 512);
  SoftmaxPlan last = plan_softmax(3, 8192, 1);
  CHECK(last.kernel == SoftmaxKernel::kRegisterRows);
  CHECK(last.block_x == kSoftmaxBlockMaxThreads);
  SoftmaxPlan stream = plan_softmax(3, 8193, 1);  // past one block's registers: two passes
  CHECK(stream.kernel == SoftmaxKernel::kBlockRows);
  CHECK(stream.block_x == kSoftmaxBlockMaxThreads);
  CHECK(plan_softmax(2, 1 << 20, 1).block_x == kSoftmaxBlockMaxThreads);
  SoftmaxPlan strided = plan_softmax(3, 7, 20);
  CHECK(strided.kernel == SoftmaxKernel::kStrided);
  CHECK(strided.block_x == 32);
  CHECK(strided.block_y == 8);  // never more lanes along n than n has elements
  CHECK(strided.tiles == 1);
  SoftmaxPlan narrow = plan_softmax(4, 3000, 2);
  CHECK(narrow.block_x == 2);
  CHECK(narrow.block_y == 128);
  SoftmaxPlan wide = plan_softmax(2, 5, 1000);
  CHECK(wide.tiles == 32);
  CHECK(wide.units == 64);
  for (auto [o, n, i] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {100, 7, 1}, {64, 33, 1}, {64, 1024, 1},
                         {64, 1025, 1}, {3, 8192, 1}, {3, 8193, 1}, {2, 1 << 20, 1}, {3, 7, 20}, {4, 3000, 2}, {2, 5, 1000}, {1, 1, 3}})
    check_limits(plan_softmax(o, n, i));
}

TEST_CASE("cuda softmax plan: every element of every line once, in each kernel") {
  // The parity tests' shapes (3-d, softmax over each dim), short and long rows.
  for (auto [a, b, c] : {std::tuple<int64_t, int64_t, int64_t>{4, 5, 7}, {3, 4, 3000}, {3000, 2, 3}}) {
    check_covers(1, a, b * c);
    check_covers(a, b, c);
    check_covers(a * b, c, 1);
  }
  check_covers(37, 1, 1);
  check_covers(5, 17, 1);     // sub-warp lanes, a partial last block
  check_covers(9, 100, 1);    // 4 elements a lane, the last slots padding
  check_covers(3, 1024, 1);   // the longest register row
  check_covers(2, 1025, 1);   // the shortest block-wide register row
  check_covers(2, 8192, 1);   // the longest
  check_covers(2, 8193, 1);   // the shortest two-pass block row
  check_covers(3, 5, 1000);   // several column tiles, a partial last one
  check_covers(2, 300, 3);    // narrow columns, many lanes along n
}

TEST_CASE("cuda softmax plan: blocks loop over the units past the grid") {
  SoftmaxPlan huge = plan_softmax(int64_t{1} << 30, 10, 1);
  CHECK(huge.grid == kSoftmaxMaxGrid);
  CHECK(huge.units > huge.grid);
  // The same loops with a small grid: every element still once.
  check_covers(1000, 7, 1, 3);
  check_covers(50, 2000, 1, 7);
  check_covers(40, 6, 9, 5);
}

// ---- the running (max, sum) pair ------------------------------------------------------------

namespace {

using softmax_math::MaxSum;
using softmax_math::MaxSumOp;

bool same_bits(const MaxSum<float>& a, const MaxSum<float>& b) {
  return std::memcmp(&a.m, &b.m, sizeof(float)) == 0 && std::memcmp(&a.s, &b.s, sizeof(float)) == 0;
}

/// The block kernel's fold of row x with `threads` lanes (cuda/softmax.cu softmax_block_rows
/// and cuda/row_reduce.cuh row_allreduce): each lane folds its elements in order, lanes meet
/// in a butterfly within each warp (every lane must end with the same bits), then the warps'
/// results fold in warp order. Returns the row's outputs.
std::vector<float> emulate_block_row(const std::vector<float>& x, int threads, bool log) {
  using namespace softmax_math;
  std::vector<MaxSum<float>> lane(threads, MaxSum<float>{neg_inf<float>(), 0.0f});
  for (int t = 0; t < threads; ++t)
    for (size_t j = t; j < x.size(); j += threads) lane[t] = fold(lane[t], x[j]);
  int width = std::min(threads, 32);
  for (int d = width / 2; d > 0; d /= 2) {
    std::vector<MaxSum<float>> next(threads);
    for (int t = 0; t < threads; ++t) {
      int partner = (t / width) * width + ((t % width) ^ d);
      next[t] = MaxSumOp{}(lane[t], lane[partner]);
    }
    lane = next;
  }
  for (int t = 0; t < threads; ++t) CHECK(same_bits(lane[t], lane[(t / width) * width]));
  MaxSum<float> r = lane[0];
  for (int w = 1; w < threads / 32; ++w) r = MaxSumOp{}(r, lane[32 * w]);
  float s = final_sum(r);
  std::vector<float> out;
  for (float v : x) out.push_back(log ? softmax_out<true>(v, r.m, s) : softmax_out<false>(v, r.m, s));
  return out;
}

void check_row_matches_cpu(const std::vector<float>& x, int threads) {
  INFO("row of " << x.size() << " elements, " << threads << " lanes");
  ember::Tensor t = ember::tensor(x, ember::kFloat).view({1, static_cast<int64_t>(x.size())});
  for (bool log : {false, true}) {
    INFO((log ? "log_softmax" : "softmax"));
    ember::Tensor want_t = (log ? ember::log_softmax(t, 1) : ember::softmax(t, 1)).contiguous();
    const float* want = want_t.data_ptr<float>();
    std::vector<float> got = emulate_block_row(x, threads, log);
    for (size_t j = 0; j < x.size(); ++j) {
      INFO("element " << j << ": emulated " << got[j] << ", cpu " << want[j]);
      if (std::isnan(want[j]) || std::isinf(want[j])) {
        CHECK(std::isnan(got[j]) == std::isnan(want[j]));
        if (std::isinf(want[j])) CHECK(got[j] == want[j]);
      } else {
        CHECK(std::fabs(got[j] - want[j]) <= 1e-6 + 2e-6 * std::fabs(want[j]));
      }
    }
  }
}

}  // namespace

TEST_CASE("cuda softmax running pair: the block kernel's fold gives the CPU's softmax") {
  constexpr float kInf = std::numeric_limits<float>::infinity(), kNan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> random(3000);
  uint32_t state = 12345;
  for (float& v : random) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 20.0f - 10.0f;
  }
  std::vector<float> rising(1500), falling(1500);
  for (int i = 0; i < 1500; ++i) {
    rising[i] = 0.05f * i;
    falling[i] = -0.05f * i;
  }
  std::vector<std::vector<float>> rows = {random, rising, falling, {1.0f}, {-kInf}, {kNan}, {kInf}};
  // Special values in the middle of ordinary rows (ordinary and at each lane's first slot).
  for (float special : {-kInf, kNan, kInf}) {
    std::vector<float> r = random;
    r[0] = special;
    r[777] = special;
    rows.push_back(r);
  }
  std::vector<float> half_neg_inf = random;
  for (size_t j = 0; j < half_neg_inf.size(); j += 2) half_neg_inf[j] = -kInf;
  rows.push_back(half_neg_inf);
  rows.push_back(std::vector<float>(2000, -kInf));                       // only -inf: NaN
  rows.push_back({kInf, -kInf, 1.0f});                                   // +inf: NaN
  rows.push_back({-kInf, -kInf, 0.0f, -kInf});                           // one finite element: 1 / 0
  rows.push_back({88.0f, -88.0f, 87.0f, 0.0f, 86.5f, -100.0f, 88.5f});   // large logits, no overflow
  for (const auto& row : rows)
    for (int threads : {32, 128, 256, 1024}) check_row_matches_cpu(row, threads);
}

TEST_CASE("cuda softmax running pair: merging is commutative bitwise and -inf maxima merge cleanly") {
  using namespace softmax_math;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<MaxSum<float>> pairs = {{-kInf, 0.0f}, {-kInf, 3.0f}, {0.0f, 1.0f},   {2.5f, 7.25f},
                                      {2.5f, 1.0f},  {-1e30f, 2.0f}, {kInf, 1.0f}, {88.0f, 1e30f}};
  for (const auto& a : pairs)
    for (const auto& b : pairs) CHECK(same_bits(MaxSumOp{}(a, b), MaxSumOp{}(b, a)));
  // The empty pair is the identity; -inf elements add to the sum of an all -inf prefix, not NaN.
  MaxSum<float> empty{-kInf, 0.0f}, some{1.5f, 4.0f};
  CHECK(same_bits(MaxSumOp{}(empty, some), some));
  MaxSum<float> st = fold(fold(empty, -kInf), -kInf);
  CHECK(st.s == 2.0f);
  st = fold(st, 0.0f);
  CHECK(st.m == 0.0f);
  CHECK(st.s == 1.0f);
}
