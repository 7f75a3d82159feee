// SyncBatchNorm: the module (PyTorch's _BatchNorm.forward choices plus the decision to
// synchronise), dist::sync_batch_norm with its backward node, and convert_sync_batchnorm.
//
// Note [SyncBatchNorm arithmetic]
// Statistics and gradient sums are formed in float64 whatever the input dtype (ember's
// batch_norm keeps its statistics in float64 too), and the normalisation itself runs in
// float64 before casting back, so float32 results match single-process BatchNorm closely.
// Each rank shares (mean_r, var_r, n_r) with biased var_r; the global statistics are
//   N = sum n_r,  mean = sum n_r mean_r / N,  var = sum n_r (var_r + (mean_r - mean)^2) / N,
// exact for any split (a rank with n_r = 0 sends zeros and weighs nothing). The running
// variance takes the unbiased var N / (N - 1), as PyTorch's batch_norm_gather_stats_with_counts.
// Backward: with xmu = x - mean and the all-reduced sums Sdy = sum dy, Sdyxmu = sum dy xmu,
//   dx = (dy - Sdy / N - xmu invstd^2 Sdyxmu / N) invstd w,
// and locally dw = sum_local dy xmu invstd, db = sum_local dy.
#include "ember/dist/sync_batch_norm.h"

#include <utility>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/autograd/saved_tensor.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"
#include "ember/dist/distributed.h"
#include "ember/nn/functional/batchnorm.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/container.h"

namespace ember {
namespace dist {
namespace {

/// An (N, C, *) input seen as (N, C, S), and its count of values per channel.
struct ChannelView {
  int64_t N = 0, C = 0, S = 1;
  int64_t count() const { return N * S; }
  DimVector view() const { return {N, C, S}; }
};

ChannelView channel_view(const Tensor& x) {
  ChannelView v{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) v.S *= x.size(d);
  return v;
}

/// The per-channel statistics every rank ends up with.
struct GlobalStats {
  Tensor mean, var;  // float64 (C), biased variance
  double count = 0;
};

/// This rank's (mean, var, count) as one float64 vector of 2C + 1, all-gathered, combined.
GlobalStats gather_stats(const Tensor& xd, const ChannelView& v, ProcessGroup& group) {
  TensorOptions f64 = TensorOptions().dtype(kDouble).device(xd.device());
  Tensor combined;
  if (v.count() > 0) {
    Tensor mean = xd.mean({0, 2});
    Tensor var = xd.var({0, 2}, /*unbiased=*/false);
    combined = cat({mean, var, full({1}, static_cast<double>(v.count()), f64)});
  } else {
    combined = zeros({2 * v.C + 1}, f64);
  }
  // allgather, not allreduce: counts may differ between ranks, so means cannot just be summed.
  std::vector<std::vector<Tensor>> out(1);
  for (int r = 0; r < group.size(); ++r) out[0].push_back(empty_like(combined));
  std::vector<Tensor> in{combined};
  group.allgather(out, in)->wait();
  Tensor all = stack(out[0]);  // (world, 2C + 1)
  Tensor means = all.narrow(1, 0, v.C), vars = all.narrow(1, v.C, v.C), counts = all.narrow(1, 2 * v.C, 1);
  GlobalStats g;
  g.count = counts.sum().item<double>();
  g.mean = (means * counts).sum({0}) / g.count;
  g.var = ((vars + (means - g.mean).square()) * counts).sum({0}) / g.count;
  return g;
}

/// running = (1 - momentum) running + momentum stat, unrecorded.
void update_running(const Tensor& running, const Tensor& stat, double momentum) {
  if (!running.defined()) return;
  NoGradGuard no_grad;
  Tensor r = running;
  r.mul_(1 - momentum).add_(stat.to(r.dtype()), momentum);
}

/// Backward of sync_batch_norm (PyTorch's SyncBatchNorm.backward: batch_norm_backward_reduce,
/// an allreduce of the two sums, batch_norm_backward_elemt). Every rank of the group must run
/// it, as every rank ran the forward.
class SyncBatchNormBackward final : public autograd::Node {
 public:
  std::string name() const override { return "SyncBatchNormBackward"; }

  TensorList apply(TensorList&& grads) override {
    NoGradGuard no_grad;
    Tensor x_in = input_.unpack(shared_from_this(), "SyncBatchNormBackward");
    Tensor w = weight_.defined() ? weight_.unpack(shared_from_this(), "SyncBatchNormBackward") : Tensor();
    Tensor go = grads[0].defined() ? grads[0] : zeros_like(x_in);
    ChannelView v = channel_view(x_in);
    DimVector stat_view{1, v.C, 1};
    Tensor xmu = x_in.contiguous().reshape(v.view()).to(kDouble) - mean_.view(stat_view);
    Tensor dy = go.contiguous().reshape(v.view()).to(kDouble);
    Tensor sum_dy = dy.sum({0, 2});
    Tensor sum_dy_xmu = (dy * xmu).sum({0, 2});

    TensorList out(3);
    if (next_edge(0).is_valid()) {
      std::vector<Tensor> sums{cat({sum_dy, sum_dy_xmu})};
      group_->allreduce(sums)->wait();
      Tensor mean_dy = sums[0].narrow(0, 0, v.C) / count_;
      Tensor mean_dy_xmu = sums[0].narrow(0, v.C, v.C) / count_;
      Tensor scale = w.defined() ? invstd_ * w.to(kDouble) : invstd_;
      Tensor gi = (dy - mean_dy.view(stat_view) - xmu * (invstd_.square() * mean_dy_xmu).view(stat_view)) *
                  scale.view(stat_view);
      out[0] = gi.reshape(x_in.sizes()).to(x_in.dtype());
    }
    if (next_edge(1).is_valid()) out[1] = (sum_dy_xmu * invstd_).to(w.dtype());
    if (next_edge(2).is_valid()) out[2] = sum_dy.to(bias_dtype_);
    return out;
  }

  void release_variables() override {
    input_.reset();
    weight_.reset();
  }

  autograd::SavedTensor input_, weight_;
  Tensor mean_, invstd_;  // mean and invstd: float64 (C), global
  ScalarType bias_dtype_ = kFloat;
  double count_ = 0;
  intrusive_ptr<ProcessGroup> group_;
};

}  // namespace

Tensor sync_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       const Tensor& running_mean, const Tensor& running_var, double eps, double momentum,
                       const intrusive_ptr<ProcessGroup>& group) {
  EMBER_CHECK(group, "sync_batch_norm: a process group is required");
  EMBER_CHECK(input.dim() >= 2, "expected at least 2D input (got ", input.dim(), "D input)");
  bool record =
      GradMode::is_enabled() && (input.requires_grad() || (weight.defined() && weight.requires_grad()) ||
                                 (bias.defined() && bias.requires_grad()));
  ChannelView v = channel_view(input);
  DimVector stat_view{1, v.C, 1};
  Tensor out, invstd;
  GlobalStats g;
  {
    NoGradGuard no_grad;
    Tensor xd = input.detach().contiguous().reshape(v.view()).to(kDouble);
    g = gather_stats(xd, v, *group);
    update_running(running_mean, g.mean, momentum);
    update_running(running_var, g.var * (g.count / (g.count - 1)), momentum);
    invstd = (g.var + eps).rsqrt();
    Tensor scale = weight.defined() ? invstd * weight.detach().to(kDouble) : invstd;
    Tensor shift = -g.mean * scale;
    if (bias.defined()) shift = shift + bias.detach().to(kDouble);
    out = (xd * scale.view(stat_view) + shift.view(stat_view)).reshape(input.sizes()).to(input.dtype());
  }
  if (!record) return out;

  auto node = std::make_shared<SyncBatchNormBackward>();
  for (const Tensor* t : {&input, &weight, &bias})
    node->mutable_next_edges().push_back(t->defined() ? autograd::gradient_edge(*t) : autograd::Edge{});
  node->input_metadata().push_back({DimVector(out.sizes()), out.dtype(), out.device()});
  node->input_ = autograd::SavedTensor(input, /*is_output=*/false);
  if (weight.defined()) node->weight_ = autograd::SavedTensor(weight, /*is_output=*/false);
  node->bias_dtype_ = bias.defined() ? bias.scalar_type() : input.scalar_type();
  node->mean_ = g.mean;
  node->invstd_ = invstd;
  node->count_ = g.count;
  node->group_ = group;
  autograd::set_history(out, node, 0);
  return out;
}

}  // namespace dist

namespace nn {

SyncBatchNormImpl::SyncBatchNormImpl(const SyncBatchNormOptions& options_) : options(options_) { reset(); }

void SyncBatchNormImpl::reset() {
  int64_t c = options.num_features();
  if (options.affine()) {
    weight = register_parameter("weight", ember::empty({c}));
    bias = register_parameter("bias", ember::empty({c}));
  } else {
    weight = register_parameter("weight", Tensor(), /*requires_grad=*/false);
    bias = register_parameter("bias", Tensor(), /*requires_grad=*/false);
  }
  bool track = options.track_running_stats();
  running_mean = register_buffer("running_mean", track ? ember::zeros({c}) : Tensor());
  running_var = register_buffer("running_var", track ? ember::ones({c}) : Tensor());
  num_batches_tracked =
      register_buffer("num_batches_tracked", track ? ember::tensor(int64_t{0}, kLong) : Tensor());
  reset_parameters();
}

void SyncBatchNormImpl::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void SyncBatchNormImpl::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor SyncBatchNormImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 2, "expected at least 2D input (got ", input.dim(), "D input)");
  EMBER_CHECK(input.size(1) != 0, "SyncBatchNorm number of input channels should be non-zero");
  // momentum = None means a cumulative average: batch k gets weight 1/k.
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum()) factor = 1.0 / num_batches_tracked.item<double>();
  }
  bool bn_training = is_training() || !running_mean.defined();
  // Buffers are updated only when tracked, and read only in evaluation.
  Tensor rm = (!is_training() || options.track_running_stats()) ? running_mean : Tensor();
  Tensor rv = (!is_training() || options.track_running_stats()) ? running_var : Tensor();

  // PyTorch synchronises only in training with an initialised default group; a group given
  // explicitly (say a ProcessGroupGloo built without init_process_group) is used as is.
  intrusive_ptr<dist::ProcessGroup> group = options.process_group();
  if (!group && bn_training && is_training() && dist::is_initialized()) group = dist::get_default_group();
  bool need_sync = bn_training && is_training() && group && group->size() > 1;
  if (!need_sync)
    return functional::batch_norm(input, rm, rv,
                                  functional::BatchNormFuncOptions()
                                      .weight(weight)
                                      .bias(bias)
                                      .training(bn_training)
                                      .momentum(factor)
                                      .eps(options.eps()));
  return dist::sync_batch_norm(input, weight, bias, rm, rv, options.eps(), factor, group);
}

void SyncBatchNormImpl::pretty_print(std::ostream& stream) const {
  stream << "SyncBatchNorm(" << options.num_features() << ", eps=" << python_float(options.eps())
         << ", momentum=" << (options.momentum() ? python_float(*options.momentum()) : "None")
         << ", affine=" << (options.affine() ? "True" : "False")
         << ", track_running_stats=" << (options.track_running_stats() ? "True" : "False") << ")";
}

std::shared_ptr<SyncBatchNormImpl> SyncBatchNormImpl::from_batch_norm(
    Module& module, const intrusive_ptr<dist::ProcessGroup>& group) {
  // The new layer shares the old one's parameters and buffers (PyTorch's conversion assigns
  // the same Parameter and buffer objects), so optimizers and state dicts keep working.
  auto convert = [&](const auto& bn) {
    const BatchNormOptions& o = bn.options;
    auto sync = std::make_shared<SyncBatchNormImpl>(SyncBatchNormOptions(o.num_features())
                                                        .eps(o.eps())
                                                        .momentum(o.momentum())
                                                        .affine(o.affine())
                                                        .track_running_stats(o.track_running_stats())
                                                        .process_group(group));
    sync->weight = sync->parameters_["weight"] = bn.weight;
    sync->bias = sync->parameters_["bias"] = bn.bias;
    sync->running_mean = sync->buffers_["running_mean"] = bn.running_mean;
    sync->running_var = sync->buffers_["running_var"] = bn.running_var;
    sync->num_batches_tracked = sync->buffers_["num_batches_tracked"] = bn.num_batches_tracked;
    sync->train(bn.is_training());
    return sync;
  };
  if (auto* bn = module.as<BatchNorm1dImpl>()) return convert(*bn);
  if (auto* bn = module.as<BatchNorm2dImpl>()) return convert(*bn);
  if (auto* bn = module.as<BatchNorm3dImpl>()) return convert(*bn);
  return nullptr;
}

std::shared_ptr<Module> SyncBatchNormImpl::convert_sync_batchnorm(
    std::shared_ptr<Module> module, intrusive_ptr<dist::ProcessGroup> process_group) {
  EMBER_CHECK(module, "convert_sync_batchnorm: module is null");
  if (auto sync = from_batch_norm(*module, process_group)) return sync;
  auto children = module->named_children();
  for (size_t i = 0; i < children.size(); ++i) {
    const std::string& name = children.items()[i].key();
    std::shared_ptr<Module> child = children.items()[i].value();
    auto sync = from_batch_norm(*child, process_group);
    if (!sync) {
      convert_sync_batchnorm(child, process_group);  // converts in place below this child
      continue;
    }
    // The containers run their children from their own lists: swap the entry there too.
    if (auto* seq = module->as<SequentialImpl>()) {
      *(seq->begin() + static_cast<std::ptrdiff_t>(i)) = AnyModule(sync);
    } else if (auto* list = module->as<ModuleListImpl>()) {
      *(list->begin() + static_cast<std::ptrdiff_t>(i)) = sync;
    } else {
      EMBER_CHECK(
          module->as<ModuleDictImpl>(), "convert_sync_batchnorm: cannot replace the BatchNorm child '", name,
          "' of ", module->name(),
          ": a C++ module calls its children through its own members, which cannot be rebound; "
          "hold the layers in a Sequential, ModuleList or ModuleDict, or build the model with SyncBatchNorm");
    }
    module->replace_module(name, sync);
  }
  return module;
}

}  // namespace nn
}  // namespace ember
