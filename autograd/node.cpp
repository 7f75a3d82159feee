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

// Note [Iterative graph deletion]
// Dropping the last tensor of a long chain would otherwise destroy node after node
// recursively, one stack frame per node. Each node whose only owner is this edge list hands
// its own edges over before it dies, so the chain unwinds in a loop (as PyTorch's deleteNode).
Node::~Node() {
  std::vector<std::shared_ptr<Node>> stack;
  for (Edge& e : next_edges_) {
    if (!e.function) continue;
    // A node shared elsewhere, or one with no edges of its own (a leaf's AccumulateGrad),
    // cannot start a chain: release it here without allocating a stack (per-op overhead).
    if (e.function.use_count() != 1 || e.function->next_edges_.empty()) {
      e.function.reset();
      continue;
    }
    stack.push_back(std::move(e.function));
  }
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (n.use_count() != 1) continue;
    for (Edge& e : n->next_edges_)
      if (e.function) stack.push_back(std::move(e.function));
  }
}

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
  // retain_grad accumulates like a leaf's .grad: a copy the first time, a sum after.
  for (auto& [nr, weak] : retained_) {
    auto slot = weak.lock();
    if (!slot || nr >= grads.size() || !grads[nr].defined()) continue;
    const Tensor& g = grads[nr];
    *slot = slot->defined() ? *slot + g : (GradMode::is_enabled() ? g.clone() : g.detach().clone());
  }
}

void Node::add_retained(uint32_t output_nr, const std::shared_ptr<Tensor>& slot) {
  retained_.emplace_back(output_nr, slot);
}

void Node::remove_retained(const std::shared_ptr<Tensor>& slot) {
  std::erase_if(retained_, [&](const auto& p) { return p.second.lock() == slot; });
}

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  sequence_nr_ = std::numeric_limits<uint64_t>::max();  // run as soon as ready, as PyTorch does
  input_metadata_.push_back({DimVector(variable_.sizes()), variable_.dtype(), variable_.device()});
}

void AccumulateGrad::run_pre_hooks(TensorList& grads) {
  AutogradMeta* m = variable_.unsafeGetTensorImpl()->autograd_meta();
  if (!m || grads.empty() || !grads[0].defined()) return;
  for (auto& [handle, fn] : m->leaf_hooks) {
    Tensor r = fn(grads[0]);
    if (r.defined()) grads[0] = r;
  }
}

namespace {

/// Whether the engine's gradient can become .grad without a copy: nobody else can see it
/// (one handle, one storage owner), it is dense, and it is no view (PyTorch's steal rule).
bool can_steal(const Tensor& g) {
  return !GradMode::is_enabled() && g.use_count() == 1 && g.impl()->storage().use_count() == 1 &&
         g.is_contiguous() && g.unsafeGetTensorImpl()->autograd_meta() == nullptr;
}

}  // namespace

// As PyTorch's AccumulateGrad::accumulateGrad: with create_graph (grad mode on) the result
// keeps its history; otherwise .grad is a plain tensor updated in place.
TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads[0]);
  grads.clear();
  if (!g.defined()) return {};
  AutogradMeta& m = variable_.unsafeGetTensorImpl()->ensure_autograd_meta();
  if (!m.grad.defined()) {
    if (can_steal(g)) m.grad = std::move(g);
    else m.grad = GradMode::is_enabled() ? g.clone() : g.detach().clone();
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
  if (const auto& fn = t.grad_fn()) return {fn, m->output_nr};  // grad_fn() refreshes stale views
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
