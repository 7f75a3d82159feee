// Graph export: the backward graph behind a tensor as Graphviz DOT text (`dot -Tsvg g.dot`)
// or as an indented text tree, for looking at what autograd recorded — torchviz's make_dot,
// without Python.
//
//   Tensor loss = model->forward(x).sum();
//   std::ofstream("graph.dot") << autograd::to_dot(loss, model->named_parameters());
//   std::cout << autograd::to_text(loss, model->named_parameters());
//
// prints, for a Linear(3, 2) layer and a sum:
//
//   SumBackward0
//   └── AddmmBackward0  saved: input0 [2] float32, input1 [4, 3] float32, input2 [3, 2] float32
//       ├── AccumulateGrad: bias [2] float32
//       └── PermuteBackward0
//           └── AccumulateGrad: weight [2, 3] float32
//
// Each grad_fn shows its name and the tensors it saved for backward (shape and dtype: what it
// keeps alive); each leaf's accumulator shows the leaf's name (from `params`, like torchviz's
// `params` argument, else the tensor's own name), shape and dtype.
#pragma once

#include <string>

#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember::autograd {

/// Leaf names for the graph views: nn::Module::named_parameters() gives one.
using ParamNames = OrderedDict<std::string, Tensor>;

/// The backward graph reachable from `root`'s grad_fn: one box per Node (its name and saved
/// tensors; a leaf's accumulator, filled light blue, shows its leaf) and one arrow per edge,
/// pointing the way gradients flow. Nodes are numbered in breadth-first order, so the text
/// is stable. A tensor with no history gives an empty graph.
std::string to_dot(const Tensor& root);
std::string to_dot(const Tensor& root, const ParamNames& params);

/// The same graph as an indented tree, one node per line, children in edge order. A node
/// reached a second time is printed as "<name> (see above)" without its subtree. A tensor
/// with no history gives "".
std::string to_text(const Tensor& root);
std::string to_text(const Tensor& root, const ParamNames& params);

}  // namespace ember::autograd
