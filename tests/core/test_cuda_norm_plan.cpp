// The launch plans of the CUDA normalization kernels (cuda/norm_plan.h) on the CPU: warp or
// block per row, the channel sums' block shapes and splits of N, and the kernels' thread maps
// (run here exactly as the kernels loop) reaching every element once: rows for layer / group
// norm, [N, K, S] channels for batch norm's sums and the parameter gradients. No GPU involved.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "ember/cuda/norm_plan.h"

using namespace ember::cuda;

namespace {

constexpr int kH200Sms = 132;

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// The row kernels' loops (cuda/normalization.cu) with `grid` blocks: visits per (row, d).
void check_rows_cover(int64_t rows, int64_t len, int64_t grid = 0) {
  INFO("rows " << rows << ", len " << len << ", grid " << grid);
  RowNormPlan p = plan_row_norm(rows, len);
  if (grid == 0) grid = p.grid;
  std::map<std::pair<int64_t, int64_t>, int> seen;
  for (int64_t b = 0; b < grid; ++b)
    for (int64_t u = b; u < p.units; u += grid)
      for (int ty = 0; ty < p.block_y; ++ty) {
        int64_t r = p.row(u, ty);
        if (r >= rows) continue;
        for (int tx = 0; tx < p.block_x; ++tx)
          for (int64_t d = tx; d < len; d += p.block_x) ++seen[{r, d}];
      }
  CHECK(static_cast<int64_t>(seen.size()) == rows * len);
  for (const auto& [key, times] : seen) CHECK(times == 1);
}

/// The channel sums' stage-1 loops: which (n, k, s) each block folds into which partial;
/// every element once, into the partial of its own channel.
void check_sums_cover(int64_t N, int64_t K, int64_t S, int sms) {
  INFO("N " << N << ", K " << K << ", S " << S << ", sms " << sms);
  ChannelSumPlan p = plan_channel_sums(N, K, S, sms);
  CHECK(p.block_x * p.block_y == kNormSumThreads);
  CHECK(is_pow2(p.block_x));
  CHECK(p.splits >= 1);
  CHECK(p.splits <= 65535);  // grid y
  CHECK(p.n_begin(p.splits - 1) < std::max<int64_t>(N, 1));  // no empty trailing chunk
  std::map<int64_t, int> seen;
  for (int64_t tile = 0; tile < p.tiles; ++tile)
    for (int64_t split = 0; split < p.splits; ++split)
      for (int ty = 0; ty < p.block_y; ++ty)
        for (int tx = 0; tx < p.block_x; ++tx) {
          int64_t k = p.channel(tile, tx);
          if (k >= K) continue;
          for (int64_t n = p.n_begin(split) + ty; n < p.n_end(split); n += p.block_y)
            for (int64_t s = p.columns ? 0 : tx; s < S; s += p.columns ? 1 : p.block_x) {
              int64_t off = p.offset(n, k, s);
              CHECK(off == (n * K + k) * S + s);
              ++seen[off];
            }
        }
  CHECK(static_cast<int64_t>(seen.size()) == N * K * S);
  for (const auto& [off, times] : seen) CHECK(times == 1);
  // Every channel has a block (its partials are written even when it has no elements).
  CHECK(p.tiles * (p.columns ? p.block_x : 1) >= K);
}

}  // namespace

TEST_CASE("cuda norm plan: a warp per short row, a block per long one") {
  RowNormPlan ln = plan_row_norm(20, 33);
  CHECK(ln.block_x == 32);
  CHECK(ln.block_y == kNormRowWarps);
  CHECK(ln.units == 3);
  RowNormPlan edge = plan_row_norm(4, kNormWarpMaxLen);
  CHECK(edge.block_x == 32);
  RowNormPlan big = plan_row_norm(8192, 4096);
  CHECK(big.block_x == kNormBlockMaxThreads);
  CHECK(big.block_y == 1);
  CHECK(big.units == 8192);
  CHECK(plan_row_norm(3, 1025).block_x == kNormBlockMinThreads * 2);  // 129 lanes' worth -> 256
  CHECK(plan_row_norm(3, 1 << 22).block_x == kNormBlockMaxThreads);
  RowNormPlan many = plan_row_norm(int64_t{1} << 32, 8);
  CHECK(many.grid == kNormMaxGrid);
  for (auto [r, d] : {std::pair<int64_t, int64_t>{20, 33}, {8192, 4096}, {3, 1025}, {1, 0}})
    CHECK(plan_row_norm(r, d).block_x * plan_row_norm(r, d).block_y <= kNormBlockMaxThreads);
}

TEST_CASE("cuda norm plan: row loops reach every element once") {
  check_rows_cover(20, 33);          // layer norm over the last dim of (4, 5, 33)
  check_rows_cover(4, 165);          // ... over the last two
  check_rows_cover(6, 105);          // group norm, 2 groups of 3 channels of 5x7
  check_rows_cover(3, 2000);         // block per row
  check_rows_cover(5, 0);            // empty rows (statistics only)
  check_rows_cover(100, 9, 2);       // a grid smaller than the units
  check_rows_cover(7, 3000, 3);
}

TEST_CASE("cuda norm plan: channel sums, columns when S == 1, one channel a block otherwise") {
  ChannelSumPlan ln = plan_channel_sums(8192, 4096, 1, kH200Sms);  // layer norm's gw / gb
  CHECK(ln.columns);
  CHECK(ln.block_x == 32);
  CHECK(ln.block_y == 8);
  CHECK(ln.tiles == 128);
  CHECK(ln.splits > 1);  // 128 tiles alone would leave the GPU mostly idle
  ChannelSumPlan bn = plan_channel_sums(64, 64, 3136, kH200Sms);  // batch norm, ResNet layer
  CHECK_FALSE(bn.columns);
  CHECK(bn.block_x == 256);
  CHECK(bn.block_y == 1);
  CHECK(bn.tiles == 64);
  CHECK(bn.splits > 1);
  CHECK(bn.n_chunk * bn.splits >= 64);
  ChannelSumPlan gn = plan_channel_sums(3, 6, 35, kH200Sms);  // group norm test shape
  CHECK(gn.block_x == 64);
  CHECK(gn.block_y == 4);
  CHECK(gn.splits == 1);  // too little work to split
  ChannelSumPlan one = plan_channel_sums(1, 1, 1 << 20, kH200Sms);
  CHECK(one.splits == 1);  // N = 1 cannot be split
  CHECK(plan_channel_sums(100000, 4, 1, 0).splits == 1);  // sm_count 0: never split
  ChannelSumPlan empty_n = plan_channel_sums(0, 5, 7, kH200Sms);
  CHECK(empty_n.splits == 1);
  ChannelSumPlan empty_s = plan_channel_sums(4, 6, 0, kH200Sms);
  CHECK(empty_s.splits == 1);
}

TEST_CASE("cuda norm plan: channel sums fold every element once, into its own channel") {
  check_sums_cover(3, 6, 35, kH200Sms);     // group norm parameters
  check_sums_cover(20, 33, 1, kH200Sms);    // layer norm parameters (columns)
  check_sums_cover(4, 6, 1, kH200Sms);      // batch norm 1d
  check_sums_cover(4, 3, 35, kH200Sms);     // batch norm 2d
  check_sums_cover(3000, 5, 1, kH200Sms);   // split into chunks of N, partial last tile
  check_sums_cover(900, 2, 40, kH200Sms);   // split, one channel a block
  check_sums_cover(37, 20, 300, 4);         // S past one block of lanes, split
  check_sums_cover(0, 5, 7, kH200Sms);      // nothing to add: zero sums
  check_sums_cover(4, 6, 0, kH200Sms);
}
