// The backward engine.
//
// Note [Engine order]
// Dependencies are counted from the roots first; a node runs once every gradient flowing
// into it has arrived. Among ready nodes the one with the highest sequence number (the most
// recently created) runs first, as in PyTorch, which frees activations in roughly the
// reverse order they were made. Gradients are checked against the shape and dtype the
// receiving node expects, and summed down when an op broadcast its input (the one place
// un-broadcasting happens, like PyTorch's validate_outputs).
#include "ember/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/binary.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/unary.h"

namespace ember::autograd {
namespace {

struct Capture {
  size_t input_nr;
  size_t slot;
};

struct GraphTask {
  bool keep_graph = false;
  bool create_graph = false;
  bool accumulate = true;  // false for autograd::grad: leaves are captured, not accumulated
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, TensorList> buffers;
  std::unordered_map<Node*, std::vector<Capture>> captures;
  std::unordered_set<Node*> needed;  // empty: every node is needed
  TensorList captured;
};

bool is_needed(const GraphTask& task, Node* n) { return task.needed.empty() || task.needed.count(n); }

/// Checks a gradient against what the receiving node expects; sums away broadcast dims.
Tensor validate_grad(const Node& producer, size_t index, Tensor grad, const InputMetadata& meta) {
  if (!grad.sizes().equals(meta.sizes)) {
    bool expandable = grad.dim() >= static_cast<int64_t>(meta.sizes.size());
    for (size_t i = 0; expandable && i < meta.sizes.size(); ++i) {
      int64_t g = grad.sizes()[grad.dim() - meta.sizes.size() + i];
      expandable = meta.sizes[i] == g || meta.sizes[i] == 1;
    }
    EMBER_CHECK(expandable, "Function ", producer.name(), " returned an invalid gradient at index ", index,
                " - got ", grad.sizes(), " but expected shape compatible with ", meta.sizes.ref());
    grad = sum_to_size(grad, meta.sizes);
  }
  if (grad.dtype() != meta.dtype) grad = grad.to(meta.dtype);
  return grad;
}

void add_to_buffer(TensorList& buf, size_t i, const Tensor& g) {
  if (buf[i].defined()) buf[i] = buf[i] + g;
  else buf[i] = g;
}

/// Counts, for each node reachable from the roots, how many edges point at it.
void compute_dependencies(GraphTask& task, const std::vector<Node*>& roots) {
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (Node* r : roots)
    if (seen.insert(r).second) stack.push_back(r);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      ++task.deps[next];
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
}

/// Marks the nodes that lie on a path from a root to a captured node (autograd::grad only
/// runs those).
void compute_needed(GraphTask& task, const std::vector<Node*>& roots) {
  std::unordered_map<Node*, bool> memo;
  std::function<bool(Node*)> visit = [&](Node* n) -> bool {
    if (auto it = memo.find(n); it != memo.end()) return it->second;
    memo[n] = false;  // guards against revisiting while on the stack (graphs are acyclic)
    bool need = task.captures.count(n) > 0;
    for (const Edge& e : n->next_edges())
      if (e.is_valid() && visit(e.function.get())) need = true;
    memo[n] = need;
    if (need) task.needed.insert(n);
    return need;
  };
  for (Node* r : roots) visit(r);
}

void check_anomaly(const Node& n, const TensorList& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !outputs[i].is_floating_point()) continue;
    AutoGradMode off(false);
    EMBER_CHECK(!isnan(outputs[i]).any().item<bool>(), "Function '", n.name(),
                "' returned nan values in its ", i, "th output.");
  }
}

void execute(GraphTask& task, const std::vector<Edge>& roots, const TensorList& root_grads) {
  std::vector<Node*> root_nodes;
  for (const Edge& e : roots) root_nodes.push_back(e.function.get());
  compute_dependencies(task, root_nodes);
  if (!task.captures.empty() && !task.accumulate) compute_needed(task, root_nodes);
  // Keep every root alive for the duration of the run.
  std::vector<std::shared_ptr<Node>> hold;
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* n = roots[i].function.get();
    hold.push_back(roots[i].function);
    auto& buf = task.buffers[n];
    buf.resize(n->num_inputs());
    add_to_buffer(buf, roots[i].input_nr, root_grads[i]);
  }
  auto cmp = [](const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) {
    return a->sequence_nr() < b->sequence_nr();
  };
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, decltype(cmp)> ready(cmp);
  std::unordered_set<Node*> queued;
  for (const auto& r : hold)
    if (task.deps[r.get()] == 0 && is_needed(task, r.get()) && queued.insert(r.get()).second) ready.push(r);

  AutoGradMode mode(task.create_graph);
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    TensorList inputs = std::move(task.buffers[node.get()]);
    task.buffers.erase(node.get());
    inputs.resize(node->num_inputs());
    node->run_pre_hooks(inputs);
    if (auto it = task.captures.find(node.get()); it != task.captures.end())
      for (const Capture& c : it->second) task.captured[c.slot] = inputs[c.input_nr];
    bool is_leaf_sink = dynamic_cast<AccumulateGrad*>(node.get()) != nullptr;
    if (is_leaf_sink && !task.accumulate) continue;
    bool any = false;
    for (const Tensor& g : inputs) any = any || g.defined();
    if (!any) continue;
    TensorList outputs = node->apply(std::move(inputs));
    if (AnomalyMode::is_enabled()) check_anomaly(*node, outputs);
    if (!task.keep_graph) node->release_variables();
    for (size_t i = 0; i < node->num_outputs() && i < outputs.size(); ++i) {
      const Edge& e = node->next_edge(i);
      if (!e.is_valid() || !is_needed(task, e.function.get())) continue;
      Node* next = e.function.get();
      if (outputs[i].defined()) {
        auto& buf = task.buffers[next];
        buf.resize(next->num_inputs());
        add_to_buffer(buf, e.input_nr, validate_grad(*node, i, outputs[i], next->input_metadata()[e.input_nr]));
      }
      if (--task.deps[next] == 0 && queued.insert(next).second) ready.push(e.function);
    }
  }
}

/// The gradient edges and seed gradients of the tensors backward starts from.
void make_roots(const TensorList& tensors, const TensorList& grad_tensors, std::vector<Edge>& roots,
                TensorList& grads) {
  EMBER_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "grad can be implicitly "
              "created only for scalar outputs");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    Edge e = gradient_edge(t);
    EMBER_CHECK(e.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      EMBER_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = ones_like(t);
    } else {
      EMBER_CHECK(g.sizes().equals(t.sizes()), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                  g.sizes(), " and output[", i, "] has a shape of ", t.sizes(), ".");
    }
    roots.push_back(e);
    grads.push_back(g);
  }
}

TensorList run_capturing(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                         bool keep_graph, bool create_graph) {
  GraphTask task;
  task.keep_graph = keep_graph;
  task.create_graph = create_graph;
  task.accumulate = false;
  task.captured.resize(inputs.size());
  std::vector<std::shared_ptr<Node>> hold;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    EMBER_CHECK(e.is_valid(), "One of the differentiated Tensors does not require grad");
    hold.push_back(e.function);
    task.captures[e.function.get()].push_back({e.input_nr, i});
  }
  std::vector<Edge> roots;
  TensorList grads;
  make_roots(outputs, grad_outputs, roots, grads);
  execute(task, roots, grads);
  return task.captured;
}

}  // namespace

void backward(const TensorList& tensors, const TensorList& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const TensorList& inputs) {
  bool keep = retain_graph.value_or(create_graph);
  if (!inputs.empty()) {
    TensorList gs = run_capturing(tensors, inputs, grad_tensors, keep, create_graph);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!gs[i].defined()) continue;
      Tensor in = inputs[i];
      AutogradMeta& m = in.unsafeGetTensorImpl()->ensure_autograd_meta();
      AutoGradMode mode(create_graph);
      m.grad = m.grad.defined() ? m.grad + gs[i] : (create_graph ? gs[i] : gs[i].detach().clone());
    }
    return;
  }
  GraphTask task;
  task.keep_graph = keep;
  task.create_graph = create_graph;
  std::vector<Edge> roots;
  TensorList grads;
  make_roots(tensors, grad_tensors, roots, grads);
  execute(task, roots, grads);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  TensorList gs = run_capturing(outputs, inputs, grad_outputs, retain_graph.value_or(create_graph), create_graph);
  for (const Tensor& g : gs)
    EMBER_CHECK(g.defined() || allow_unused,
                "One of the differentiated Tensors appears to not have been used in the graph. Set "
                "allow_unused=True if this is the desired behavior.");
  return gs;
}

}  // namespace ember::autograd
