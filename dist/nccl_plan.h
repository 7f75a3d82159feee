// ProcessGroupNCCL's device-free decisions (dist/process_group_nccl.cpp uses them; the CPU
// test tests/dist/test_nccl_plan.cpp runs them): the dtype and reduction each call hands NCCL
// (and the refusals, in c10d's words), the store keys ranks exchange ncclUniqueIds under, the
// device a barrier runs on, the input checks, and the watchdog's timeout bookkeeping and text.
//
// NCCL's enums are mirrored here by value so this header needs no nccl.h; the .cpp checks the
// values against nccl.h with static_asserts.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/dist/process_group.h"

namespace ember::dist::nccl_plan {

/// ncclDataType_t's values (nccl.h).
enum class NcclDataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
};

/// ncclRedOp_t's values (nccl.h; ncclAvg since NCCL 2.10).
enum class NcclRedOp : int { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4 };

/// The NCCL type of a tensor's dtype, as c10d maps it: bool travels as uint8.
inline NcclDataType nccl_data_type(ScalarType t) {
  switch (t) {
    case kChar:
      return NcclDataType::Int8;
    case kByte:
    case kBool:
      return NcclDataType::Uint8;
    case kInt:
      return NcclDataType::Int32;
    case kLong:
      return NcclDataType::Int64;
    case kHalf:
      return NcclDataType::Float16;
    case kFloat:
      return NcclDataType::Float32;
    case kDouble:
      return NcclDataType::Float64;
    case kBFloat16:
      return NcclDataType::Bfloat16;
    default:
      break;
  }
  ::ember::detail::throw_error(::ember::detail::str_cat(
      "Input tensor data type is not supported for NCCL process group: ", scalar_type_name(t)));
}

/// The NCCL reduction for `op` on `t`. Bool tensors (uint8 0/1 to NCCL): SUM is "any", so MAX;
/// PRODUCT is "all", so MIN; AVG has no meaning (c10d's refusal). The bitwise ops have no NCCL
/// reduction.
inline NcclRedOp nccl_reduce_op(ReduceOp op, ScalarType t) {
  if (t == kBool) {
    if (op.op_ == ReduceOp::SUM) return NcclRedOp::Max;
    if (op.op_ == ReduceOp::PRODUCT) return NcclRedOp::Min;
    EMBER_CHECK(op.op_ != ReduceOp::AVG, "Cannot use ReduceOp.AVG with boolean inputs");
  }
  switch (op.op_) {
    case ReduceOp::SUM:
      return NcclRedOp::Sum;
    case ReduceOp::AVG:
      return NcclRedOp::Avg;
    case ReduceOp::PRODUCT:
      return NcclRedOp::Prod;
    case ReduceOp::MIN:
      return NcclRedOp::Min;
    case ReduceOp::MAX:
      return NcclRedOp::Max;
    default:
      break;
  }
  ::ember::detail::throw_error(
      ::ember::detail::str_cat("Cannot use ReduceOp.", reduce_op_name(op), " with NCCL"));
}

// ---- communicators and their rendezvous ------------------------------------------------

/// The store key of the n-th group communicator this process group creates (c10d: the
/// running count of communicators, as decimal text). Rank 0 sets it, the others get it.
inline std::string unique_id_key(uint64_t comm_counter) { return std::to_string(comm_counter); }

/// The cache key (and store key) of the two-rank communicator send/recv between `a` and `b`
/// use (c10d's "low:high"): the same on both sides.
inline std::string p2p_key(int a, int b) {
  return std::to_string(a < b ? a : b) + ":" + std::to_string(a < b ? b : a);
}

/// This rank's rank inside the two-rank send/recv communicator: the lower global rank is 0
/// (and is the one that makes and publishes the ncclUniqueId).
inline int p2p_rank(int my_rank, int peer) { return my_rank < peer ? 0 : 1; }

/// The device a barrier's one-element allreduce runs on (c10d): BarrierOptions.device_ids[0]
/// when given, else the device of the most recent collective, else rank % device_count.
inline int barrier_device(const std::vector<int64_t>& device_ids, int last_used_device, int rank,
                          int device_count) {
  if (!device_ids.empty()) return static_cast<int>(device_ids[0]);
  if (last_used_device >= 0) return last_used_device;
  EMBER_CHECK(device_count > 0, "ProcessGroupNCCL is only supported with GPUs, no GPUs found!");
  return rank % device_count;
}

// ---- input checks, in c10d's words ----------------------------------------------------

/// c10d's check_gpu_single_tensor: a dense, contiguous CUDA tensor.
inline void check_gpu_tensor(const Tensor& t) {
  EMBER_CHECK(t.defined() && t.is_cuda(), "Tensors must be CUDA and dense");
  EMBER_CHECK(t.is_contiguous(), "Tensors must be contiguous");
}

/// c10d's ProcessGroupNCCL takes one tensor per call (one device per process or thread).
inline void check_single_tensor(size_t n) {
  EMBER_CHECK(n == 1,
              "Expecting one tensor only but got multiple. You are probably using multiple devices under "
              "one thread. The support for such usage has been deprecated. ProcessGroupNCCL continues "
              "supporting multi-process and multi-thread modes.");
}

/// The tensors of a list (allgather's outputs, reduce_scatter's inputs): one per rank, each
/// CUDA and contiguous, on `like`'s device, with its dtype and element count.
inline void check_tensor_list(const std::vector<Tensor>& list, const Tensor& like, int group_size) {
  EMBER_CHECK(static_cast<int>(list.size()) == group_size,
              "Tensor list input to scatter/gather must match number of collective participants");
  for (const auto& t : list) {
    check_gpu_tensor(t);
    EMBER_CHECK(t.device() == like.device(), "Expecting all tensors on the same device");
    EMBER_CHECK(t.dtype() == like.dtype(), "Tensors must have identical type");
    EMBER_CHECK(t.numel() == like.numel(), "Tensors must have identical size");
  }
}

inline void check_root(const char* fn, int64_t root, int size) {
  EMBER_CHECK(root >= 0 && root < size, fn, ": invalid root rank: ", root);
}

inline void check_peer(int peer, int rank, int size, const char* what) {
  EMBER_CHECK(peer >= 0 && peer < size, "Invalid ", what, " rank: ", peer);
  EMBER_CHECK(peer != rank, "Invalid ", what, " rank: ", what,
              " rank should not be the same as the rank of the current process.");
}

// ---- the watchdog ----------------------------------------------------------------------

/// c10d's OpType names (WorkNCCL's description).
enum class OpType { BROADCAST, ALLREDUCE, REDUCE, ALLGATHER, REDUCE_SCATTER, BARRIER, SEND, RECV };

inline const char* op_type_name(OpType t) {
  switch (t) {
    case OpType::BROADCAST:
      return "BROADCAST";
    case OpType::ALLREDUCE:
      return "ALLREDUCE";
    case OpType::REDUCE:
      return "REDUCE";
    case OpType::ALLGATHER:
      return "ALLGATHER";
    case OpType::REDUCE_SCATTER:
      return "REDUCE_SCATTER";
    case OpType::BARRIER:
      return "BARRIER";
    case OpType::SEND:
      return "SEND";
    case OpType::RECV:
      return "RECV";
  }
  return "UNKNOWN";
}

using Clock = std::chrono::steady_clock;

/// What the watchdog knows of one issued work.
struct WorkRecord {
  uint64_t seq = 0;
  OpType op = OpType::ALLREDUCE;
  int64_t numel_in = 0;
  int64_t numel_out = 0;
  std::chrono::milliseconds timeout{0};
  Clock::time_point start{};
};

/// "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000)".
inline std::string work_description(const WorkRecord& w) {
  return ::ember::detail::str_cat("WorkNCCL(SeqNum=", w.seq, ", OpType=", op_type_name(w.op),
                                  ", NumelIn=", w.numel_in, ", NumelOut=", w.numel_out,
                                  ", Timeout(ms)=", w.timeout.count(), ")");
}

/// Whether an unfinished work has run past its timeout at `now`.
inline bool timed_out(const WorkRecord& w, Clock::time_point now) { return now - w.start > w.timeout; }

inline int64_t elapsed_ms(const WorkRecord& w, Clock::time_point now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - w.start).count();
}

/// c10d's watchdog text for a work that timed out.
inline std::string timeout_message(int rank, const WorkRecord& w, Clock::time_point now) {
  return ::ember::detail::str_cat("[Rank ", rank,
                                  "] Watchdog caught collective operation timeout: ", work_description(w),
                                  " ran for ", elapsed_ms(w, now), " milliseconds before timing out.");
}

/// The indices of the unfinished works (`finished[i]` false) that have timed out at `now`.
inline std::vector<size_t> timed_out_works(const std::vector<WorkRecord>& works,
                                           const std::vector<bool>& finished, Clock::time_point now) {
  std::vector<size_t> out;
  for (size_t i = 0; i < works.size(); ++i)
    if (!finished[i] && timed_out(works[i], now)) out.push_back(i);
  return out;
}

/// The group's timeout for an option struct's (kUnsetTimeout: the group's default).
inline std::chrono::milliseconds effective_timeout(std::chrono::milliseconds opt,
                                                   std::chrono::milliseconds group) {
  return opt == kUnsetTimeout ? group : opt;
}

}  // namespace ember::dist::nccl_plan
