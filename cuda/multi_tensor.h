// How a fused optimizer step covers many tensors with few kernel launches (the plan behind
// cuda/optim.cu, in the manner of PyTorch's multi_tensor_apply). Plain C++ (no CUDA header),
// so the packing is unit-tested on the CPU (tests/core/test_cuda_multi_tensor.cpp).
//
// The tensors of one step (all of one device and dtype) are cut into chunks of
// kMultiTensorChunk elements; every block of a launch handles one chunk of one tensor. A
// launch takes its tensors' addresses by value, in a TensorTable kernel argument: per tensor
// `Depth` pointers (parameter, gradient, state tensors, in a fixed order), the element count
// and `Scalars` per-tensor doubles (Adam's bias-corrected step size, for example), and per
// block the table slot and chunk it works on. CUDA limits kernel arguments to 4 KB, so a
// table holds at most TensorTable::kMaxTensors tensors and kMultiTensorMaxBlocks blocks; the
// plan starts a new launch when either is full, and a tensor with chunks left over continues
// in the next launch (in a slot of its own there).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/host_device.h"

namespace ember::cuda {

/// Elements per block: big enough that each of the kMultiTensorThreads threads streams
/// 128 elements (the block's cost dwarfs its start-up), small enough that a small model's
/// tensors still spread over many SMs.
constexpr int64_t kMultiTensorChunk = 65536;
constexpr int kMultiTensorThreads = 512;
/// Blocks per launch: the per-block table entries cost 5 bytes each.
constexpr int kMultiTensorMaxBlocks = 320;
/// Bytes of the 4 KB kernel-argument space the table may use; the rest is left to the
/// functor holding the step's scalars.
constexpr size_t kMultiTensorTableBytes = 3584;

/// How many tensors a table of `depth` pointers and `scalars` doubles per tensor holds
/// (each costs depth + 1 + scalars 8-byte words; slot indices are bytes, so at most 255).
constexpr int multi_tensor_max_tensors(int depth, int scalars) {
  const size_t per_block = sizeof(int32_t) + sizeof(uint8_t);
  const size_t per_tensor = 8 * static_cast<size_t>(depth + 1 + (scalars > 0 ? scalars : 1));
  const size_t n = (kMultiTensorTableBytes - per_block * kMultiTensorMaxBlocks) / per_tensor;
  return static_cast<int>(std::min<size_t>(n, 255));
}

/// The kernel argument of one launch. Plain data: filled on the host (fill_table), read by
/// every block (chunk_of).
template <int Depth, int Scalars>
struct TensorTable {
  static constexpr int kDepth = Depth;
  static constexpr int kScalars = Scalars;
  static constexpr int kMaxTensors = multi_tensor_max_tensors(Depth, Scalars);
  static constexpr int kMaxBlocks = kMultiTensorMaxBlocks;

  void* ptrs[Depth][kMaxTensors];                          // ptrs[k][slot]: the k-th tensor list's data
  int64_t numel[kMaxTensors];                              // elements of the tensor in `slot`
  double scalars[Scalars > 0 ? Scalars : 1][kMaxTensors];  // per-tensor values, as the step defines them
  int32_t block_chunk[kMaxBlocks];                         // which chunk of its tensor a block does
  uint8_t block_slot[kMaxBlocks];                          // which slot a block works on
};

/// The work of one block: elements [begin, end) of the tensor in table slot `slot`.
struct ChunkRange {
  int slot;
  int64_t begin;
  int64_t end;
};

template <class Table>
EMBER_HOST_DEVICE inline ChunkRange chunk_of(const Table& t, int block) {
  const int slot = t.block_slot[block];
  const int64_t begin = static_cast<int64_t>(t.block_chunk[block]) * kMultiTensorChunk;
  const int64_t end = begin + kMultiTensorChunk < t.numel[slot] ? begin + kMultiTensorChunk : t.numel[slot];
  return {slot, begin, end};
}

/// One launch of the plan: which tensors (indices into the step's lists) fill the table's
/// slots, and for each block its (slot, chunk).
struct MultiTensorLaunch {
  struct Block {
    int slot;
    int64_t chunk;
  };
  std::vector<size_t> tensors;
  std::vector<Block> blocks;
};

/// The launches that cover tensors of `numels` elements (empty tensors get none), with at
/// most `max_tensors` slots and `max_blocks` blocks each, tensors in order, chunks of
/// `chunk` elements in order.
inline std::vector<MultiTensorLaunch> plan_multi_tensor(const std::vector<int64_t>& numels, int max_tensors,
                                                        int max_blocks, int64_t chunk = kMultiTensorChunk) {
  EMBER_CHECK(max_tensors > 0 && max_blocks > 0 && chunk > 0, "plan_multi_tensor: bad limits");
  std::vector<MultiTensorLaunch> launches;
  MultiTensorLaunch cur;
  auto flush = [&] {
    if (!cur.blocks.empty()) launches.push_back(std::move(cur));
    cur = MultiTensorLaunch{};
  };
  for (size_t t = 0; t < numels.size(); ++t) {
    const int64_t chunks = (numels[t] + chunk - 1) / chunk;
    EMBER_CHECK(chunks <= std::numeric_limits<int32_t>::max(), "plan_multi_tensor: a tensor of ", numels[t],
                " elements has too many chunks");
    for (int64_t c = 0; c < chunks; ++c) {
      if (static_cast<int>(cur.blocks.size()) == max_blocks) flush();
      // The tensor takes a slot in this launch on its first chunk here.
      if (cur.tensors.empty() || cur.tensors.back() != t) {
        if (static_cast<int>(cur.tensors.size()) == max_tensors) flush();
        cur.tensors.push_back(t);
      }
      cur.blocks.push_back({static_cast<int>(cur.tensors.size()) - 1, c});
    }
  }
  flush();
  return launches;
}

/// Fills `table` for `launch`: ptr(k, i) is the data of list k's tensor i, numel(i) its
/// element count, scalar(j, i) its j-th per-tensor value.
template <class Table, class Ptr, class Numel, class Scalar>
void fill_table(const MultiTensorLaunch& launch, Ptr ptr, Numel numel, Scalar scalar, Table& table) {
  EMBER_CHECK(static_cast<int>(launch.tensors.size()) <= Table::kMaxTensors &&
                  static_cast<int>(launch.blocks.size()) <= Table::kMaxBlocks,
              "fill_table: the launch does not fit its table");
  for (size_t s = 0; s < launch.tensors.size(); ++s) {
    const size_t i = launch.tensors[s];
    for (int k = 0; k < Table::kDepth; ++k) table.ptrs[k][s] = ptr(k, i);
    table.numel[s] = numel(i);
    for (int j = 0; j < Table::kScalars; ++j) table.scalars[j][s] = scalar(j, i);
  }
  for (size_t b = 0; b < launch.blocks.size(); ++b) {
    table.block_slot[b] = static_cast<uint8_t>(launch.blocks[b].slot);
    table.block_chunk[b] = static_cast<int32_t>(launch.blocks[b].chunk);
  }
}

}  // namespace ember::cuda
