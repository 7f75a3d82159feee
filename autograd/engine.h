// The backward engine: runs a graph of Nodes from roots to leaves, summing gradients per
// input, in PyTorch's order (highest sequence number first among ready nodes).
#pragma once

#include <optional>

#include "ember/autograd/node.h"

namespace ember::autograd {

/// Computes gradients of `tensors` w.r.t. the graph leaves and accumulates them into .grad.
void backward(const TensorList& tensors, const TensorList& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const TensorList& inputs = {});

/// Returns the gradients of `outputs` w.r.t. `inputs` without touching .grad
/// (torch::autograd::grad).
TensorList grad(const TensorList& outputs, const TensorList& inputs,
                const TensorList& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, bool allow_unused = false);

}  // namespace ember::autograd
