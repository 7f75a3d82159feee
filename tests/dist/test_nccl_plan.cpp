// ProcessGroupNCCL's device-free decisions (dist/nccl_plan.h), run on the CPU: the NCCL dtype
// and reduction of each dtype and ReduceOp (c10d's mapping and refusals, in its words), the
// store keys of the ncclUniqueId rendezvous, the barrier's device, the input checks, and the
// watchdog's timeout bookkeeping against a given clock. Also: what constructing the group does
// on a machine without a GPU, or in a build without NCCL.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/cuda/runtime/device.h"
#include "ember/dist/distributed.h"
#include "ember/dist/file_store.h"
#include "ember/dist/nccl_plan.h"
#include "ember/dist/process_group_nccl.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::dist::nccl_plan;
using namespace std::chrono_literals;

TEST_CASE("nccl plan: dtypes map to NCCL's as c10d maps them; bool travels as uint8") {
  CHECK(nccl_data_type(kFloat) == NcclDataType::Float32);
  CHECK(nccl_data_type(kDouble) == NcclDataType::Float64);
  CHECK(nccl_data_type(kHalf) == NcclDataType::Float16);
  CHECK(nccl_data_type(kBFloat16) == NcclDataType::Bfloat16);
  CHECK(nccl_data_type(kInt) == NcclDataType::Int32);
  CHECK(nccl_data_type(kLong) == NcclDataType::Int64);
  CHECK(nccl_data_type(kByte) == NcclDataType::Uint8);
  CHECK(nccl_data_type(kChar) == NcclDataType::Int8);
  CHECK(nccl_data_type(kBool) == NcclDataType::Uint8);
  // nccl.h's values (the .cpp static_asserts these against nccl.h itself).
  CHECK(static_cast<int>(NcclDataType::Float32) == 7);
  CHECK(static_cast<int>(NcclDataType::Bfloat16) == 9);
  CHECK_THROWS_WITH_AS(nccl_data_type(kShort),
                       "Input tensor data type is not supported for NCCL process group: Short", ember::Error);
}

TEST_CASE("nccl plan: reductions, bool's SUM/PRODUCT as MAX/MIN, and the refusals") {
  CHECK(nccl_reduce_op(ReduceOp::SUM, kFloat) == NcclRedOp::Sum);
  CHECK(nccl_reduce_op(ReduceOp::AVG, kFloat) == NcclRedOp::Avg);
  CHECK(nccl_reduce_op(ReduceOp::PRODUCT, kInt) == NcclRedOp::Prod);
  CHECK(nccl_reduce_op(ReduceOp::MIN, kHalf) == NcclRedOp::Min);
  CHECK(nccl_reduce_op(ReduceOp::MAX, kBFloat16) == NcclRedOp::Max);
  CHECK(nccl_reduce_op(ReduceOp::SUM, kBool) == NcclRedOp::Max);
  CHECK(nccl_reduce_op(ReduceOp::PRODUCT, kBool) == NcclRedOp::Min);
  CHECK(nccl_reduce_op(ReduceOp::MIN, kBool) == NcclRedOp::Min);
  CHECK(nccl_reduce_op(ReduceOp::MAX, kBool) == NcclRedOp::Max);
  CHECK_THROWS_WITH_AS(nccl_reduce_op(ReduceOp::AVG, kBool), "Cannot use ReduceOp.AVG with boolean inputs",
                       ember::Error);
  CHECK_THROWS_WITH_AS(nccl_reduce_op(ReduceOp::BAND, kInt), "Cannot use ReduceOp.BAND with NCCL",
                       ember::Error);
  CHECK_THROWS_WITH_AS(nccl_reduce_op(ReduceOp::BXOR, kBool), "Cannot use ReduceOp.BXOR with NCCL",
                       ember::Error);
}

TEST_CASE("nccl plan: the store keys of the ncclUniqueId rendezvous") {
  // Group communicators: the running count, the same sequence on every rank.
  CHECK(unique_id_key(0) == "0");
  CHECK(unique_id_key(12) == "12");
  // Pairs: "low:high" on both sides; the lower rank is rank 0 of the pair and makes the id.
  CHECK(p2p_key(3, 1) == "1:3");
  CHECK(p2p_key(1, 3) == "1:3");
  CHECK(p2p_rank(1, 3) == 0);
  CHECK(p2p_rank(3, 1) == 1);
}

TEST_CASE("nccl plan: the barrier's device") {
  CHECK(barrier_device({2}, 1, 5, 4) == 2);  // BarrierOptions.device_ids wins
  CHECK(barrier_device({}, 1, 5, 4) == 1);   // else the device of the last collective
  CHECK(barrier_device({}, -1, 5, 4) == 1);  // else rank % device_count
  CHECK(barrier_device({}, -1, 3, 8) == 3);
  CHECK_THROWS_WITH_AS(barrier_device({}, -1, 0, 0),
                       "ProcessGroupNCCL is only supported with GPUs, no GPUs found!", ember::Error);
}

TEST_CASE("nccl plan: input checks in c10d's words") {
  Tensor cpu = zeros({4});
  CHECK_THROWS_WITH_AS(check_gpu_tensor(cpu), "Tensors must be CUDA and dense", ember::Error);
  CHECK_THROWS_WITH_AS(check_gpu_tensor(Tensor()), "Tensors must be CUDA and dense", ember::Error);
  CHECK_NOTHROW(check_single_tensor(1));
  CHECK_THROWS_WITH_AS(check_single_tensor(2),
                       doctest::Contains("Expecting one tensor only but got multiple"), ember::Error);
  CHECK_THROWS_WITH_AS(check_tensor_list({cpu}, cpu, 2),
                       "Tensor list input to scatter/gather must match number of collective participants",
                       ember::Error);
  CHECK_THROWS_WITH_AS(check_root("ProcessGroupNCCL::broadcast", 2, 2),
                       "ProcessGroupNCCL::broadcast: invalid root rank: 2", ember::Error);
  CHECK_THROWS_WITH_AS(check_peer(1, 1, 2, "destination"),
                       "Invalid destination rank: destination rank should not be the same as the rank of the "
                       "current process.",
                       ember::Error);
  CHECK_THROWS_WITH_AS(check_peer(5, 0, 2, "source"), "Invalid source rank: 5", ember::Error);
}

TEST_CASE("nccl plan: the watchdog's timeout bookkeeping and text, against a given clock") {
  const auto t0 = Clock::time_point(std::chrono::seconds(1000));
  WorkRecord a{1, OpType::ALLREDUCE, 4, 4, 100ms, t0};
  WorkRecord b{2, OpType::ALLGATHER, 3, 6, 500ms, t0 + 50ms};
  WorkRecord c{3, OpType::BARRIER, 1, 1, 10ms, t0};
  std::vector<WorkRecord> works{a, b, c};

  CHECK(work_description(a) ==
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=100)");
  CHECK_FALSE(timed_out(a, t0 + 100ms));  // exactly at the timeout: not yet
  CHECK(timed_out(a, t0 + 101ms));

  CHECK(timed_out_works(works, {false, false, false}, t0 + 5ms).empty());
  CHECK(timed_out_works(works, {false, false, false}, t0 + 20ms) == std::vector<size_t>{2});
  CHECK(timed_out_works(works, {false, false, true}, t0 + 20ms).empty());  // finished works never time out
  CHECK(timed_out_works(works, {false, false, false}, t0 + 200ms) == std::vector<size_t>{0, 2});
  CHECK(timed_out_works(works, {false, false, false}, t0 + 551ms) == std::vector<size_t>{0, 1, 2});

  CHECK(timeout_message(3, a, t0 + 123ms) ==
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
        "NumelIn=4, "
        "NumelOut=4, Timeout(ms)=100) ran for 123 milliseconds before timing out.");
  CHECK(effective_timeout(kUnsetTimeout, 7s) == 7s);
  CHECK(effective_timeout(3s, 7s) == 3s);
  CHECK(std::string(op_type_name(OpType::REDUCE_SCATTER)) == "REDUCE_SCATTER");
}

TEST_CASE("ProcessGroupNCCL without a GPU or without NCCL: constructing it raises torch's words") {
  if (cuda::is_available() && ProcessGroupNCCL::is_available()) return;  // tests/cuda covers the GPU case
  std::string path = "/tmp/ember_nccl_plan_store_" + std::to_string(getpid());
  std::remove(path.c_str());
  auto store = std::make_shared<FileStore>(path, 1);
  const char* expected = ProcessGroupNCCL::is_available()
                             ? "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
                             : "Distributed package doesn't have NCCL built in";
  CHECK_THROWS_WITH_AS(ProcessGroupNCCL(store, 0, 1), expected, ember::Error);
  // init_process_group("nccl") reaches the same constructor, and leaves nothing initialized.
  CHECK_THROWS_WITH_AS(init_process_group("nccl", "file://" + path + "x?rank=0&world_size=1", 5s), expected,
                       ember::Error);
  CHECK_FALSE(is_initialized());
  std::remove(path.c_str());
  std::remove((path + "x").c_str());
}
