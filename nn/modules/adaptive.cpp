// AdaptiveLogSoftmaxWithLoss as PyTorch's: the head scores the shortlist classes and one
// logit per cluster; a target in cluster i adds log_softmax(tail[i](x))[target - cutoff_i]
// to the head's log-probability of cluster i. Rows are routed to their cluster by index
// (computed from the targets on the host), so each tail runs on its own rows only.
#include "ember/nn/modules/adaptive.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/ternary.h"

namespace ember {
namespace nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options_)
    : options(std::move(options_)) {
  reset();
}

void AdaptiveLogSoftmaxWithLossImpl::reset() {
  const std::vector<int64_t>& c = options.cutoffs();
  bool ok = !c.empty() && std::is_sorted(c.begin(), c.end()) && c.front() > 0 &&
            c.back() <= options.n_classes() - 1 && std::adjacent_find(c.begin(), c.end()) == c.end();
  EMBER_CHECK(
      ok,
      "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each "
      "value is between 1 and n_classes-1");
  cutoffs = c;
  cutoffs.push_back(options.n_classes());
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head = register_module("head",
                         Linear(LinearOptions(options.in_features(), head_size).bias(options.head_bias())));
  tail = register_module("tail", ModuleList());
  for (int64_t i = 0; i < n_clusters; ++i) {
    // Python's in_features // div_value ** (i + 1): the floor of the quotient.
    auto hsz = static_cast<int64_t>(
        std::floor(static_cast<double>(options.in_features()) / std::pow(options.div_value(), i + 1)));
    int64_t osz = cutoffs[i + 1] - cutoffs[i];
    tail->push_back(Sequential(Linear(LinearOptions(options.in_features(), hsz).bias(false)),
                               Linear(LinearOptions(hsz, osz).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head->reset_parameters();
  for (size_t i = 0; i < tail->size(); ++i) {
    auto seq = tail->ptr<SequentialImpl>(i);
    for (size_t j = 0; j < seq->size(); ++j) seq->ptr<LinearImpl>(j)->reset_parameters();
  }
}

void AdaptiveLogSoftmaxWithLossImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveLogSoftmaxWithLoss";
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  int64_t targ_dim = target_.dim();
  if (targ_dim == 1) {
    EMBER_CHECK(input_.size(0) == target_.size(0),
                "Input and target should have the same size in the batch dimension.");
    EMBER_CHECK(input_.dim() == 2, "1D target tensor expects 2D input tensors, but found inputs with size ",
                input_.sizes());
  } else if (targ_dim == 0) {
    EMBER_CHECK(input_.dim() == 1, "0D target tensor expects 1D input tensors, but found inputs with size ",
                input_.sizes());
  } else {
    EMBER_CHECK(false, "0D or 1D target tensor expected, multi-target not supported");
  }
  bool batched = targ_dim > 0;
  Tensor input = batched ? input_ : input_.unsqueeze(0);
  Tensor target = batched ? target_ : target_.unsqueeze(0);
  int64_t batch = target.size(0);

  // Route each row on the host: the head class to gather (the target itself, or the
  // cluster's logit) and, per cluster, its rows and their targets within the cluster.
  Tensor tcpu = target.detach().to(kCPU).to(kLong).contiguous();
  const int64_t* t = tcpu.data_ptr<int64_t>();
  std::vector<int64_t> gather_inds(static_cast<size_t>(batch));
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(n_clusters)),
      rel(static_cast<size_t>(n_clusters));
  int64_t used = 0, tmin = 0, tmax = 0;
  for (int64_t r = 0; r < batch; ++r) {
    int64_t v = t[r];
    tmin = r == 0 ? v : std::min(tmin, v);
    tmax = r == 0 ? v : std::max(tmax, v);
    if (v < 0 || v >= options.n_classes()) continue;
    ++used;
    if (v < shortlist_size) {
      gather_inds[static_cast<size_t>(r)] = v;
      continue;
    }
    int64_t i =
        static_cast<int64_t>(std::upper_bound(cutoffs.begin(), cutoffs.end(), v) - cutoffs.begin()) - 1;
    gather_inds[static_cast<size_t>(r)] = shortlist_size + i;
    rows[static_cast<size_t>(i)].push_back(r);
    rel[static_cast<size_t>(i)].push_back(v - cutoffs[static_cast<size_t>(i)]);
  }
  EMBER_CHECK(used == batch, "Target values should be in [0, ", options.n_classes() - 1,
              "], but values in range [", tmin, ", ", tmax, "] were found. ");

  Device dev = input.device();
  Tensor output = zeros({batch}, TensorOptions().dtype(input.dtype()).device(dev));
  for (int64_t i = 0; i < n_clusters; ++i) {
    const auto& ri = rows[static_cast<size_t>(i)];
    if (ri.empty()) continue;
    Tensor row_idx = tensor(ri).to(dev);
    Tensor rel_t = tensor(rel[static_cast<size_t>(i)]).to(dev);
    Tensor cluster_out =
        tail->ptr<SequentialImpl>(static_cast<size_t>(i))->forward(input.index_select(0, row_idx));
    Tensor local = cluster_out.log_softmax(1).gather(1, rel_t.unsqueeze(1)).squeeze(1);
    output = output.index_add(0, row_idx, local);
  }
  Tensor head_logprob = head->forward(input).log_softmax(1);
  output = output + head_logprob.gather(1, tensor(gather_inds).to(dev).unsqueeze(1)).squeeze(1);
  double loss = (-output).mean().item<double>();
  if (!batched) output = output.squeeze(0);
  return ASMoutput(output, loss);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::_get_full_log_prob(const Tensor& input, const Tensor& head_output) {
  Tensor head_logprob = head_output.log_softmax(1);
  TensorList parts{head_logprob.narrow(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    Tensor cluster_logprob = tail->ptr<SequentialImpl>(static_cast<size_t>(i))->forward(input).log_softmax(1);
    parts.push_back(cluster_logprob + head_logprob.narrow(1, shortlist_size + i, 1));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input_) {
  bool batched = input_.dim() > 1;
  Tensor input = batched ? input_ : input_.unsqueeze(0);
  Tensor out = _get_full_log_prob(input, head->forward(input));
  return batched ? out : out.squeeze(0);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input_) {
  bool batched = input_.dim() > 1;
  Tensor input = batched ? input_ : input_.unsqueeze(0);
  Tensor head_output = head->forward(input);
  Tensor output = head_output.argmax(1);
  Tensor not_in_shortlist = output.ge(shortlist_size);
  if (not_in_shortlist.any().item<bool>()) {
    // Rows whose best head entry is a cluster logit take the argmax over every class.
    Tensor rows = not_in_shortlist.nonzero().squeeze(1);
    Tensor full =
        _get_full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows)).argmax(1);
    output = output.scatter(0, rows, full);
  }
  return batched ? output : output.squeeze(0);
}

}  // namespace nn
}  // namespace ember
