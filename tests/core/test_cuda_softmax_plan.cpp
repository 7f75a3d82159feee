// The launch plans of the CUDA softmax kernels (cuda/softmax_plan.h) on the CPU: which kernel
// each shape gets, block sizes within the kernels' launch bounds and shared memory, and the
// kernels' thread-to-element maps (run here exactly as the kernels loop) reaching every
// element of every softmax line exactly once, including past the grid cap. No GPU involved.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <utility>

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
      CHECK(p.block_x <= 32);  // a row's lanes share a warp (shuffle width)
      CHECK(p.threads() == kSoftmaxRegisterThreads);
      CHECK(is_pow2(p.per_lane));
      CHECK(p.per_lane <= 32);
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
  SoftmaxPlan past = plan_softmax(64, 1025, 1);
  CHECK(past.kernel == SoftmaxKernel::kBlockRows);
  CHECK(past.block_x == 256);
  CHECK(plan_softmax(8192, 4096, 1).block_x == 512);
  CHECK(plan_softmax(3, 3000, 1).block_x == 512);
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
                         {64, 1025, 1}, {2, 1 << 20, 1}, {3, 7, 20}, {4, 3000, 2}, {2, 5, 1000}, {1, 1, 3}})
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
  check_covers(2, 1025, 1);   // the shortest block row
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
