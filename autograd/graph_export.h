// Graph export: the backward graph behind a tensor as Graphviz DOT text, for looking at what
// autograd recorded (`dot -Tsvg graph.dot > graph.svg`).
#pragma once

#include <string>

#include "ember/core/tensor.h"

namespace ember::autograd {

/// The backward graph reachable from `root`'s grad_fn: one box per Node (its name; a leaf's
/// accumulator also shows the leaf's name and shape) and one arrow per edge, pointing the
/// way gradients flow. Nodes are numbered in breadth-first order, so the text is stable.
std::string to_dot(const Tensor& root);

}  // namespace ember::autograd
