// The backward engine.
//
// Note [Engine order]
// Dependencies are counted from the roots first; a node runs once every gradient flowing
// into it has arrived. Among ready nodes the one with the highest sequence number (the most
// recently created) runs first, as in PyTorch, which frees activations in roughly the
// reverse order they were made; ties (leaf accumulators) run in the order they became
// ready, so a backward pass is deterministic. Gradients are checked against the shape and
// dtype the receiving node expects, and summed down when an op broadcast its input (the one
// place un-broadcasting happens, like PyTorch's validate_outputs).
//
// Note [Targets]
// autograd::grad and backward(inputs=...) name targets: the nodes where their inputs'
// gradients arrive. Only nodes on a path to a target run. A target's incoming gradient is
// captured after its pre-hooks; a target is applied only if a further target lies beyond
// it, or if it is the accumulator of a leaf that backward(inputs=...) should update.
#include "ember/autograd/engine.h"

#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/final_callback.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/unary.h"
#include "ember/core/profiler.h"

namespace ember::autograd {
namespace {

struct Capture {
  size_t input_nr;  // which incoming gradient of the node
  size_t slot;      // which entry of GraphTask::captured
};

struct GraphTask {
  bool keep_graph = false;
  bool create_graph = false;
  bool filtered = false;                 // Note [Targets]: only run what leads to a target
  std::unordered_set<Node*> targets;     // visited: pre-hooks and captures
  std::unordered_set<Node*> run;         // filtered mode: the nodes whose apply runs
  std::unordered_map<Node*, std::vector<Capture>> captures;
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, TensorList> buffers;
  TensorList captured;
  std::vector<std::shared_ptr<Node>> hold;  // targets stay alive (their addresses are keys)
  std::vector<std::function<void()>> final_callbacks;  // queue_callback's, run after the last node
};

/// The graph task running on this thread (a hook may start a nested backward; each pass
/// runs its own callbacks).
thread_local GraphTask* current_task = nullptr;

class CurrentTaskGuard {
 public:
  explicit CurrentTaskGuard(GraphTask* t) : prev_(current_task) { current_task = t; }
  ~CurrentTaskGuard() { current_task = prev_; }
  CurrentTaskGuard(const CurrentTaskGuard&) = delete;
  CurrentTaskGuard& operator=(const CurrentTaskGuard&) = delete;

 private:
  GraphTask* prev_;
};

/// Runs the queued callbacks in order; a callback may queue more (they run too).
void run_final_callbacks(GraphTask& task) {
  for (size_t i = 0; i < task.final_callbacks.size(); ++i) {
    std::function<void()> cb = std::move(task.final_callbacks[i]);
    cb();
  }
  task.final_callbacks.clear();
}

bool visits(const GraphTask& t, Node* n) { return !t.filtered || t.run.count(n) || t.targets.count(n); }
bool applies(const GraphTask& t, Node* n) { return !t.filtered || t.run.count(n); }

/// Ready nodes, highest sequence number first, then first come first served.
class ReadyQueue {
 public:
  void push(std::shared_ptr<Node> n) { q_.push({std::move(n), count_++}); }
  std::shared_ptr<Node> pop() {
    std::shared_ptr<Node> n = q_.top().node;
    q_.pop();
    return n;
  }
  bool empty() const { return q_.empty(); }

 private:
  struct Item {
    std::shared_ptr<Node> node;
    uint64_t order;
    bool operator<(const Item& o) const {
      uint64_t a = node->sequence_nr(), b = o.node->sequence_nr();
      return a != b ? a < b : order > o.order;
    }
  };
  std::priority_queue<Item> q_;
  uint64_t count_ = 0;
};

/// Checks a gradient against what the receiving node expects; sums away broadcast dims
/// and casts to the expected dtype (PyTorch's validate_outputs).
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
  EMBER_CHECK(grad.device() == meta.device, "Function ", producer.name(), " returned an invalid gradient at index ",
              index, " - expected device ", meta.device, " but got ", grad.device());
  if (grad.dtype() != meta.dtype) grad = grad.to(meta.dtype);
  return grad;
}

void add_to_buffer(GraphTask& task, Node* n, size_t i, const Tensor& g) {
  TensorList& buf = task.buffers[n];
  buf.resize(n->num_inputs());
  buf[i] = buf[i].defined() ? buf[i] + g : g;
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

/// Note [Targets]: a node runs if one of its edges leads to a node that is visited.
/// Post-order walk without recursion (graphs can be deep).
void compute_run_set(GraphTask& task, const std::vector<Node*>& roots) {
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack;
  for (Node* r : roots) {
    if (!seen.insert(r).second) continue;
    stack.emplace_back(r, 0);
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->num_outputs()) {
        Node* child = n->next_edge(i++).function.get();
        if (child && seen.insert(child).second) stack.emplace_back(child, 0);
        continue;
      }
      Node* done = n;
      stack.pop_back();
      for (const Edge& e : done->next_edges())
        if (e.is_valid() && visits(task, e.function.get())) { task.run.insert(done); break; }
    }
  }
}

void check_anomaly(const Node& n, const TensorList& outputs) {
  AutoGradMode off(false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !outputs[i].is_floating_point()) continue;
    EMBER_CHECK(!isnan(outputs[i]).any().item<bool>(), "Function '", n.name(), "' returned nan values in its ", i,
                "th output.");
  }
}

/// Runs one ready node and hands its gradients to the nodes its edges point at.
void evaluate(GraphTask& task, const std::shared_ptr<Node>& node, ReadyQueue& ready) {
  // Profiled as PyTorch's engine is: the whole step, and inside it the node's apply.
  std::optional<profiler::RecordFunction> step_range;
  if (profiler::is_enabled()) [[unlikely]]
    step_range.emplace("autograd::engine::evaluate_function: " + node->name(), profiler::EventKind::kOp);
  auto it = task.buffers.find(node.get());
  TensorList inputs = it == task.buffers.end() ? TensorList() : std::move(it->second);
  if (it != task.buffers.end()) task.buffers.erase(it);
  inputs.resize(node->num_inputs());
  node->run_pre_hooks(inputs);
  if (auto c = task.captures.find(node.get()); c != task.captures.end())
    for (const Capture& cap : c->second) task.captured[cap.slot] = inputs[cap.input_nr];
  if (!applies(task, node.get())) return;

  TensorList outputs;
  bool any = false;
  for (const Tensor& g : inputs) any = any || g.defined();
  if (any) {  // a node that received no gradient passes none on
    {
      std::optional<profiler::RecordFunction> apply_range;
      if (profiler::is_enabled()) [[unlikely]] apply_range.emplace(node->name(), profiler::EventKind::kOp);
      outputs = node->apply(std::move(inputs));
    }
    EMBER_CHECK(outputs.size() == node->num_outputs(), "Function ", node->name(),
                " returned an invalid number of gradients - expected ", node->num_outputs(), ", but got ",
                outputs.size());
    if (AnomalyMode::is_enabled()) check_anomaly(*node, outputs);
  }
  if (!task.keep_graph) node->release_variables();
  outputs.resize(node->num_outputs());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Edge& e = node->next_edge(i);
    if (!e.is_valid() || !visits(task, e.function.get())) continue;
    Node* next = e.function.get();
    if (outputs[i].defined())
      add_to_buffer(task, next, e.input_nr, validate_grad(*node, i, outputs[i], next->input_metadata()[e.input_nr]));
    if (--task.deps[next] == 0) ready.push(e.function);
  }
}

void execute(GraphTask& task, const std::vector<Edge>& roots, const TensorList& root_grads) {
  std::vector<Node*> root_nodes;
  for (const Edge& e : roots) root_nodes.push_back(e.function.get());
  compute_dependencies(task, root_nodes);
  if (task.filtered) compute_run_set(task, root_nodes);
  AutoGradMode mode(task.create_graph);
  for (size_t i = 0; i < roots.size(); ++i) {
    const InputMetadata& meta = roots[i].function->input_metadata()[roots[i].input_nr];
    Tensor g = root_grads[i].dtype() == meta.dtype ? root_grads[i] : root_grads[i].to(meta.dtype);
    add_to_buffer(task, root_nodes[i], roots[i].input_nr, g);
  }
  CurrentTaskGuard current(&task);
  ReadyQueue ready;
  std::unordered_set<Node*> queued;
  for (const Edge& r : roots)  // the nodes hold the whole graph alive while it runs
    if (task.deps[r.function.get()] == 0 && visits(task, r.function.get()) && queued.insert(r.function.get()).second)
      ready.push(r.function);
  while (!ready.empty()) evaluate(task, ready.pop(), ready);
  run_final_callbacks(task);
}

/// The gradient edges and seed gradients of the tensors backward starts from
/// (libtorch's _make_grads and run_backward checks, with PyTorch's texts).
void make_roots(const TensorList& tensors, const TensorList& grad_tensors, std::vector<Edge>& roots,
                TensorList& grads) {
  EMBER_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "got ", tensors.size(),
              " tensors and ", grad_tensors.size(), " gradients");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    Edge e = gradient_edge(t);
    EMBER_CHECK(e.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      EMBER_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = ones_like(t);
    } else {
      EMBER_CHECK(g.sizes().equals(t.sizes()), "Mismatch in shape: grad_output[", i, "] has a shape of torch.Size(",
                  g.sizes(), ") and output[", i, "] has a shape of torch.Size(", t.sizes(), ").");
    }
    roots.push_back(std::move(e));
    grads.push_back(g);
  }
}

/// The edge where input's gradient arrives; it must exist.
Edge target_edge(GraphTask& task, const Tensor& input) {
  Edge e = gradient_edge(input);
  EMBER_CHECK(e.is_valid(), "One of the differentiated Tensors does not require grad");
  task.hold.push_back(e.function);
  return e;
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  EMBER_CHECK(current_task != nullptr, "Final callbacks can only be installed during backward pass.");
  current_task->final_callbacks.push_back(std::move(callback));
}

void backward(const TensorList& tensors, const TensorList& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const TensorList& inputs) {
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  task.filtered = !inputs.empty();
  std::vector<Edge> roots;
  TensorList grads;
  make_roots(tensors, grad_tensors, roots, grads);
  for (const Tensor& in : inputs) {
    Edge e = target_edge(task, in);
    if (in.is_leaf()) {
      task.run.insert(e.function.get());  // the leaf's AccumulateGrad updates .grad
    } else {
      in.retain_grad();  // a non-leaf's .grad is filled by its retain_grad slot
      task.targets.insert(e.function.get());
    }
  }
  execute(task, roots, grads);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  EMBER_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  task.filtered = true;
  task.captured.resize(inputs.size());
  std::vector<Edge> roots;
  TensorList grads;
  make_roots(outputs, grad_outputs, roots, grads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = target_edge(task, inputs[i]);
    task.targets.insert(e.function.get());
    task.captures[e.function.get()].push_back({e.input_nr, i});
  }
  execute(task, roots, grads);
  for (const Tensor& g : task.captured)
    EMBER_CHECK(g.defined() || allow_unused,
                "One of the differentiated Tensors appears to not have been used in the graph. Set "
                "allow_unused=True if this is the desired behavior.");
  return task.captured;
}

}  // namespace ember::autograd
