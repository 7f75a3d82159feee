// to_dot and to_text: the backward graph as Graphviz text (names, saved tensors, leaves with
// parameter names) and as an indented tree; the DOT is also run through Graphviz's `dot`
// when it is installed.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "op_check.h"

using namespace ember;

namespace {

void name_tensor(Tensor& t, const std::string& name) { t.unsafeGetTensorImpl()->ensure_autograd_meta().name = name; }

bool have_dot() { return std::system("command -v dot > /dev/null 2>&1") == 0; }

/// Runs `dot -Tsvg` on the text; true when Graphviz accepts it and draws something.
bool dot_accepts(const std::string& text) {
  auto dir = std::filesystem::temp_directory_path();
  std::string in = (dir / ("ember_graph_" + std::to_string(::getpid()) + ".dot")).string();
  std::string out = in + ".svg";
  std::ofstream(in) << text;
  int rc = std::system(("dot -Tsvg '" + in + "' -o '" + out + "' 2>&1").c_str());
  bool drawn = rc == 0 && std::filesystem::exists(out) && std::filesystem::file_size(out) > 0;
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  return drawn;
}

}  // namespace

TEST_CASE("to_dot of a small graph: names, saved tensors, leaves") {
  Tensor x = tensor({1.0f, 2.0f}, requires_grad());
  Tensor w = ones({2, 3}, requires_grad());
  name_tensor(x, "input");
  Tensor y = (x.view({2, 1}) * w).sum();
  // MulBackward0 keeps both factors (d(ab) = b da + a db); sum and view keep nothing.
  CHECK(autograd::to_dot(y) ==
        "digraph backward {\n"
        "  node [shape=box];\n"
        "  n0 [label=\"SumBackward0\"];\n"
        "  n1 [label=\"MulBackward0\\ninput0 [2, 1] float32\\ninput1 [2, 3] float32\"];\n"
        "  n2 [label=\"ViewBackward0\"];\n"
        "  n3 [label=\"AccumulateGrad\\n[2, 3] float32\", style=filled, fillcolor=lightblue];\n"
        "  n4 [label=\"AccumulateGrad\\ninput [2] float32\", style=filled, fillcolor=lightblue];\n"
        "  n0 -> n1;\n"
        "  n1 -> n2;\n"
        "  n1 -> n3;\n"
        "  n2 -> n4;\n"
        "}\n");
}

TEST_CASE("to_dot shows shared nodes once and every edge; saved outputs are 'result'") {
  Tensor x = tensor({1.0}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor e = x.exp();  // d/dx e^x = e^x: exp keeps its output
  Tensor y = e * e + x;
  CHECK(autograd::to_dot(y) ==
        "digraph backward {\n"
        "  node [shape=box];\n"
        "  n0 [label=\"AddBackward0\"];\n"
        "  n1 [label=\"MulBackward0\\ninput0 [1] float64\\ninput1 [1] float64\"];\n"
        "  n2 [label=\"AccumulateGrad\\n[1] float64\", style=filled, fillcolor=lightblue];\n"
        "  n3 [label=\"ExpBackward0\\nresult [1] float64\"];\n"
        "  n0 -> n1;\n"
        "  n0 -> n2;\n"
        "  n1 -> n3;\n"
        "  n1 -> n3;\n"
        "  n3 -> n2;\n"
        "}\n");
}

TEST_CASE("to_dot of leaves and of tensors without history") {
  Tensor x = tensor({1.0f}, requires_grad());
  name_tensor(x, "a \"quoted\" name");
  CHECK(autograd::to_dot(x) ==
        "digraph backward {\n  node [shape=box];\n"
        "  n0 [label=\"AccumulateGrad\\na \\\"quoted\\\" name [1] float32\", style=filled, fillcolor=lightblue];\n}\n");
  CHECK(autograd::to_dot(ones({2})) == "digraph backward {\n  node [shape=box];\n}\n");
  CHECK(autograd::to_dot(Tensor()) == "digraph backward {\n  node [shape=box];\n}\n");
}

TEST_CASE("saved tensors disappear from the view once backward frees them") {
  Tensor x = tensor({1.0f, 2.0f}, requires_grad());
  Tensor y = (x * x).sum();
  CHECK(autograd::to_dot(y).find("input0 [2] float32") != std::string::npos);
  y.backward();
  CHECK(autograd::to_dot(y).find("input0") == std::string::npos);
}

TEST_CASE("leaves take the names of a module's parameters") {
  nn::Linear fc(nn::LinearOptions(3, 2));
  Tensor x = ones({4, 3});
  Tensor loss = fc->forward(x).sum();
  std::string with = autograd::to_dot(loss, fc->named_parameters());
  CHECK(with.find("AccumulateGrad\\nweight [2, 3] float32") != std::string::npos);
  CHECK(with.find("AccumulateGrad\\nbias [2] float32") != std::string::npos);
  std::string without = autograd::to_dot(loss);
  CHECK(without.find("weight") == std::string::npos);
  CHECK(without.find("AccumulateGrad\\n[2, 3] float32") != std::string::npos);
  std::string text = autograd::to_text(loss, fc->named_parameters());
  CHECK(text.find("AccumulateGrad: weight [2, 3] float32") != std::string::npos);
  CHECK(text.find("AccumulateGrad: bias [2] float32") != std::string::npos);
}

TEST_CASE("to_text: an indented tree, shared nodes once") {
  Tensor x = tensor({1.0f, 2.0f}, requires_grad());
  Tensor w = ones({2, 3}, requires_grad());
  name_tensor(x, "input");
  Tensor y = (x.view({2, 1}) * w).sum();
  CHECK(autograd::to_text(y) ==
        "SumBackward0\n"
        "└── MulBackward0  saved: input0 [2, 1] float32, input1 [2, 3] float32\n"
        "    ├── ViewBackward0\n"
        "    │   └── AccumulateGrad: input [2] float32\n"
        "    └── AccumulateGrad: [2, 3] float32\n");

  Tensor a = tensor({1.0}, TensorOptions().dtype(kDouble).requires_grad(true));
  Tensor e = a.exp();
  Tensor z = e * e + a;
  CHECK(autograd::to_text(z) ==
        "AddBackward0\n"
        "├── MulBackward0  saved: input0 [1] float64, input1 [1] float64\n"
        "│   ├── ExpBackward0  saved: result [1] float64\n"
        "│   │   └── AccumulateGrad: [1] float64\n"
        "│   └── ExpBackward0 (see above)\n"
        "└── AccumulateGrad (see above)\n");
  CHECK(autograd::to_text(ones({2})) == "");
  CHECK(autograd::to_text(a) == "AccumulateGrad: [1] float64\n");
}

TEST_CASE("Graphviz's dot accepts the exported graphs") {
  if (!have_dot()) {
    MESSAGE("skipped: Graphviz's `dot` is not installed (apt-get install graphviz)");
    return;
  }
  Tensor x = tensor({1.0f, 2.0f}, requires_grad());
  name_tensor(x, "a \"quoted\" \\ name");
  nn::Linear fc(nn::LinearOptions(2, 2));
  Tensor loss = (fc->forward(x.view({1, 2})).relu() * x).sum();
  CHECK(dot_accepts(autograd::to_dot(loss, fc->named_parameters())));
  CHECK(dot_accepts(autograd::to_dot(ones({1}))));
  CHECK_FALSE(dot_accepts("digraph { n0 -> }"));  // the check can fail
}
