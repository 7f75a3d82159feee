// ProcessGroupNCCL on a real GPU, one rank in this process (a FileStore rendezvous): every
// collective on CUDA tensors of each dtype against the values it must give (allgather and
// reduce_scatter move the bytes through the flat buffer, so a wrong dtype width shows), the
// input checks, Work::wait ordering the caller's stream without blocking the host, barrier,
// init_process_group("nccl"), and the watchdog turning a collective stuck past its timeout
// into an error (and the communicator into a refusing one). Send/recv need two GPUs (NCCL
// refuses two ranks on one device) and are not exercised here.
//
// Without dist/ in the build (EMBER_DIST=OFF) there is nothing to test: the file is empty.
#ifdef EMBER_TEST_WITH_DIST

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "cuda/parity.h"
#include "ember/cuda/runtime/stream.h"
#include "ember/dist/distributed.h"
#include "ember/dist/file_store.h"
#include "ember/dist/process_group_nccl.h"

using namespace ember;
using namespace ember::dist;
using namespace ember::test;
using namespace std::chrono_literals;

namespace {

bool skip_without_nccl() {
  if (ProcessGroupNCCL::is_available()) return false;
  MESSAGE("ember was built without NCCL: skipped");
  return true;
}

// The ordering and watchdog cases need work still pending on a stream while the host looks;
// with the allocator cache off every free is a synchronizing cudaFree (allocator_cache_off).
bool skip_without_busy_stream() {
  if (skip_without_nccl()) return true;
  if (!allocator_cache_off()) return false;
  MESSAGE("EMBER_NO_ALLOCATOR_CACHE=1: every free synchronizes, no stream stays busy: skipped");
  return true;
}

std::string store_path(const char* what) {
  std::string p = std::string("/tmp/ember_nccl_") + what + "_" + std::to_string(getpid());
  std::remove(p.c_str());
  return p;
}

intrusive_ptr<ProcessGroupNCCL> make_group(const char* what, std::chrono::milliseconds timeout = 20s) {
  auto store = std::make_shared<FileStore>(store_path(what), 1);
  ProcessGroupNCCL::Options o;
  o.timeout = timeout;
  return intrusive_ptr<ProcessGroupNCCL>::make(store, 0, 1, o);
}

TensorOptions on_cuda_opts(ScalarType t = kFloat) { return TensorOptions().dtype(t).device(cuda_device()); }

const ScalarType kDtypes[] = {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kByte, kChar, kBool};

// `n` 8192x8192 matmuls on the current stream (1.1 TFLOP each: milliseconds apiece on an
// H200), so that a collective ordered after them is still pending when the host looks.
Tensor busy_stream(int n) {
  Tensor a = full({8192, 8192}, 1e-4, on_cuda_opts());
  Tensor r;
  for (int i = 0; i < n; ++i) r = matmul(a, a);
  return r;
}

}  // namespace

TEST_CASE("ProcessGroupNCCL: allreduce with every op and dtype leaves one rank's values") {
  if (skip_without_nccl()) return;
  auto pg = make_group("allreduce");
  for (ScalarType dt : kDtypes) {
    for (ReduceOp op : {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX}) {
      if (dt == kBool && op.op_ == ReduceOp::AVG) continue;
      INFO(scalar_type_name(dt), " ", reduce_op_name(op));
      Tensor cpu = make_input({3, 5}, dt, 0, 9);
      std::vector<Tensor> ts{cpu.to(cuda_device())};
      AllreduceOptions o;
      o.reduceOp = op;
      auto work = pg->allreduce(ts, o);
      CHECK(work->wait());
      check_same(ts[0], cpu);
      CHECK(work->result()[0].is_same(ts[0]));
    }
  }
}

TEST_CASE("ProcessGroupNCCL: broadcast, reduce, allgather, reduce_scatter, barrier") {
  if (skip_without_nccl()) return;
  auto pg = make_group("collectives");
  for (ScalarType dt : kDtypes) {
    INFO(scalar_type_name(dt));
    Tensor cpu = make_input({4, 3}, dt, 0, 9);
    std::vector<Tensor> b{cpu.to(cuda_device())};
    pg->broadcast(b)->wait();
    check_same(b[0], cpu);
    std::vector<Tensor> r{cpu.to(cuda_device())};
    pg->reduce(r)->wait();
    check_same(r[0], cpu);

    // Allgather into zeros: the output must become the input, every byte of it.
    std::vector<Tensor> in{cpu.to(cuda_device())};
    std::vector<std::vector<Tensor>> outs{{zeros({4, 3}, on_cuda_opts(dt))}};
    pg->allgather(outs, in)->wait();
    check_same(outs[0][0], cpu);

    std::vector<Tensor> rs_out{zeros({4, 3}, on_cuda_opts(dt))};
    std::vector<std::vector<Tensor>> rs_in{{cpu.to(cuda_device())}};
    pg->reduce_scatter(rs_out, rs_in)->wait();
    check_same(rs_out[0], cpu);
  }
  auto bw = pg->barrier();
  CHECK(bw->wait());
  CHECK(bw->is_completed());  // a barrier's wait blocks the host
  CHECK(bw->is_success());
  // Empty tensors pass through.
  std::vector<Tensor> e{empty({0}, on_cuda_opts())};
  CHECK(pg->allreduce(e)->wait());
}

TEST_CASE("ProcessGroupNCCL: input errors in c10d's words") {
  if (skip_without_nccl()) return;
  auto pg = make_group("errors");
  std::vector<Tensor> cpu{zeros({2})};
  CHECK_THROWS_WITH_AS(pg->allreduce(cpu), "Tensors must be CUDA and dense", Error);
  std::vector<Tensor> strided{zeros({4, 4}, on_cuda_opts()).t()};
  CHECK_THROWS_WITH_AS(pg->allreduce(strided), "Tensors must be contiguous", Error);
  std::vector<Tensor> two{zeros({2}, on_cuda_opts()), zeros({2}, on_cuda_opts())};
  CHECK_THROWS_WITH_AS(pg->allreduce(two), doctest::Contains("Expecting one tensor only"), Error);
  std::vector<Tensor> b{ones({2}, on_cuda_opts(kBool))};
  AllreduceOptions avg;
  avg.reduceOp = ReduceOp::AVG;
  CHECK_THROWS_WITH_AS(pg->allreduce(b, avg), "Cannot use ReduceOp.AVG with boolean inputs", Error);
  std::vector<Tensor> s{zeros({2}, on_cuda_opts(kShort))};
  CHECK_THROWS_WITH_AS(pg->allreduce(s), doctest::Contains("not supported for NCCL"), Error);
  std::vector<Tensor> one{zeros({2}, on_cuda_opts())};
  CHECK_THROWS_WITH_AS(pg->send(one, 0, 0), doctest::Contains("should not be the same as the rank"), Error);
  std::vector<std::vector<Tensor>> outs{{zeros({2}, on_cuda_opts()), zeros({2}, on_cuda_opts())}};
  CHECK_THROWS_WITH_AS(pg->allgather(outs, one),
                       doctest::Contains("must match number of collective participants"), Error);
  // The checks sent nothing: the group still works.
  CHECK(pg->allreduce(one)->wait());
}

TEST_CASE(
    "ProcessGroupNCCL: Work::wait orders the current stream after the collective, without a host block") {
  if (skip_without_busy_stream()) return;
  auto pg = make_group("ordering");
  cuda::CUDAStream side = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(side);
  Tensor busy = busy_stream(40);  // queued on `side`, the current stream
  // Its value is produced on `side` after the busy work: the NCCL stream must wait for it.
  Tensor x = arange(0, 1 << 20, on_cuda_opts()) + busy.narrow(0, 0, 1).narrow(1, 0, 1).reshape({1});
  std::vector<Tensor> in{x};
  std::vector<std::vector<Tensor>> outs{{zeros({1 << 20}, on_cuda_opts())}};
  auto work = pg->allgather(outs, in);
  CHECK(work->wait());                // returns at once: the stream waits, not the host
  CHECK_FALSE(work->is_completed());  // the busy work is still running
  Tensor y = outs[0][0] * 2;          // on `side`, after the collective
  side.synchronize();
  CHECK(work->is_completed());
  check_same(y, (x * 2).cpu());
  CHECK(work->wait(5s));
}

TEST_CASE("init_process_group(\"nccl\") makes a ProcessGroupNCCL") {
  if (skip_without_nccl()) return;
  std::string path = store_path("init");
  init_process_group("nccl", "file://" + path + "?rank=0&world_size=1", 20s);
  CHECK(get_backend() == "nccl");
  Tensor t = full({3}, 2.0, on_cuda_opts());
  all_reduce(t);
  check_same(t, full({3}, 2.0));
  destroy_process_group();
}

// Last in the file: it aborts a communicator with work queued behind busy kernels.
TEST_CASE(
    "ProcessGroupNCCL: the watchdog aborts a collective past its timeout; wait raises, later calls refuse") {
  if (skip_without_busy_stream()) return;
  auto pg = make_group("watchdog", 20s);
  std::vector<Tensor> warm{zeros({1}, on_cuda_opts())};
  pg->allreduce(warm)->wait(10s);  // the communicator exists before the timed collective
  Tensor busy = busy_stream(150);  // longer than the watchdog's 100 ms poll
  std::vector<Tensor> t{zeros({4}, on_cuda_opts())};
  AllreduceOptions o;
  o.timeout = 20ms;
  auto work = pg->allreduce(t, o);
  CHECK_THROWS_WITH_AS(work->wait(5s),
                       doctest::Contains("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
                                         "OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=20) ran for"),
                       Error);
  CHECK(work->is_completed());
  CHECK_FALSE(work->is_success());
  CHECK_THROWS_WITH_AS(pg->allreduce(t), doctest::Contains("NCCL communicator was aborted on rank 0"), Error);
  cuda::synchronize();
}

#endif  // EMBER_TEST_WITH_DIST
