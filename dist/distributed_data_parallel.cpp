// DistributedDataParallel: the model check and rank 0's state at construction, the bucket
// assignment, and the reducer that averages gradients during backward.
//
// Note [DDP's reducer]
// Buckets: the parameters that require grad, taken in reverse registration order (the order
// their gradients are roughly ready in backward), are grouped per dtype and device into
// buckets of up to 1 MiB for the first and bucket_cap_mb (25 MiB) after, as PyTorch's rebuilt
// buckets are; PyTorch starts with one bucket and rebuilds from the order it observes in the
// first backward, ember keeps the reverse-registration buckets (no rebuild).
// Hooks: each parameter has a post-accumulate-grad hook. When a forward armed the iteration,
// the hook copies .grad / world_size into its slot of the bucket's flat buffer; the bucket's
// last hook starts its allreduce (SUM, async). Buckets start strictly in bucket order (a
// ready bucket waits for the ones before it), so every rank issues the same collectives in
// the same order whatever order its gradients arrive in.
// Waiting: the first hook of an iteration queues an autograd final callback
// (autograd/final_callback.h, PyTorch's queue_callback). It runs after the engine's last node,
// before backward() returns: it waits for every bucket and copies the averaged values back
// into .grad, so after backward() the optimizer sees synchronized gradients.
// Unused parameters: with find_unused_parameters, the final callback marks every parameter
// that got no gradient ready with zeros (PyTorch instead walks the graph from the forward's
// outputs to mark them earlier; marking at the end is simpler and gives the same sums, with
// less overlap for the buckets holding them), then allreduces a used-map so that a parameter
// no rank used keeps .grad undefined and one used elsewhere gets the average. Without the
// flag such a bucket never starts, and the next forward raises PyTorch's error.
// no_sync: forwards inside the guard do not arm the hooks, so .grad accumulates locally; the
// next armed backward's hooks see the accumulated .grad and average that.
#include "ember/dist/distributed_data_parallel.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>

#include "ember/autograd/final_callback.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"

namespace ember::dist {

// ---- bucket assignment ----------------------------------------------------------------------

BucketAssignment compute_bucket_assignment_by_size(const std::vector<Tensor>& tensors,
                                                   const std::vector<size_t>& bucket_size_limits,
                                                   const std::vector<size_t>& tensor_indices) {
  EMBER_CHECK(!bucket_size_limits.empty(), "compute_bucket_assignment_by_size: bucket_size_limits is empty");
  std::vector<size_t> order = tensor_indices;
  if (order.empty())
    for (size_t i = 0; i < tensors.size(); ++i) order.push_back(i);
  EMBER_CHECK(order.size() == tensors.size(), "compute_bucket_assignment_by_size: ", tensors.size(),
              " tensors but ", order.size(), " tensor indices");

  struct Open {
    std::vector<size_t> indices;
    size_t bytes = 0;
    size_t limit = 0;  // index into bucket_size_limits
  };
  using Key = std::pair<int, std::string>;  // dtype, device
  std::map<Key, Open> open;
  std::vector<Key> started;  // keys in the order their open buckets were started
  BucketAssignment out;
  auto close = [&](Open& b) {
    out.bucket_indices.push_back(std::move(b.indices));
    out.per_bucket_size_limits.push_back(bucket_size_limits[b.limit]);
    b.indices.clear();
    b.bytes = 0;
    if (b.limit + 1 < bucket_size_limits.size()) ++b.limit;
  };
  for (size_t i : order) {
    EMBER_CHECK(i < tensors.size(), "compute_bucket_assignment_by_size: tensor index ", i, " out of range");
    const Tensor& t = tensors[i];
    std::ostringstream dev;
    dev << t.device();
    Open& b = open[{static_cast<int>(t.scalar_type()), dev.str()}];
    b.indices.push_back(i);
    b.bytes += static_cast<size_t>(t.numel()) * t.element_size();
    if (b.bytes >= bucket_size_limits[b.limit]) close(b);
  }
  // The buckets still open, in the order of their first tensor.
  std::vector<Open*> rest;
  for (auto& [k, b] : open)
    if (!b.indices.empty()) rest.push_back(&b);
  std::vector<size_t> position(tensors.size());
  for (size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  std::sort(rest.begin(), rest.end(),
            [&](Open* a, Open* b) { return position[a->indices.front()] < position[b->indices.front()]; });
  for (Open* b : rest) close(*b);

  // Buckets in the order they were started (their first tensor's position in `order`);
  // without explicit indices that is the order of their smallest index.
  std::vector<size_t> perm(out.bucket_indices.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  auto first = [&](size_t b) {
    const auto& idx = out.bucket_indices[b];
    size_t m = position[idx.front()];
    for (size_t i : idx) m = std::min(m, position[i]);
    return m;
  };
  std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return first(a) < first(b); });
  BucketAssignment sorted;
  for (size_t b : perm) {
    sorted.bucket_indices.push_back(std::move(out.bucket_indices[b]));
    sorted.per_bucket_size_limits.push_back(out.per_bucket_size_limits[b]);
  }
  return sorted;
}

// ---- the reducer ------------------------------------------------------------------------------

namespace detail {

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  Reducer(std::vector<Tensor> params, const BucketAssignment& assignment, ProcessGroupPtr group,
          bool find_unused)
      : params_(std::move(params)), group_(std::move(group)), find_unused_(find_unused) {
    locator_.resize(params_.size());
    for (const auto& indices : assignment.bucket_indices) {
      Bucket b;
      int64_t offset = 0;
      for (size_t p : indices) {
        locator_[p] = {buckets_.size(), b.params.size()};
        b.params.push_back(p);
        b.offsets.push_back(offset);
        offset += params_[p].numel();
      }
      b.flat = empty({offset}, params_[indices.front()].options());
      buckets_.push_back(std::move(b));
    }
  }

  /// Called at forward: arms (or disarms) the hooks for the coming backward.
  void prepare_for_backward(bool armed) {
    expect_hooks_ = armed;
    if (!armed) return;
    ready_.assign(params_.size(), false);
    used_.assign(params_.size(), false);
    for (auto& b : buckets_) {
      b.pending = b.params.size();
      b.work.reset();
    }
    next_bucket_ = 0;
    callback_queued_ = false;
  }

  /// Raises if the previous armed backward left a reduction unfinished (PyTorch's text).
  void check_prior_reduction_finished() const {
    if (!require_finalize_) return;
    std::ostringstream unready;
    size_t n = 0;
    for (size_t i = 0; i < params_.size(); ++i)
      if (!ready_[i]) unready << (n++ ? " " : "") << i;
    ::ember::detail::throw_error(
        "Expected to have finished reduction in the prior iteration before starting a new one. This error "
        "indicates that your module has parameters that were not used in producing loss. You can enable "
        "unused "
        "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
        "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
        "participate in calculating loss.\nParameter indices which did not receive grad for rank " +
        std::to_string(group_->rank()) + ": " + unready.str());
  }

  /// The post-accumulate-grad hook of parameter `index`.
  void on_grad_ready(size_t index) {
    if (!expect_hooks_) return;
    if (!callback_queued_) {
      callback_queued_ = true;
      require_finalize_ = true;
      autograd::queue_callback([self = shared_from_this()] { self->finalize(); });
    }
    EMBER_CHECK(!ready_[index],
                "Expected to mark a variable ready only once. This error is caused by one of the "
                "following reasons: 1) Use of a module parameter outside the `forward` function. "
                "2) Reused parameters in multiple reentrant backward passes. Parameter at index ",
                index, " has been marked as ready twice.");
    used_[index] = true;
    mark_ready(index, /*zero=*/false);
  }

  std::vector<std::vector<size_t>> bucket_indices() const {
    std::vector<std::vector<size_t>> out;
    for (const auto& b : buckets_) out.push_back(b.params);
    return out;
  }

  /// Whether an armed iteration's reduction is in progress (for ~DistributedDataParallel).
  bool in_flight() const { return require_finalize_; }

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;
    Tensor flat;
    size_t pending = 0;
    intrusive_ptr<Work> work;
  };

  Tensor slot(size_t index) {
    auto [b, s] = locator_[index];
    return buckets_[b].flat.narrow(0, buckets_[b].offsets[s], params_[index].numel());
  }

  /// Copies the gradient (or zeros) into its slot, divided by the world size, and starts the
  /// buckets that are now complete, in order.
  void mark_ready(size_t index, bool zero) {
    ready_[index] = true;
    // One rank: the average over the group is the gradient itself. The bookkeeping above and
    // below still runs (unused-parameter errors are the same), but nothing is copied or
    // reduced — so DDP at world size 1 costs what the hooks cost, not three passes over the
    // gradients and a collective (bench/RESULTS.md, "DDP at world size 1").
    if (group_->size() == 1) {
      --buckets_[locator_[index].first].pending;
      return;
    }
    {
      NoGradGuard no_grad;
      Tensor dst = slot(index);
      if (zero) {
        dst.zero_();
      } else {
        // In place, without a temporary: the division is one of the few passes over the
        // gradients DDP adds to a step, and x / 1 is x.
        dst.copy_(params_[index].grad().reshape({-1}));
        if (group_->size() > 1) dst.div_(static_cast<double>(group_->size()));
      }
    }
    Bucket& b = buckets_[locator_[index].first];
    --b.pending;
    while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
      std::vector<Tensor> t{buckets_[next_bucket_].flat};
      buckets_[next_bucket_].work = group_->allreduce(t);
      ++next_bucket_;
    }
  }

  /// The final callback: zero-fill unused parameters (find_unused_parameters), wait for every
  /// bucket, and write the averages into .grad.
  void finalize() {
    if (find_unused_)
      for (size_t i = 0; i < params_.size(); ++i)
        if (!ready_[i]) mark_ready(i, /*zero=*/true);
    if (group_->size() == 1) {
      // Nothing was copied: .grad already holds the (one-rank) average, and a parameter
      // without a gradient keeps .grad undefined, as after a reduction in which no rank used it.
      if (std::all_of(buckets_.begin(), buckets_.end(), [](const Bucket& b) { return b.pending == 0; })) {
        require_finalize_ = false;
        expect_hooks_ = false;
      }
      return;
    }
    if (next_bucket_ < buckets_.size()) return;  // a parameter got no gradient: the next forward raises
    for (auto& b : buckets_) b.work->wait();
    Tensor globally_used;
    if (find_unused_) {
      globally_used = empty({static_cast<int64_t>(params_.size())}, TensorOptions().dtype(kInt));
      for (size_t i = 0; i < params_.size(); ++i)
        globally_used[static_cast<int64_t>(i)].fill_(used_[i] ? 1 : 0);
      std::vector<Tensor> t{globally_used};
      group_->allreduce(t)->wait();
    }
    NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      Tensor& p = params_[i];
      Tensor avg = slot(i).view(p.sizes());
      Tensor g = p.grad();
      if (g.defined())
        g.copy_(avg);
      else if (!find_unused_ || globally_used[static_cast<int64_t>(i)].item<int>() > 0)
        p.set_grad(avg.clone());
      // else: no rank used it; .grad stays undefined, as in PyTorch
    }
    require_finalize_ = false;
    expect_hooks_ = false;
  }

  std::vector<Tensor> params_;
  ProcessGroupPtr group_;
  bool find_unused_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> locator_;  // parameter -> (bucket, slot)
  // The armed iteration.
  bool expect_hooks_ = false;
  bool callback_queued_ = false;
  bool require_finalize_ = false;
  std::vector<bool> ready_, used_;
  size_t next_bucket_ = 0;
};

}  // namespace detail

// ---- construction ----------------------------------------------------------------------------

namespace {

/// The parameters DDP reduces: those that require grad, each once (shared ones appear once).
std::vector<Tensor> params_for_reducer(const nn::Module& module) {
  std::vector<Tensor> out;
  for (const Tensor& p : module.parameters()) {
    if (!p.requires_grad()) continue;
    bool seen = false;
    for (const Tensor& q : out) seen = seen || q.unsafeGetTensorImpl() == p.unsafeGetTensorImpl();
    if (!seen) out.push_back(p);
  }
  return out;
}

std::string sizes_text(const Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

/// c10d's verify_params_across_processes: every rank allgathers (parameter count, metadata
/// length), then compares its parameters' sizes and strides with rank 0's, with c10d's texts.
void verify_params_across_processes(const ProcessGroupPtr& group, const std::vector<Tensor>& params) {
  std::vector<int64_t> meta;
  for (const Tensor& t : params) {
    for (int64_t s : t.sizes()) meta.push_back(s);
    for (int64_t s : t.strides()) meta.push_back(s);
  }
  const int world = group->size(), rank = group->rank();
  Tensor mine = empty({2}, TensorOptions().dtype(kLong));
  mine[0].fill_(static_cast<int64_t>(params.size()));
  mine[1].fill_(static_cast<int64_t>(meta.size()));
  std::vector<std::vector<Tensor>> gathered(1);
  for (int r = 0; r < world; ++r) gathered[0].push_back(empty({2}, TensorOptions().dtype(kLong)));
  std::vector<Tensor> in{mine};
  group->allgather(gathered, in)->wait();
  for (int r = 0; r < world; ++r) {
    int64_t n = gathered[0][static_cast<size_t>(r)][0].item<int64_t>();
    EMBER_CHECK(static_cast<size_t>(n) == params.size(), "DDP expects same model across all ranks, but Rank ",
                rank, " has ", params.size(), " params, while rank ", r, " has inconsistent ", n, " params.");
  }
  // Rank 0's sizes and strides, in a tensor of rank 0's length (which may differ from ours).
  int64_t len0 = gathered[0][0][1].item<int64_t>();
  Tensor control = empty({len0}, TensorOptions().dtype(kLong));
  if (rank == 0)
    for (int64_t i = 0; i < len0; ++i) control[i].fill_(meta[static_cast<size_t>(i)]);
  std::vector<Tensor> b{control};
  group->broadcast(b)->wait();
  const int64_t* c = control.data_ptr<int64_t>();
  int64_t i = 0;
  for (size_t p = 0; p < params.size(); ++p) {
    const Tensor& t = params[p];
    for (int64_t s : t.sizes())
      EMBER_CHECK(i < len0 && s == c[i++], "[", rank, "]: params[", p, "] in this process with sizes ",
                  sizes_text(t), " appears not to match sizes of the same param in process 0.");
    for (int64_t s : t.strides())
      EMBER_CHECK(i < len0 && s == c[i++], "params[", p, "] in this process with sizes ", sizes_text(t),
                  " appears not to match strides of the same param in process 0.");
  }
}

/// Copies rank 0's values into every rank's tensors (async, then waits for all).
void broadcast_from_rank0(const ProcessGroupPtr& group, const std::vector<Tensor>& tensors) {
  std::vector<intrusive_ptr<Work>> works;
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.is_contiguous(), "DistributedDataParallel: parameters and buffers must be contiguous");
    std::vector<Tensor> one{t.detach()};
    works.push_back(group->broadcast(one));
  }
  for (auto& w : works) w->wait();
}

}  // namespace

DistributedDataParallelImpl::DistributedDataParallelImpl(std::shared_ptr<nn::Module> module,
                                                         TensorForward forward, ProcessGroupPtr group,
                                                         DistributedDataParallelOptions options)
    : nn::Module("DistributedDataParallel"),
      module_(std::move(module)),
      forward_(std::move(forward)),
      group_(group ? std::move(group) : get_default_group()),
      options_(std::move(options)) {
  EMBER_CHECK(module_ != nullptr, "DistributedDataParallel: module is null");
  register_module("module", module_);
  std::vector<Tensor> params = params_for_reducer(*module_);
  EMBER_CHECK(
      !params.empty(),
      "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
      "gradient.");
  verify_params_across_processes(group_, params);

  std::vector<Tensor> state = module_->parameters();
  for (const Tensor& b : module_->buffers()) state.push_back(b);
  broadcast_from_rank0(group_, state);

  // Buckets over the reverse registration order (Note [DDP's reducer]).
  std::vector<size_t> limits;
  if (options_.bucket_cap_mb())
    limits = {static_cast<size_t>(*options_.bucket_cap_mb() * 1024 * 1024)};
  else
    limits = {kDefaultFirstBucketBytes, static_cast<size_t>(kDefaultBucketCapMB * 1024 * 1024)};
  std::vector<size_t> reversed(params.size());
  for (size_t i = 0; i < params.size(); ++i) reversed[i] = params.size() - 1 - i;
  BucketAssignment assignment = compute_bucket_assignment_by_size(params, limits, reversed);

  reducer_ = std::make_shared<detail::Reducer>(params, assignment, group_, options_.find_unused_parameters());
  // The hooks cannot be removed from a parameter, so they hold the reducer weakly and do
  // nothing once this DDP is gone.
  std::weak_ptr<detail::Reducer> weak = reducer_;
  for (size_t i = 0; i < params.size(); ++i)
    params[i].register_post_accumulate_grad_hook([weak, i](Tensor&) {
      if (auto r = weak.lock()) r->on_grad_ready(i);
    });
}

DistributedDataParallelImpl::~DistributedDataParallelImpl() = default;

void DistributedDataParallelImpl::pre_forward() {
  reducer_->check_prior_reduction_finished();
  reducer_->prepare_for_backward(require_backward_grad_sync_ && GradMode::is_enabled());
  if (options_.broadcast_buffers()) sync_buffers();
}

void DistributedDataParallelImpl::sync_buffers() {
  std::vector<Tensor> buffers = module_->buffers();
  if (buffers.empty() || group_->size() == 1) return;
  broadcast_from_rank0(group_, buffers);
}

Tensor DistributedDataParallelImpl::forward(const Tensor& input) {
  EMBER_CHECK(forward_ != nullptr,
              "DistributedDataParallel: the module's forward() does not take one Tensor; call "
              "pre_forward() and then the module() yourself");
  pre_forward();
  return forward_(input);
}

std::vector<std::vector<size_t>> DistributedDataParallelImpl::bucket_indices() const {
  return reducer_->bucket_indices();
}

DistributedDataParallelImpl::NoSyncGuard::NoSyncGuard(DistributedDataParallelImpl& ddp)
    : ddp_(ddp), previous_(ddp.require_backward_grad_sync_) {
  ddp_.require_backward_grad_sync_ = false;
}

DistributedDataParallelImpl::NoSyncGuard::~NoSyncGuard() { ddp_.require_backward_grad_sync_ = previous_; }

}  // namespace ember::dist
