// Error texts: shape mismatches, bad views, dims out of range, item() on many elements, misuse
// of autograd, and dtype errors. Each line holds the first line of the message.
#include "compat.h"

using compat::expect_error;
using torch::indexing::Slice;

int main() {
  expect_error("mm_shapes", [] { torch::mm(torch::ones({2, 3}), torch::ones({4, 5})); });
  expect_error("matmul_2d_2d", [] { torch::matmul(torch::ones({2, 3}), torch::ones({2, 3})); });
  expect_error("matmul_batched", [] { torch::matmul(torch::ones({2, 2, 3}), torch::ones({2, 4, 2})); });
  expect_error("matmul_batch_broadcast", [] {
    torch::matmul(torch::ones({2, 2, 3}), torch::ones({3, 3, 2}));
  });
  expect_error("matmul_0dim", [] { torch::matmul(torch::tensor(1.0), torch::ones({2})); });
  expect_error("mm_not_matrix", [] { torch::mm(torch::ones({3}), torch::ones({3, 2})); });
  expect_error("bmm_not_3d", [] { torch::bmm(torch::ones({2, 3}), torch::ones({3, 2})); });
  expect_error("mm_dtypes", [] { torch::mm(torch::ones({2, 2}), torch::ones({2, 2}, torch::kDouble)); });
  expect_error("dot_sizes", [] { torch::dot(torch::ones({3}), torch::ones({4})); });
  expect_error("dot_dtypes", [] { torch::dot(torch::ones({3}), torch::ones({3}, torch::kDouble)); });
  expect_error("dot_not_1d", [] { torch::dot(torch::ones({3, 1}), torch::ones({3})); });

  expect_error("broadcast_add", [] { torch::ones({3}) + torch::ones({4}); });
  expect_error("broadcast_2d", [] { torch::ones({2, 3}) * torch::ones({3, 2}); });
  expect_error("broadcast_inplace", [] { torch::ones({3}).add_(torch::ones({2, 3})); });
  expect_error("expand_size", [] { torch::ones({2, 3}).expand({3, 3}); });
  expect_error("expand_fewer_dims", [] { torch::ones({2, 3}).expand({3}); });

  expect_error("view_strides", [] { torch::arange(12).view({3, 4}).t().view({12}); });
  expect_error("view_size", [] { torch::ones({6}).view({4}); });
  expect_error("view_two_inferred", [] { torch::ones({6}).view({-1, -1}); });
  expect_error("reshape_size", [] { torch::ones({2, 3}).reshape({5}); });
  expect_error("permute_length", [] { torch::ones({2, 3}).permute({0, 1, 2}); });
  expect_error("permute_repeated", [] { torch::ones({2, 3}).permute({0, 0}); });
  expect_error("narrow_length", [] { torch::ones({4}).narrow(0, 2, 3); });
  expect_error("select_index", [] { torch::ones({3, 2}).select(0, 5); });
  expect_error("index_out_of_bounds", [] { torch::ones({3}).index({torch::tensor({5})}); });
  expect_error("index_integer_out_of_range", [] { torch::ones({3, 2}).index({Slice(), 2}); });
  expect_error("index_too_many", [] { torch::ones({3}).index({0, 0}); });
  expect_error("cat_sizes", [] { torch::cat({torch::ones({2, 3}), torch::ones({2, 4})}); });
  expect_error("stack_sizes", [] { torch::stack({torch::ones({2}), torch::ones({3})}); });

  expect_error("dim_sum", [] { torch::ones({2, 3}).sum({2}); });
  expect_error("dim_negative", [] { torch::ones({2, 3}).sum({-3}); });
  expect_error("dim_transpose", [] { torch::ones({2, 3}).transpose(0, 5); });
  expect_error("dim_select", [] { torch::ones({2, 3}).select(3, 0); });
  expect_error("dim_softmax_like", [] { torch::ones({2, 3}).logsumexp({4}); });
  expect_error("dim_0dim", [] { torch::tensor(1.0).unsqueeze(2); });
  expect_error("dim_repeated", [] { torch::ones({2, 3}).sum({1, 1}); });
  expect_error("max_empty", [] { torch::zeros({0}).max(); });
  expect_error("argmax_empty", [] { torch::zeros({0}).argmax(); });
  expect_error("topk_k", [] { torch::ones({3}).topk(4); });
  expect_error("mean_long", [] { torch::arange(3).mean(); });
  expect_error("std_long", [] { torch::arange(3).std(); });

  expect_error("item_many", [] { torch::ones({2, 3}).item(); });
  expect_error("item_empty", [] { torch::ones({0}).item(); });
  expect_error("data_ptr_type", [] { torch::ones({2}).data_ptr<double>(); });

  expect_error("backward_twice", [] {
    auto x = torch::ones({2}, torch::requires_grad());
    auto y = (x * x).sum();
    y.backward();
    y.backward();
  });
  expect_error("grad_twice", [] {
    auto x = torch::ones({2}, torch::requires_grad());
    auto y = x.exp().sum();
    torch::autograd::grad({y}, {x});
    torch::autograd::grad({y}, {x});
  });
  expect_error("inplace_leaf", [] { torch::ones({2}, torch::requires_grad()).add_(1); });
  expect_error("inplace_leaf_view", [] { torch::ones({2, 2}, torch::requires_grad()).select(0, 0).mul_(2); });
  expect_error("requires_grad_long", [] { torch::ones({2}, torch::kLong).requires_grad_(true); });
  expect_error("requires_grad_option_long",
               [] { torch::ones({2}, torch::TensorOptions().dtype(torch::kLong).requires_grad(true)); });
  expect_error("requires_grad_nonleaf", [] {
    auto x = torch::ones({2}, torch::requires_grad());
    (x * 2).requires_grad_(false);
  });
  expect_error("backward_non_scalar", [] { (torch::ones({2}, torch::requires_grad()) * 2).backward(); });
  expect_error("backward_no_grad", [] { torch::ones({2}).sum().backward(); });
  expect_error("backward_gradient_shape",
               [] { (torch::ones({2}, torch::requires_grad()) * 2).backward(torch::ones({3})); });
  expect_error("grad_unused", [] {
    auto a = torch::ones({2}, torch::requires_grad());
    auto b = torch::ones({2}, torch::requires_grad());
    torch::autograd::grad({(a * 2).sum()}, {a, b});
  });
  expect_error("grad_non_requiring", [] {
    auto a = torch::ones({2}, torch::requires_grad());
    torch::autograd::grad({(a * 2).sum()}, {torch::ones({2})});
  });
  expect_error("saved_tensor_modified", [] {
    auto x = torch::ones({3}, torch::requires_grad());
    auto y = x.exp();
    y.add_(1);
    y.sum().backward();
  });
  expect_error("saved_input_modified", [] {
    auto x = torch::ones({3}, torch::requires_grad());
    auto a = x.clone();
    auto y = a * a;
    a.mul_(torch::full({3}, 2.0));
    y.sum().backward();
  });

  expect_error("inplace_promotion", [] { torch::arange(3).add_(torch::ones({3})); });
  expect_error("inplace_scalar_promotion", [] { torch::arange(3).mul_(1.5); });
  expect_error("inplace_bool_result", [] { torch::ones({2}, torch::kBool).add_(torch::ones({2})); });
  expect_error("sub_bool", [] { torch::ones({2}, torch::kBool) - torch::ones({2}, torch::kBool); });
  expect_error("neg_bool", [] { torch::ones({2}, torch::kBool).neg(); });
  expect_error("bitwise_float", [] { torch::bitwise_and(torch::ones({2}), torch::ones({2})); });
  expect_error("div_bad_rounding", [] { torch::div(torch::ones({2}), torch::ones({2}), "round"); });
  expect_error("arange_zero_step", [] { torch::arange(0, 5, 0); });
  expect_error("arange_wrong_sign", [] { torch::arange(0, 5, -1); });
  expect_error("linspace_negative_steps", [] { torch::linspace(0, 1, -1); });
  expect_error("eye_negative", [] { torch::eye(-1); });
  expect_error("zeros_negative", [] { torch::zeros({2, -1}); });
  expect_error("where_cond_dtype",
               [] { torch::where(torch::ones({2}), torch::ones({2}), torch::zeros({2})); });
  expect_error("gather_dims", [] { torch::ones({2, 2}).gather(0, torch::zeros({2}, torch::kLong)); });
  expect_error("index_select_dtype", [] { torch::ones({3}).index_select(0, torch::zeros({1})); });
  return 0;
}
