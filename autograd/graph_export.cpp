// to_dot: a breadth-first walk over next_edges that prints each node once and every edge.
#include "ember/autograd/graph_export.h"

#include <deque>
#include <sstream>
#include <unordered_map>

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

/// "torch::autograd::AccumulateGrad" reads as "AccumulateGrad"; a leaf also shows itself.
std::string label_of(const Node& n) {
  std::string name = n.name();
  const std::string prefix = "torch::autograd::";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  auto* acc = dynamic_cast<const AccumulateGrad*>(&n);
  if (!acc) return escape(name);
  std::ostringstream os;
  const Tensor& v = acc->variable();
  os << name << "\\n" << (v.name().empty() ? "" : escape(v.name()) + " ") << v.sizes();
  return os.str();
}

}  // namespace

std::string to_dot(const Tensor& root) {
  std::ostringstream os;
  os << "digraph backward {\n  node [shape=box];\n";
  Edge start = root.defined() ? gradient_edge(root) : Edge{};
  std::unordered_map<const Node*, size_t> ids;
  std::deque<const Node*> queue;
  auto id_of = [&](const Node* n) {
    auto [it, fresh] = ids.emplace(n, ids.size());
    if (fresh) {
      os << "  n" << it->second << " [label=\"" << label_of(*n) << "\"];\n";
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

}  // namespace ember::autograd
