// Node bookkeeping, hooks, AccumulateGrad, and the links between tensors and graph nodes.
#include "ember/autograd/node.h"

#include <atomic>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"

namespace ember::autograd {
namespace {
std::atomic<uint64_t> g_sequence_nr{0};
std::atomic<unsigned> g_hook_handle{1};
}  // namespace

unsigned next_hook_handle() { return g_hook_handle.fetch_add(1); }

Node::Node() : sequence_nr_(g_sequence_nr.fetch_add(1)) {}

unsigned Node::add_pre_hook(uint32_t output_nr, PreHook fn) {
  unsigned h = next_hook_handle();
  pre_hooks_.push_back({h, output_nr, std::move(fn)});
  return h;
}

bool Node::remove_pre_hook(unsigned handle) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it)
    if (it->handle == handle) { pre_hooks_.erase(it); return true; }
  return false;
}

void Node::run_pre_hooks(TensorList& grads) {
  for (auto& h : pre_hooks_) {
    if (h.output_nr >= grads.size() || !grads[h.output_nr].defined()) continue;
    Tensor r = h.fn(grads[h.output_nr]);
    if (r.defined()) grads[h.output_nr] = r;
  }
  for (auto& [nr, weak] : retained_) {
    auto slot = weak.lock();
    if (!slot || nr >= grads.size() || !grads[nr].defined()) continue;
    Tensor g = grads[nr];
    if (slot->defined()) {
      *slot = *slot + g;
    } else {
      AutoGradMode off(false);
      *slot = g.detach().clone();
    }
  }
}

void Node::add_retained(uint32_t output_nr, const std::shared_ptr<Tensor>& slot) {
  retained_.emplace_back(output_nr, slot);
}

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  sequence_nr_ = std::numeric_limits<uint64_t>::max();  // run as soon as ready, as PyTorch does
  input_metadata_.push_back({DimVector(variable_.sizes()), variable_.dtype(), variable_.device()});
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = grads[0];
  if (!g.defined()) return {};
  AutogradMeta& m = variable_.unsafeGetTensorImpl()->ensure_autograd_meta();
  for (auto& [handle, fn] : m.leaf_hooks) {
    Tensor r = fn(g);
    if (r.defined()) g = r;
  }
  if (!m.grad.defined()) {
    if (GradMode::is_enabled()) {
      m.grad = g.clone();  // create_graph: keep the gradient's own history
    } else if (g.use_count() == 1 && g.impl()->storage().use_count() == 1 && g.is_contiguous()) {
      m.grad = g.detach();  // nobody else holds it: steal instead of copying
    } else {
      m.grad = g.detach().clone();
    }
  } else if (GradMode::is_enabled()) {
    m.grad = m.grad + g;
  } else {
    m.grad.add_(g);
  }
  Tensor param = variable_;
  for (auto& fn : m.post_accumulate_hooks) fn(param);
  return {};
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = t.unsafeGetTensorImpl()->autograd_meta();
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  auto acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = t.unsafeGetTensorImpl()->ensure_autograd_meta();
  m.grad_fn = fn;
  m.output_nr = output_nr;
  m.requires_grad = false;  // derived from grad_fn for non-leaves
}

}  // namespace ember::autograd
