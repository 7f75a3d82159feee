// Linear algebra: matmul with all of PyTorch's shape rules, mm, bmm, addmm, baddbmm, mv, dot,
// outer (einsum: einsum.h). Every product goes through one internal GEMM (core/cpu/gemm.h).
#pragma once

#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor mv(const Tensor& m, const Tensor& v);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor ger(const Tensor& a, const Tensor& b);

}  // namespace ember
