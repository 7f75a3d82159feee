// ProcessGroupNCCL in a build without NCCL (no CUDA, nccl.h/libnccl not found, or
// -DEMBER_NCCL=OFF): the class exists so code links, and constructing one raises, as
// torch.distributed does for a backend it was not built with.
#include "ember/dist/process_group_nccl.h"

#include <utility>

namespace ember::dist {

struct ProcessGroupNCCL::Impl {};

namespace {
// torch.distributed's words for a backend the build lacks.
constexpr const char* kNoNccl = "Distributed package doesn't have NCCL built in";
[[noreturn]] void unavailable() { ::ember::detail::throw_error(kNoNccl); }
}  // namespace

bool ProcessGroupNCCL::is_available() { return false; }
std::string ProcessGroupNCCL::version() { return ""; }

ProcessGroupNCCL::ProcessGroupNCCL(const std::shared_ptr<Store>& store, int rank, int size, Options options)
    : ProcessGroup(rank, size), store_(store), options_(std::move(options)) {
  unavailable();
}
ProcessGroupNCCL::~ProcessGroupNCCL() = default;

intrusive_ptr<Work> ProcessGroupNCCL::allreduce(std::vector<Tensor>&, const AllreduceOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupNCCL::broadcast(std::vector<Tensor>&, const BroadcastOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupNCCL::reduce(std::vector<Tensor>&, const ReduceOptions&) { unavailable(); }
intrusive_ptr<Work> ProcessGroupNCCL::allgather(std::vector<std::vector<Tensor>>&, std::vector<Tensor>&,
                                                const AllgatherOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupNCCL::reduce_scatter(std::vector<Tensor>&, std::vector<std::vector<Tensor>>&,
                                                     const ReduceScatterOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupNCCL::barrier(const BarrierOptions&) { unavailable(); }
intrusive_ptr<Work> ProcessGroupNCCL::send(std::vector<Tensor>&, int, int) { unavailable(); }
intrusive_ptr<Work> ProcessGroupNCCL::recv(std::vector<Tensor>&, int, int) { unavailable(); }

}  // namespace ember::dist
