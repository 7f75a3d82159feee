// ProcessGroupGloo in a build without gloo (libgloo-dev not found, or EMBER_DIST off for it):
// the class exists so code links, and constructing one raises, as torch.distributed does for
// a backend it was not built with.
#include "ember/dist/process_group_gloo.h"

#include <utility>

namespace ember::dist {

struct ProcessGroupGloo::Impl {};

namespace {
// torch.distributed's words for a backend the build lacks.
constexpr const char* kNoGloo =
    "Distributed package doesn't have Gloo built in (ember was built without Debian's libgloo-dev)";
}  // namespace

bool ProcessGroupGloo::is_available() { return false; }

ProcessGroupGloo::ProcessGroupGloo(const std::shared_ptr<Store>& store, int rank, int size, Options options)
    : ProcessGroup(rank, size), store_(store), options_(std::move(options)) {
  ::ember::detail::throw_error(kNoGloo);
}
ProcessGroupGloo::~ProcessGroupGloo() = default;

namespace {
[[noreturn]] void unavailable() { ::ember::detail::throw_error(kNoGloo); }
}  // namespace

intrusive_ptr<Work> ProcessGroupGloo::allreduce(std::vector<Tensor>&, const AllreduceOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupGloo::broadcast(std::vector<Tensor>&, const BroadcastOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupGloo::reduce(std::vector<Tensor>&, const ReduceOptions&) { unavailable(); }
intrusive_ptr<Work> ProcessGroupGloo::allgather(std::vector<std::vector<Tensor>>&, std::vector<Tensor>&,
                                                const AllgatherOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupGloo::reduce_scatter(std::vector<Tensor>&, std::vector<std::vector<Tensor>>&,
                                                     const ReduceScatterOptions&) {
  unavailable();
}
intrusive_ptr<Work> ProcessGroupGloo::barrier(const BarrierOptions&) { unavailable(); }
intrusive_ptr<Work> ProcessGroupGloo::send(std::vector<Tensor>&, int, int) { unavailable(); }
intrusive_ptr<Work> ProcessGroupGloo::recv(std::vector<Tensor>&, int, int) { unavailable(); }

}  // namespace ember::dist
