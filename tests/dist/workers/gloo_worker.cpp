// One rank of the gloo process-group tests (tests/dist/test_process_group_gloo.cpp spawns it
// N times with torchrun's environment: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
// Usage: ember_gloo_worker <scenario>. Every rank computes every rank's input itself, so it
// knows each collective's result without asking anyone. Exit code 0 = all checks passed;
// failures are printed to stderr, prefixed with the rank.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "ember/dist/distributed.h"
#include "ember/dist/process_group_gloo.h"
#include "ember/ember.h"
#include "worker_main.h"

namespace dist = ember::dist;
using dist::ReduceOp;
using ember::ScalarType;
using ember::Tensor;

using namespace ember::test::worker;

namespace {

// Rank r's input: small integers, exact in every dtype and in their sums over 4 ranks.
// For PRODUCT the values are 1 or 2 so that 4 ranks stay within int8.
Tensor input(int r, ScalarType dtype, int64_t n, bool for_product = false) {
  Tensor i = ember::arange(n, ember::TensorOptions().dtype(ember::kDouble));
  Tensor v = for_product ? (i + r).remainder(2) + 1 : (i.remainder(3) + r + 1);
  return v.to(dtype);
}

bool same_values(const Tensor& got, const Tensor& expected) {
  return got.sizes() == expected.sizes() && ember::equal(got.to(ember::kDouble), expected.to(ember::kDouble));
}

std::string name(ScalarType t) { return ember::scalar_type_name(t); }

void test_allreduce(ScalarType dtype, int64_t n) {
  std::vector<ReduceOp> ops{ReduceOp::SUM, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX};
  if (ember::is_floating_point(dtype)) ops.push_back(ReduceOp::AVG);
  for (ReduceOp op : ops) {
    bool prod = op.op_ == ReduceOp::PRODUCT;
    Tensor expected = input(0, ember::kDouble, n, prod);
    for (int r = 1; r < g_size; ++r) {
      Tensor x = input(r, ember::kDouble, n, prod);
      switch (op.op_) {
        case ReduceOp::SUM:
        case ReduceOp::AVG:
          expected = expected + x;
          break;
        case ReduceOp::PRODUCT:
          expected = expected * x;
          break;
        case ReduceOp::MIN:
          expected = ember::minimum(expected, x);
          break;
        case ReduceOp::MAX:
          expected = ember::maximum(expected, x);
          break;
        default:
          break;
      }
    }
    if (op.op_ == ReduceOp::AVG) expected = expected / g_size;
    Tensor t = input(g_rank, dtype, n, prod);
    dist::all_reduce(t, op);
    check(same_values(t, expected),
          "all_reduce " + std::string(dist::reduce_op_name(op)) + " " + name(dtype));
  }
}

void test_broadcast_reduce_gather(ScalarType dtype, int64_t n) {
  int root = g_size - 1;
  Tensor b = input(g_rank, dtype, n);
  dist::broadcast(b, root);
  check(same_values(b, input(root, dtype, n)), "broadcast " + name(dtype));

  Tensor sum = input(0, ember::kDouble, n);
  for (int r = 1; r < g_size; ++r) sum = sum + input(r, ember::kDouble, n);
  Tensor red = input(g_rank, dtype, n);
  dist::reduce(red, /*dst=*/0);
  check(same_values(red, g_rank == 0 ? sum : input(g_rank, dtype, n)), "reduce " + name(dtype));

  std::vector<Tensor> gathered;
  for (int r = 0; r < g_size; ++r) gathered.push_back(ember::zeros({n}, ember::TensorOptions().dtype(dtype)));
  dist::all_gather(gathered, input(g_rank, dtype, n));
  for (int r = 0; r < g_size; ++r)
    check(same_values(gathered[static_cast<size_t>(r)], input(r, dtype, n)), "all_gather " + name(dtype));

  // Rank r's input chunk for rank c is input(r) + c; rank c gets the sum over r.
  std::vector<Tensor> chunks;
  for (int c = 0; c < g_size; ++c) chunks.push_back(input(g_rank, dtype, n) + c);
  Tensor out = ember::zeros({n}, ember::TensorOptions().dtype(dtype));
  dist::reduce_scatter(out, chunks);
  check(same_values(out, sum + g_size * g_rank), "reduce_scatter " + name(dtype));
}

void test_p2p() {
  int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  auto send = dist::isend(input(g_rank, ember::kFloat, 10), next, {}, /*tag=*/3);
  Tensor got = ember::zeros({10});
  int src = dist::recv(got, prev, {}, 3);
  send->wait();
  check(src == prev && same_values(got, input(prev, ember::kFloat, 10)), "send/recv ring");
}

void test_async() {
  // Several collectives in flight, waited for in reverse order: issue order decides.
  std::vector<Tensor> ts;
  std::vector<ember::intrusive_ptr<dist::Work>> works;
  for (int k = 0; k < 4; ++k) {
    ts.push_back(input(g_rank, ember::kFloat, 1000) * (k + 1));
    works.push_back(dist::all_reduce(ts.back(), ReduceOp::SUM, /*async_op=*/true));
  }
  Tensor sum = input(0, ember::kDouble, 1000);
  for (int r = 1; r < g_size; ++r) sum = sum + input(r, ember::kDouble, 1000);
  for (int k = 3; k >= 0; --k) {
    check(works[static_cast<size_t>(k)]->wait(std::chrono::seconds(10)), "Work::wait returns true");
    check(works[static_cast<size_t>(k)]->is_completed() && works[static_cast<size_t>(k)]->is_success(),
          "Work completed and succeeded after wait");
    check(same_values(ts[static_cast<size_t>(k)], sum * (k + 1)), "async all_reduce " + std::to_string(k));
    check(works[static_cast<size_t>(k)]->result().at(0).is_same(ts[static_cast<size_t>(k)]),
          "Work::result is the reduced tensor");
  }
}

void test_layouts() {
  // A transposed (non-contiguous) tensor is reduced in place all the same.
  Tensor base = input(g_rank, ember::kFloat, 12).view({3, 4});
  Tensor t = base.t();
  dist::all_reduce(t);
  Tensor expected = input(0, ember::kDouble, 12);
  for (int r = 1; r < g_size; ++r) expected = expected + input(r, ember::kDouble, 12);
  check(same_values(base, expected.view({3, 4})), "all_reduce of a transposed view");
  Tensor empty = ember::zeros({0});
  dist::all_reduce(empty);
  check(empty.numel() == 0, "all_reduce of an empty tensor");
  Tensor flags = ember::zeros({2}, ember::TensorOptions().dtype(ember::kBool));
  if (g_rank == 1)
    flags = ember::ones({1}, ember::TensorOptions().dtype(ember::kBool)).expand({2}).contiguous();
  dist::all_reduce(flags);
  check(flags.to(ember::kDouble).sum().item<double>() == 2, "bool all_reduce SUM is any");
}

void test_tensor_lists() {
  // Two tensors per rank: allreduce reduces over both tensors of every rank (c10d's gloo),
  // and broadcast sends the root's rootTensor into every tensor of every rank.
  auto pg = dist::get_default_group();
  std::vector<Tensor> pair{input(g_rank, ember::kFloat, 5), input(g_rank, ember::kFloat, 5) * 10};
  check(pg->allreduce(pair)->wait(), "allreduce(pair)->wait()");
  Tensor sum = input(0, ember::kDouble, 5);
  for (int r = 1; r < g_size; ++r) sum = sum + input(r, ember::kDouble, 5);
  check(same_values(pair[0], sum * 11) && same_values(pair[1], sum * 11), "allreduce of a two-tensor list");
  std::vector<Tensor> bpair{input(g_rank, ember::kFloat, 5), input(g_rank, ember::kFloat, 5) * 10};
  dist::BroadcastOptions opts;
  opts.rootRank = 1;
  opts.rootTensor = 1;
  check(pg->broadcast(bpair, opts)->wait(), "broadcast(bpair)->wait()");
  Tensor expected = input(1, ember::kDouble, 5) * 10;
  check(same_values(bpair[0], expected) && same_values(bpair[1], expected), "broadcast of a two-tensor list");
}

void test_new_group() {
  // Ranks {0, last}: the others get no group and skip it.
  auto g = dist::new_group({0, g_size - 1});
  bool member = g_rank == 0 || g_rank == g_size - 1;
  check(static_cast<bool>(g) == member, "new_group membership");
  if (!g) return;
  check(g->size() == 2 && g->rank() == (g_rank == 0 ? 0 : 1), "new_group rank and size");
  Tensor t = ember::full({3}, g_rank + 1.0);
  dist::all_reduce(t, ReduceOp::SUM, false, g);
  check(same_values(t, ember::full({3}, 1.0 + g_size)), "all_reduce on a new group");
  Tensor b = ember::full({3}, g_rank + 1.0);
  dist::broadcast(b, /*src (global)=*/g_size - 1, false, g);
  check(same_values(b, ember::full({3}, static_cast<double>(g_size))),
        "broadcast on a new group, global src");
}

int run_collectives() {
  dist::init_process_group("gloo", "env://", std::chrono::seconds(20));
  g_rank = dist::get_rank();
  check(dist::get_world_size() == g_size && dist::is_initialized() && dist::get_backend() == "gloo",
        "rank, world size, backend");
  for (ScalarType dtype : {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16, ember::kInt,
                           ember::kLong, ember::kByte, ember::kChar}) {
    test_allreduce(dtype, 257);
    test_broadcast_reduce_gather(dtype, 33);
  }
  test_p2p();
  test_async();
  test_layouts();
  test_tensor_lists();
  test_new_group();
  dist::barrier();
  dist::destroy_process_group();
  check(!dist::is_initialized(), "destroy_process_group");
  return g_failures == 0 ? 0 : 1;
}

// Rank 1 never issues the allreduce: rank 0's Work must fail after its timeout.
int run_collective_timeout() {
  dist::init_process_group("gloo", "env://", std::chrono::seconds(20));
  if (g_rank == 0) {
    auto pg = dist::get_default_group();
    std::vector<Tensor> ts{ember::ones({4})};
    dist::AllreduceOptions opts;
    opts.timeout = std::chrono::milliseconds(500);
    auto start = std::chrono::steady_clock::now();
    auto work = pg->allreduce(ts, opts);
    std::string early;
    try {
      work->wait(std::chrono::milliseconds(100));  // shorter than the collective's own timeout
    } catch (const ember::Error& e) {
      early = e.what();
    }
    check(early == "Operation timed out!",
          "Work::wait(100ms) raised c10d's \"Operation timed out!\", got: " + early);
    check(!work->is_completed(), "the Work is still running after wait(100ms) gave up");
    std::string error;
    try {
      work->wait();
    } catch (const ember::Error& e) {
      error = e.what();
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "rank 0: allreduce raised after " << s << " s: " << error << std::endl;
    check(!error.empty(), "the allreduce without a peer raised");
    check(s < 2.5, "the allreduce raised within its timeout (+ slack)");
    check(work->is_completed() && !work->is_success(), "the failed Work is completed, not successful");
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
  std::_Exit(g_failures == 0 ? 0 : 1);  // the group's state is broken after a timeout
}

// Only rank 0 of 2 is started: init_process_group must raise, not hang.
int run_no_peer() {
  auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    dist::init_process_group("gloo", "env://", std::chrono::seconds(1));
  } catch (const std::exception& e) {
    error = e.what();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "rank " << g_rank << ": init_process_group raised after " << s << " s: " << error << std::endl;
  check(!error.empty(), "init_process_group without its peer raised");
  check(s < 4, "init_process_group raised within its timeout (+ slack)");
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return run_scenario(argc, argv, "ember_gloo_worker",
                      {
                          {"collectives", [] { return run_collectives(); }},
                          {"collective_timeout", [] { return run_collective_timeout(); }},
                          {"no_peer", [] { return run_no_peer(); }},
                      });
}
