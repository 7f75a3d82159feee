// matmul's shape rules (1-D vectors, batches, broadcast batch dims) and mm/bmm/mv/dot/outer/addmm.
#include "compat.h"

using compat::show;

torch::Tensor seq(std::vector<int64_t> sizes, double scale = 1.0) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return (torch::arange(n, torch::kFloat) * scale - 1.0).reshape(sizes);
}

int main() {
  auto v3 = seq({3});
  auto m23 = seq({2, 3});
  auto m34 = seq({3, 4}, 0.5);

  show("1d@1d", torch::matmul(v3, v3));
  show("2d@1d", torch::matmul(m23, v3));
  show("1d@2d", torch::matmul(v3, m34));
  show("2d@2d", torch::matmul(m23, m34));
  show("3d@3d", torch::matmul(seq({2, 2, 3}), seq({2, 3, 2})));
  show("3d@2d", torch::matmul(seq({2, 2, 3}), m34));
  show("2d@3d", torch::matmul(m23, seq({2, 3, 2}, 0.25)));
  show("3d@1d", torch::matmul(seq({2, 2, 3}), v3));
  show("1d@3d", torch::matmul(v3, seq({2, 3, 2})));
  show("broadcast_batch", torch::matmul(seq({2, 1, 2, 3}), seq({3, 3, 2}, 0.5)));
  show("4d@1d", torch::matmul(seq({2, 1, 2, 3}), v3));
  show("transposed_operand", torch::matmul(m34.t(), m23.t()));
  show("sliced_operand",
       torch::matmul(seq({4, 6}).narrow(1, 1, 3), seq({6, 2}).index({torch::indexing::Slice({}, {}, 2)})));
  show("empty_inner", torch::matmul(torch::zeros({2, 0}), torch::zeros({0, 3})));
  show("empty_batch", torch::matmul(torch::zeros({0, 2, 3}), torch::zeros({3, 4})));
  show("double", torch::matmul(seq({2, 3}).to(torch::kDouble), seq({3, 2}).to(torch::kDouble)));
  show("long", torch::matmul(torch::arange(6).reshape({2, 3}), torch::arange(6).reshape({3, 2})));
  show("method", m23.matmul(m34));

  show("mm", torch::mm(m23, m34));
  show("mm_method", m23.mm(m34));
  show("bmm", torch::bmm(seq({3, 2, 2}), seq({3, 2, 1}, 2.0)));
  show("mv", torch::mv(m23, v3));
  show("dot", torch::dot(v3, v3 + 2));
  show("outer", torch::outer(v3, torch::tensor({1.0f, -1.0f})));
  show("addmm", torch::addmm(torch::ones({2, 4}), m23, m34));
  show("addmm_beta_alpha", torch::addmm(torch::ones({4}), m23, m34, 0.5, 2));
  show("addmm_beta0_ignores_nan", torch::addmm(torch::full({2, 4}, compat::kNaN), m23, m34, 0, 1));
  show("baddbmm", torch::baddbmm(torch::ones({2, 2, 2}), seq({2, 2, 3}), seq({2, 3, 2}), 2, 0.5));
  show("einsum_ij_jk", torch::einsum("ij,jk->ik", {m23, m34}));
  show("einsum_trace", torch::einsum("ii", {seq({3, 3})}));
  show("einsum_batch", torch::einsum("bij,bjk->bik", {seq({2, 2, 3}), seq({2, 3, 2})}));
  show("large_k", torch::matmul(torch::ones({2, 300}) * 0.01, torch::ones({300, 2})));
  return 0;
}
