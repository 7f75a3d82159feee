// torch.distributed's module-level API in C++: init_process_group (torchrun's environment,
// env:// / tcp:// / file:// rendezvous), the default group, new_group, and the collectives
// as free functions on a group (the default one unless given).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/dist/process_group.h"
#include "ember/dist/store.h"

namespace ember::dist {

using ProcessGroupPtr = intrusive_ptr<ProcessGroup>;

/// Creates the default group. backend: "gloo" (CPU tensors). init_method: "env://" (the
/// default: MASTER_ADDR, MASTER_PORT, and RANK / WORLD_SIZE unless given, as torchrun sets
/// them), "tcp://host:port" or "file:///path"; or pass a `store` instead (then rank and
/// world_size are required). Rank 0 hosts the TCP store. Blocks until every rank has joined,
/// or raises after `timeout`.
void init_process_group(const std::string& backend = "gloo", const std::string& init_method = "",
                        std::chrono::milliseconds timeout = kBackendDefaultTimeout, int world_size = -1,
                        int rank = -1, std::shared_ptr<Store> store = nullptr);
/// Destroys `group`, or the default group and every group made by new_group.
void destroy_process_group(const ProcessGroupPtr& group = {});
bool is_initialized();
/// torch.distributed.is_gloo_available().
bool is_gloo_available();
/// This process's rank in `group` (default: the global rank); -1 when it is not a member.
int get_rank(const ProcessGroupPtr& group = {});
/// The number of ranks in `group` (default: the world); -1 when this process is not a member.
int get_world_size(const ProcessGroupPtr& group = {});
/// The default group (torch.distributed.group.WORLD).
ProcessGroupPtr get_default_group();
/// The backend's name ("gloo").
std::string get_backend(const ProcessGroupPtr& group = {});
/// A group of the given global ranks (every rank calls it, members or not; all ranks when
/// empty). Processes outside `ranks` get a null group (c10d's NON_GROUP_MEMBER).
ProcessGroupPtr new_group(std::vector<int> ranks = {},
                          std::chrono::milliseconds timeout = kBackendDefaultTimeout,
                          const std::string& backend = "");

// The collectives (ranks given here are global ranks, as in torch.distributed). With
// async_op they return the Work; without, they wait and return null. A process outside
// `group` returns null without doing anything, as PyTorch does.
intrusive_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool async_op = false,
                               const ProcessGroupPtr& group = {});
intrusive_ptr<Work> broadcast(Tensor& tensor, int src, bool async_op = false,
                              const ProcessGroupPtr& group = {});
intrusive_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM, bool async_op = false,
                           const ProcessGroupPtr& group = {});
intrusive_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, bool async_op = false,
                               const ProcessGroupPtr& group = {});
intrusive_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list,
                                   ReduceOp op = ReduceOp::SUM, bool async_op = false,
                                   const ProcessGroupPtr& group = {});
intrusive_ptr<Work> barrier(bool async_op = false, const ProcessGroupPtr& group = {});
/// Sends `tensor` to global rank `dst` and waits until it is sent.
void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group = {}, int tag = 0);
/// Receives into `tensor` from global rank `src`; returns `src`.
int recv(Tensor& tensor, int src, const ProcessGroupPtr& group = {}, int tag = 0);
intrusive_ptr<Work> isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group = {}, int tag = 0);
intrusive_ptr<Work> irecv(Tensor& tensor, int src, const ProcessGroupPtr& group = {}, int tag = 0);

}  // namespace ember::dist
