// Type promotion: categories bool < integer < floating, scalars and 0-dim tensors do not raise
// a dimensioned tensor's precision within its category, and float16/bfloat16 results.
#include "compat.h"

using compat::show;

int main() {
  auto i = torch::tensor({1, 2, 3});            // Long
  auto f = torch::tensor({0.5f, 1.5f, 2.5f});   // Float
  auto b = torch::tensor({true, false, true});  // Bool
  auto h = torch::tensor({1.0, 2.0, 3.0}, torch::kHalf);
  auto bf = torch::tensor({1.0, 2.0, 3.0}, torch::kBFloat16);
  auto i32 = torch::tensor({1, 2, 3}, torch::kInt);
  auto u8 = torch::tensor({200, 100, 1}, torch::kByte);
  auto i8 = torch::tensor({-1, 2, 3}, torch::kChar);
  auto d = torch::tensor({0.25, 0.5, 0.75}, torch::kDouble);

  show("long+float", i + f);
  show("long*2.5", i * 2.5);
  show("long+2", i + 2);
  show("long/2", i / 2);
  show("long/long", i / torch::tensor({2, 2, 2}));
  show("bool+long", b + i);
  show("bool+bool", b + b);
  show("bool*bool", b * b);
  show("bool*1.5", b * 1.5);
  show("bool+1", b + 1);
  show("bool+int32", b + i32);
  show("half+float", h + f);
  show("half*2.5", h * 2.5);
  show("half+long", h + i);
  show("half+double", h + d);
  show("bf16+half", bf + h);
  show("bf16*3", bf * 3);
  show("int32+long", i32 + i);
  show("int32*2", i32 * 2);
  show("int32*2.5", i32 * 2.5);
  show("uint8+int8", u8 + i8);
  show("uint8+uint8_wraps", u8 + u8);
  show("uint8*int32", u8 * i32);
  show("float+double", f + d);

  // 0-dim tensors behave like scalars unless they are of a higher category.
  show("float+0dim_double", f + torch::tensor(2.5, torch::kDouble));
  show("long+0dim_double", i + torch::tensor(2.5, torch::kDouble));
  show("int32+0dim_long", i32 + torch::tensor(5));
  show("half+0dim_float", h + torch::tensor(1.0f));
  show("int32+0dim_bool", i32 + torch::tensor(true));
  show("bool+0dim_long", b + torch::tensor(4));
  show("0dim_long+0dim_float", torch::tensor(3) + torch::tensor(0.5f));
  show("0dim_int32+0dim_long", torch::tensor(3, torch::kInt) + torch::tensor(4));
  show("0dim_float+1dim_double", torch::tensor(1.0f) * d);
  show("uint8+0dim_int8", u8 + torch::tensor(-1, torch::kChar));

  // Ops with their own dtype rules.
  show("long<float", i < f);
  show("long==2", i == 2);
  show("long.pow(2)", i.pow(2));
  show("long.pow(0.5)", i.pow(0.5));
  show("long.sqrt", i.sqrt());
  show("long.exp", i.exp());
  show("bool.exp", b.exp());
  show("long.neg", i.neg());
  show("long.abs", torch::tensor({-2, 3}).abs());
  show("long.sum", i.sum());
  show("int32.sum", i32.sum());
  show("bool.sum", b.sum());
  show("uint8.sum", u8.sum());
  show("half.sum", h.sum());
  show("long.sum_as_double", i.sum(torch::kDouble));
  show("long.cumsum", i.cumsum(0));
  show("int32.prod", i32.prod());
  show("half.mean", h.mean());
  show("long.div_floor", torch::div(torch::tensor({-7, 7}), 2, "floor"));
  show("long.div_trunc", torch::div(torch::tensor({-7, 7}), 2, "trunc"));
  show("long.remainder", torch::tensor({-7, 7}).remainder(3));
  show("where_long_float", torch::where(b, i, f));
  show("maximum_long_float", torch::maximum(i, f));
  show("float_inplace_add_long", f.clone().add_(i));
  show("long_inplace_mul_long", i.clone().mul_(i));
  show("float_inplace_add_double", f.clone().add_(d));
  show("half_inplace_mul_2.5", h.clone().mul_(2.5));
  show("float_to_half_overflow", torch::tensor({70000.0f, -70000.0f}).to(torch::kHalf));
  show("half_add_precision", torch::tensor({2048.0}, torch::kHalf) + 1);
  show("bf16_add_precision", torch::tensor({256.0}, torch::kBFloat16) + 1);
  return 0;
}
