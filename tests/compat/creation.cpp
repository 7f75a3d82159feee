// Factory functions: zeros/ones/full/arange/linspace/eye/tensor({...}) and their dtypes.
#include "compat.h"

using compat::show;

int main() {
  show("zeros", torch::zeros({2, 3}));
  show("zeros_long", torch::zeros({2}, torch::kLong));
  show("zeros_empty", torch::zeros({0, 3}));
  show("zeros_0dim", torch::zeros({}));
  show("ones_double", torch::ones({2, 2}, torch::kDouble));
  show("ones_bool", torch::ones({3}, torch::kBool));
  show("ones_half", torch::ones({2}, torch::kHalf));
  show("ones_options", torch::ones({2}, torch::TensorOptions().dtype(torch::kInt16)));
  show("full_double_value", torch::full({2, 2}, 1.5));
  show("full_int_dtype", torch::full({3}, 7, torch::kInt));
  show("full_int8_negative", torch::full({2}, -3, torch::kInt8));
  show("full_bool", torch::full({2}, true, torch::kBool));

  show("arange_end", torch::arange(5));
  show("arange_end_double", torch::arange(2.5));
  show("arange_start_end", torch::arange(2, 6));
  show("arange_float_bounds", torch::arange(0.5, 3.0));
  show("arange_step", torch::arange(1, 10, 3));
  show("arange_negative_step", torch::arange(5, 0, -2));
  show("arange_fraction_step", torch::arange(0, 1, 0.25));
  show("arange_dtype", torch::arange(4, torch::kDouble));
  show("arange_byte", torch::arange(250, 256, 2, torch::kByte));
  show("arange_bf16", torch::arange(3, torch::kBFloat16));
  show("arange_empty", torch::arange(3, 3));

  show("linspace", torch::linspace(0, 1, 5));
  show("linspace_double", torch::linspace(-1, 1, 4, torch::kDouble));
  show("linspace_one_step", torch::linspace(3, 7, 1));
  show("linspace_zero_steps", torch::linspace(3, 7, 0));
  show("linspace_decreasing", torch::linspace(2, -2, 5));
  show("linspace_int", torch::linspace(0, 10, 4, torch::kLong));

  show("eye3", torch::eye(3));
  show("eye2x3_long", torch::eye(2, 3, torch::kLong));
  show("eye3x2", torch::eye(3, 2));
  show("eye0", torch::eye(0));

  show("tensor_ints", torch::tensor({1, 2, 3}));
  show("tensor_doubles", torch::tensor({1.5, 2.5}));
  show("tensor_floats", torch::tensor({1.5f, 2.5f}));
  show("tensor_nested", torch::tensor({{1, 2}, {3, 4}}));
  show("tensor_nested_3d", torch::tensor({{{1.0, 2.0}}, {{3.0, 4.0}}}));
  show("tensor_dtype", torch::tensor({1, 2, 3}, torch::kFloat64));
  show("tensor_bools", torch::tensor({true, false, true}));
  show("tensor_scalar_double", torch::tensor(3.5));
  show("tensor_scalar_int", torch::tensor(7));
  show("tensor_vector_float", torch::tensor(std::vector<float>{1, 2, 3}));
  show("tensor_vector_double", torch::tensor(std::vector<double>{0.25, -1}));
  show("tensor_vector_long", torch::tensor(std::vector<int64_t>{4, 5}));
  show("tensor_int_as_half", torch::tensor({1, 2}, torch::kHalf));

  show("scalar_tensor_int", torch::scalar_tensor(2));
  show("scalar_tensor_double", torch::scalar_tensor(2.5, torch::kDouble));
  show("zeros_like", torch::zeros_like(torch::ones({2}, torch::kInt)));
  show("ones_like_dtype", torch::ones_like(torch::ones({2}, torch::kInt), torch::kFloat));
  show("full_like", torch::full_like(torch::zeros({2, 2}), 3));
  show("full_like_int", torch::full_like(torch::zeros({2}, torch::kLong), 2.7));
  compat::show_ints("empty_like_sizes", torch::empty_like(torch::zeros({3, 1})).sizes());

  compat::show_flag("requires_grad_option", torch::ones({2}, torch::requires_grad()).requires_grad());
  compat::show_flag("default_no_grad", torch::ones({2}).requires_grad());
  compat::show_flag("is_floating_point_long", torch::arange(3).is_floating_point());
  compat::show_int("numel", torch::zeros({2, 3, 4}).numel());
  compat::show_int("dim", torch::zeros({2, 3, 4}).dim());
  compat::show_int("element_size_half", torch::zeros({1}, torch::kHalf).element_size());
  compat::show_ints("strides", torch::zeros({2, 3, 4}).strides());

  auto c = torch::tensor({1.0, 2.0});
  auto d = c.clone();
  d.fill_(9);
  show("clone_independent", c);
  show("to_int", torch::tensor({1.7, -1.7, 2.5}).to(torch::kInt));
  show("to_bool", torch::tensor({0.0, 0.5, -2.0}).to(torch::kBool));
  show("to_byte_wrap", torch::tensor({-1, 256, 300}).to(torch::kByte));
  show("to_half_rounding", torch::tensor({1.0 / 3.0, 1000.1}).to(torch::kHalf));
  show("to_bf16_rounding", torch::tensor({1.0 / 3.0, 1000.1}).to(torch::kBFloat16));
  compat::show("item_double", torch::tensor({2.25}).item<double>());
  compat::show_int("item_long", torch::tensor({-4}).item<int64_t>());
  return 0;
}
