// to_dot: the backward graph as Graphviz text.
#include "op_check.h"

using namespace ember;

TEST_CASE("to_dot of a small graph") {
  Tensor x = tensor({1.0f, 2.0f}, requires_grad());
  Tensor w = ones({2, 3}, requires_grad());
  x.unsafeGetTensorImpl()->ensure_autograd_meta().name = "input";
  Tensor y = (x.view({2, 1}) * w).sum();
  CHECK(autograd::to_dot(y) ==
        "digraph backward {\n"
        "  node [shape=box];\n"
        "  n0 [label=\"SumBackward0\"];\n"
        "  n1 [label=\"MulBackward0\"];\n"
        "  n2 [label=\"ViewBackward0\"];\n"
        "  n3 [label=\"AccumulateGrad\\n[2, 3]\"];\n"
        "  n4 [label=\"AccumulateGrad\\ninput [2]\"];\n"
        "  n0 -> n1;\n"
        "  n1 -> n2;\n"
        "  n1 -> n3;\n"
        "  n2 -> n4;\n"
        "}\n");
}

TEST_CASE("to_dot shows shared nodes once and every edge") {
  Tensor x = tensor({1.0f}, requires_grad());
  Tensor e = x.exp();
  Tensor y = e * e + x;
  CHECK(autograd::to_dot(y) ==
        "digraph backward {\n"
        "  node [shape=box];\n"
        "  n0 [label=\"AddBackward0\"];\n"
        "  n1 [label=\"MulBackward0\"];\n"
        "  n2 [label=\"AccumulateGrad\\n[1]\"];\n"
        "  n3 [label=\"ExpBackward0\"];\n"
        "  n0 -> n1;\n"
        "  n0 -> n2;\n"
        "  n1 -> n3;\n"
        "  n1 -> n3;\n"
        "  n3 -> n2;\n"
        "}\n");
}

TEST_CASE("to_dot of leaves and of tensors without history") {
  Tensor x = tensor({1.0f}, requires_grad());
  x.unsafeGetTensorImpl()->ensure_autograd_meta().name = "a \"quoted\" name";
  CHECK(autograd::to_dot(x) ==
        "digraph backward {\n  node [shape=box];\n  n0 [label=\"AccumulateGrad\\na \\\"quoted\\\" name [1]\"];\n}\n");
  CHECK(autograd::to_dot(ones({2})) == "digraph backward {\n  node [shape=box];\n}\n");
  CHECK(autograd::to_dot(Tensor()) == "digraph backward {\n  node [shape=box];\n}\n");
}
