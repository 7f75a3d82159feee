// to_dot: a breadth-first walk over next_edges that prints each node once and every edge.
// to_text: a depth-first walk with an explicit stack (a long chain would overflow the call
// stack), drawing the tree with box-drawing characters.
#include "ember/autograd/graph_export.h"

#include <deque>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/node.h"

namespace ember::autograd {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

/// "float32" for torch.float32.
std::string short_dtype(ScalarType t) {
  std::string name = dtype_name(t);
  return name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
}

std::string shape_and_dtype(IntArrayRef sizes, ScalarType t) {
  std::ostringstream os;
  os << sizes << ' ' << short_dtype(t);
  return os.str();
}

/// "torch::autograd::AccumulateGrad" reads as "AccumulateGrad".
std::string short_name(const Node& n) {
  std::string name = n.name();
  const std::string prefix = "torch::autograd::";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

/// Finds leaf names: the params' names by tensor identity, else the tensor's own name.
class LeafNames {
 public:
  explicit LeafNames(const ParamNames* params) {
    if (params)
      for (const auto& item : *params) names_.emplace(item.value().unsafeGetTensorImpl(), item.key());
  }
  std::string operator()(const Tensor& v) const {
    auto it = names_.find(v.unsafeGetTensorImpl());
    return it != names_.end() ? it->second : v.name();
  }

 private:
  std::unordered_map<const void*, std::string> names_;
};

/// A leaf's "name [2, 3] float32" (no name: just the shape and dtype).
std::string leaf_text(const AccumulateGrad& acc, const LeafNames& names) {
  const Tensor& v = acc.variable();
  std::string name = names(v);
  return (name.empty() ? "" : name + " ") + shape_and_dtype(v.sizes(), v.dtype());
}

std::vector<std::string> saved_lines(const Node& n) {
  std::vector<std::string> out;
  for (const SavedTensorInfo& s : n.saved_tensor_info()) out.push_back(s.name + " " + shape_and_dtype(s.sizes, s.dtype));
  return out;
}

std::string dot_node(const Node& n, const LeafNames& names) {
  std::string label = escape(short_name(n));
  if (auto* acc = dynamic_cast<const AccumulateGrad*>(&n))
    return "[label=\"" + label + "\\n" + escape(leaf_text(*acc, names)) + "\", style=filled, fillcolor=lightblue]";
  for (const std::string& line : saved_lines(n)) label += "\\n" + escape(line);
  return "[label=\"" + label + "\"]";
}

std::string dot(const Tensor& root, const ParamNames* params) {
  LeafNames names(params);
  std::ostringstream os;
  os << "digraph backward {\n  node [shape=box];\n";
  Edge start = root.defined() ? gradient_edge(root) : Edge{};
  std::unordered_map<const Node*, size_t> ids;
  std::deque<const Node*> queue;
  auto id_of = [&](const Node* n) {
    auto [it, fresh] = ids.emplace(n, ids.size());
    if (fresh) {
      os << "  n" << it->second << " " << dot_node(*n, names) << ";\n";
      queue.push_back(n);
    }
    return it->second;
  };
  if (start.is_valid()) id_of(start.function.get());
  std::ostringstream edges;
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    size_t from = ids.at(n);
    for (const Edge& e : n->next_edges())
      if (e.is_valid()) edges << "  n" << from << " -> n" << id_of(e.function.get()) << ";\n";
  }
  os << edges.str() << "}\n";
  return os.str();
}

std::string text_line(const Node& n, const LeafNames& names) {
  if (auto* acc = dynamic_cast<const AccumulateGrad*>(&n)) return short_name(n) + ": " + leaf_text(*acc, names);
  std::string line = short_name(n);
  std::vector<std::string> saved = saved_lines(n);
  for (size_t i = 0; i < saved.size(); ++i) line += (i ? ", " : "  saved: ") + saved[i];
  return line;
}

std::string text(const Tensor& root, const ParamNames* params) {
  LeafNames names(params);
  Edge start = root.defined() ? gradient_edge(root) : Edge{};
  if (!start.is_valid()) return "";
  struct Item {
    const Node* node;
    std::string prefix;  // what the lines of this node's subtree start with
    bool last;           // the last child of its parent
    bool top;
  };
  std::ostringstream os;
  std::unordered_set<const Node*> shown;
  std::vector<Item> stack{{start.function.get(), "", true, true}};
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    os << it.prefix << (it.top ? "" : it.last ? "└── " : "├── ");
    if (!shown.insert(it.node).second) {
      os << short_name(*it.node) << " (see above)\n";
      continue;
    }
    os << text_line(*it.node, names) << '\n';
    std::string child_prefix = it.prefix + (it.top ? "" : it.last ? "    " : "│   ");
    std::vector<const Node*> children;
    for (const Edge& e : it.node->next_edges())
      if (e.is_valid()) children.push_back(e.function.get());
    for (size_t i = children.size(); i-- > 0;)  // reversed: the first child is printed first
      stack.push_back({children[i], child_prefix, i + 1 == children.size(), false});
  }
  return os.str();
}

}  // namespace

std::string to_dot(const Tensor& root) { return dot(root, nullptr); }
std::string to_dot(const Tensor& root, const ParamNames& params) { return dot(root, &params); }
std::string to_text(const Tensor& root) { return text(root, nullptr); }
std::string to_text(const Tensor& root, const ParamNames& params) { return text(root, &params); }

}  // namespace ember::autograd
