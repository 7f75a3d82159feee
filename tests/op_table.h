// The op table: one plain row per op (its name, family, accepted dtypes, devices, whether it
// is differentiable, and the inputs gradcheck samples), read by the sweeps that every op in it
// gets without a test of its own:
//   tests/core/test_op_table.cpp  float64 gradcheck (contiguous and transposed inputs), the
//                                 dtype sweep (every dtype the row accepts runs; every other
//                                 one raises an ember::Error), the coverage check (every op
//                                 name recorded in core/ops/ is a row here, or is listed as
//                                 not in the table yet), and docs/ops.md, which is this table
//                                 rendered (EMBER_UPDATE_DOCS=1 rewrites it);
//   tests/cuda/test_op_table.cpp  CPU-vs-CUDA parity of every CUDA row, in every dtype.
// No registration: adding an op means adding its row.
#pragma once

#include <vector>

#include "ember/core/ops/map_domain.h"
#include "ember/ember.h"

namespace ember::test {

/// gradcheck's sampling range of one input.
struct Range {
  double lo = -2;
  double hi = 2;
};

struct OpRow {
  const char* name;     // as PyTorch's Python API spells the call
  const char* node;     // the op name ember records (its Core ATen name: square records "pow")
  const char* family;   // unary, activation, binary, comparison, ternary
  MapDomain dtypes;     // the input dtypes it accepts (same for every tensor input)
  bool cuda;            // has CUDA kernels
  bool differentiable;  // has a backward (gradcheck'ed in float64)
  int arity;            // tensor inputs
  Range in[3];          // gradcheck's ranges, input by input
  Tensor (*fn)(const TensorList&);
};


/// The rows. Ranges keep gradcheck away from kinks and poles (abs at 0, log at 0, asin at +-1), and
/// integer samples of a divisor away from 0 (the dtype sweep converts the sampled values).
inline const std::vector<OpRow>& op_table() {
  using enum MapDomain;  // here only: its kBool would hide the dtype's elsewhere
  static const std::vector<OpRow> rows = {
      // ---- unary math (core/ops/unary.cpp; formulas in core/ops/unary_math.h) ----
      {"abs", "abs", "unary", kNumbers, true, true, 1, {{0.2, 2}}, [](const TensorList& x) { return x[0].abs(); }},
      {"neg", "neg", "unary", kNumbers, true, true, 1, {}, [](const TensorList& x) { return x[0].neg(); }},
      {"sign", "sign", "unary", kAll, true, true, 1, {{0.2, 2}}, [](const TensorList& x) { return x[0].sign(); }},
      {"square", "pow", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].square(); }},
      {"exp", "exp", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].exp(); }},
      {"exp2", "exp2", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].exp2(); }},
      {"expm1", "expm1", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].expm1(); }},
      {"log", "log", "unary", kAll, true, true, 1, {{0.2, 3}}, [](const TensorList& x) { return x[0].log(); }},
      {"log2", "log2", "unary", kAll, true, true, 1, {{0.2, 3}}, [](const TensorList& x) { return x[0].log2(); }},
      {"log10", "log10", "unary", kAll, true, true, 1, {{0.2, 3}}, [](const TensorList& x) { return x[0].log10(); }},
      {"log1p", "log1p", "unary", kAll, true, true, 1, {{-0.5, 3}}, [](const TensorList& x) { return x[0].log1p(); }},
      {"sqrt", "sqrt", "unary", kAll, true, true, 1, {{0.2, 3}}, [](const TensorList& x) { return x[0].sqrt(); }},
      {"rsqrt", "rsqrt", "unary", kAll, true, true, 1, {{0.2, 3}}, [](const TensorList& x) { return x[0].rsqrt(); }},
      {"reciprocal", "reciprocal", "unary", kAll, true, true, 1, {{0.5, 3}},
       [](const TensorList& x) { return x[0].reciprocal(); }},
      {"sin", "sin", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].sin(); }},
      {"cos", "cos", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].cos(); }},
      {"tan", "tan", "unary", kAll, true, true, 1, {{-1, 1}}, [](const TensorList& x) { return x[0].tan(); }},
      {"asinh", "asinh", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return asinh(x[0]); }},
      {"acosh", "acosh", "unary", kAll, true, true, 1, {{1.2, 3}}, [](const TensorList& x) { return acosh(x[0]); }},
      {"atanh", "atanh", "unary", kAll, true, true, 1, {{-0.8, 0.8}}, [](const TensorList& x) { return atanh(x[0]); }},
      {"asin", "asin", "unary", kAll, true, true, 1, {{-0.8, 0.8}}, [](const TensorList& x) { return x[0].asin(); }},
      {"acos", "acos", "unary", kAll, true, true, 1, {{-0.8, 0.8}}, [](const TensorList& x) { return x[0].acos(); }},
      {"atan", "atan", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].atan(); }},
      {"sinh", "sinh", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].sinh(); }},
      {"cosh", "cosh", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].cosh(); }},
      {"tanh", "tanh", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].tanh(); }},
      {"sigmoid", "sigmoid", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].sigmoid(); }},
      {"erf", "erf", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].erf(); }},
      {"erfc", "erfc", "unary", kAll, true, true, 1, {}, [](const TensorList& x) { return x[0].erfc(); }},
      {"floor", "floor", "unary", kNumbers, true, true, 1, {}, [](const TensorList& x) { return x[0].floor(); }},
      {"ceil", "ceil", "unary", kNumbers, true, true, 1, {}, [](const TensorList& x) { return x[0].ceil(); }},
      {"round", "round", "unary", kNumbers, true, true, 1, {}, [](const TensorList& x) { return x[0].round(); }},
      {"round(decimals=2)", "round", "unary", kFloating, true, true, 1, {},
       [](const TensorList& x) { return x[0].round(2); }},
      {"trunc", "trunc", "unary", kNumbers, true, true, 1, {}, [](const TensorList& x) { return x[0].trunc(); }},
      {"frac", "frac", "unary", kFloating, true, true, 1, {}, [](const TensorList& x) { return x[0].frac(); }},
      {"nan_to_num", "nan_to_num", "unary", kAll, true, true, 1, {},
       [](const TensorList& x) { return x[0].nan_to_num(); }},
      {"logical_not", "logical_not", "unary", kAll, true, false, 1, {},
       [](const TensorList& x) { return x[0].logical_not(); }},
      {"isnan", "", "unary", kAll, true, false, 1, {}, [](const TensorList& x) { return x[0].isnan(); }},
      {"isinf", "", "unary", kAll, true, false, 1, {}, [](const TensorList& x) { return x[0].isinf(); }},
      {"isfinite", "", "unary", kAll, true, false, 1, {}, [](const TensorList& x) { return x[0].isfinite(); }},
      // ---- activations and clamp (core/ops/activation.cpp; core/ops/activation_math.h) ----
      {"relu", "relu", "activation", kNumbers, true, true, 1, {}, [](const TensorList& x) { return x[0].relu(); }},
      {"leaky_relu", "leaky_relu", "activation", kFloating, true, true, 1, {},
       [](const TensorList& x) { return leaky_relu(x[0], 0.1); }},
      {"elu", "elu", "activation", kFloating, true, true, 1, {},
       [](const TensorList& x) { return elu(x[0], 0.7); }},
      {"selu", "elu", "activation", kFloating, true, true, 1, {}, [](const TensorList& x) { return selu(x[0]); }},
      {"gelu", "gelu", "activation", kFloating, true, true, 1, {}, [](const TensorList& x) { return gelu(x[0]); }},
      {"gelu(approximate='tanh')", "gelu", "activation", kFloating, true, true, 1, {},
       [](const TensorList& x) { return gelu(x[0], "tanh"); }},
      {"silu", "silu", "activation", kFloating, true, true, 1, {}, [](const TensorList& x) { return silu(x[0]); }},
      {"mish", "mish", "activation", kFloating, true, true, 1, {}, [](const TensorList& x) { return mish(x[0]); }},
      {"softplus", "softplus", "activation", kFloating, true, true, 1, {},
       [](const TensorList& x) { return softplus(x[0], 2, 3); }},
      {"hardtanh", "hardtanh", "activation", kNumbers, true, true, 1, {},
       [](const TensorList& x) { return hardtanh(x[0], -1.5, 1.5); }},
      {"relu6", "hardtanh", "activation", kNumbers, true, true, 1, {{-2, 8}},
       [](const TensorList& x) { return relu6(x[0]); }},
      {"celu", "elu", "activation", kFloating, true, true, 1, {}, [](const TensorList& x) { return celu(x[0], 0.7); }},
      {"logsigmoid", "log_sigmoid_forward", "activation", kFloating, true, true, 1, {{-6, 6}},
       [](const TensorList& x) { return log_sigmoid(x[0]); }},
      {"threshold", "threshold", "activation", kNumbers, true, true, 1, {},
       [](const TensorList& x) { return threshold(x[0], 0.5, 3); }},
      {"hardshrink", "hardshrink", "activation", kFloating, true, true, 1, {},
       [](const TensorList& x) { return hardshrink(x[0], 0.5); }},
      {"softshrink", "softshrink", "activation", kFloating, true, true, 1, {},
       [](const TensorList& x) { return softshrink(x[0], 0.5); }},
      {"clamp", "clamp", "activation", kAll, true, true, 1, {},
       [](const TensorList& x) { return x[0].clamp(-1, 1); }},
      {"clamp(Tensor min, Tensor max)", "clamp", "activation", kAll, true, true, 3, {{}, {-2, -0.5}, {0.5, 2}},
       [](const TensorList& x) { return x[0].clamp(std::optional<Tensor>(x[1]), std::optional<Tensor>(x[2])); }},
      // ---- binary arithmetic (core/ops/binary.cpp; core/ops/binary_math.h) ----
      {"add", "add", "binary", kAll, true, true, 2, {}, [](const TensorList& x) { return add(x[0], x[1], 2); }},
      {"sub", "sub", "binary", kNumbers, true, true, 2, {}, [](const TensorList& x) { return sub(x[0], x[1]); }},
      {"mul", "mul", "binary", kAll, true, true, 2, {}, [](const TensorList& x) { return mul(x[0], x[1]); }},
      {"div", "div", "binary", kAll, true, true, 2, {{}, {0.5, 2}}, [](const TensorList& x) { return div(x[0], x[1]); }},
      {"div(rounding_mode='floor')", "div", "binary", kNumbers, true, true, 2, {{}, {1, 3}},
       [](const TensorList& x) { return div(x[0], x[1], "floor"); }},
      {"div(rounding_mode='trunc')", "div", "binary", kNumbers, true, true, 2, {{}, {1, 3}},
       [](const TensorList& x) { return div(x[0], x[1], "trunc"); }},
      {"remainder", "remainder", "binary", kNumbers, true, true, 2, {{0.1, 0.9}, {1.5, 2}},
       [](const TensorList& x) { return remainder(x[0], x[1]); }},
      {"fmod", "fmod", "binary", kNumbers, true, true, 2, {{0.1, 0.9}, {1.5, 2}},
       [](const TensorList& x) { return fmod(x[0], x[1]); }},
      {"pow", "pow", "binary", kNumbers, true, true, 2, {{0.5, 2}, {-1, 1}},
       [](const TensorList& x) { return pow(x[0], x[1]); }},
      {"pow(Tensor, Scalar)", "pow", "binary", kAll, true, true, 1, {{0.5, 2}},
       [](const TensorList& x) { return pow(x[0], 3); }},
      {"atan2", "atan2", "binary", kAll, true, true, 2, {}, [](const TensorList& x) { return atan2(x[0], x[1]); }},
      {"maximum", "maximum", "binary", kAll, true, true, 2, {}, [](const TensorList& x) { return maximum(x[0], x[1]); }},
      {"minimum", "minimum", "binary", kAll, true, true, 2, {}, [](const TensorList& x) { return minimum(x[0], x[1]); }},
      {"bitwise_and", "", "binary", kIntegral, true, false, 2, {},
       [](const TensorList& x) { return bitwise_and(x[0], x[1]); }},
      {"bitwise_or", "", "binary", kIntegral, true, false, 2, {},
       [](const TensorList& x) { return bitwise_or(x[0], x[1]); }},
      {"bitwise_xor", "", "binary", kIntegral, true, false, 2, {},
       [](const TensorList& x) { return bitwise_xor(x[0], x[1]); }},
      // ---- comparisons (core/ops/compare.cpp; core/ops/compare_math.h): no gradient ----
      {"eq", "", "comparison", kAll, true, false, 2, {}, [](const TensorList& x) { return eq(x[0], x[1]); }},
      {"ne", "", "comparison", kAll, true, false, 2, {}, [](const TensorList& x) { return ne(x[0], x[1]); }},
      {"lt", "", "comparison", kAll, true, false, 2, {}, [](const TensorList& x) { return lt(x[0], x[1]); }},
      {"le", "", "comparison", kAll, true, false, 2, {}, [](const TensorList& x) { return le(x[0], x[1]); }},
      {"gt", "", "comparison", kAll, true, false, 2, {}, [](const TensorList& x) { return gt(x[0], x[1]); }},
      {"ge", "", "comparison", kAll, true, false, 2, {}, [](const TensorList& x) { return ge(x[0], x[1]); }},
      {"logical_and", "", "comparison", kAll, true, false, 2, {},
       [](const TensorList& x) { return logical_and(x[0], x[1]); }},
      {"logical_or", "", "comparison", kAll, true, false, 2, {},
       [](const TensorList& x) { return logical_or(x[0], x[1]); }},
      {"logical_xor", "", "comparison", kAll, true, false, 2, {},
       [](const TensorList& x) { return logical_xor(x[0], x[1]); }},
      {"isclose", "isclose", "comparison", kAll, true, false, 2, {},
       [](const TensorList& x) { return isclose(x[0], x[1]); }},
      // ---- ternary (core/ops/ternary.cpp; core/ops/ternary_math.h) ----
      {"where", "where", "ternary", kAll, true, true, 3, {},
       [](const TensorList& x) { return where(x[0].gt(0), x[1], x[2]); }},
      {"masked_fill", "masked_fill", "ternary", kAll, true, true, 2, {},
       [](const TensorList& x) { return masked_fill(x[0], x[1].gt(0), 1); }},
      {"lerp", "lerp", "ternary", kFloating, true, true, 2, {},
       [](const TensorList& x) { return lerp(x[0], x[1], 0.3); }},
      {"lerp(Tensor weight)", "lerp", "ternary", kFloating, true, true, 3, {},
       [](const TensorList& x) { return lerp(x[0], x[1], x[2]); }},
      {"addcmul", "addcmul", "ternary", kNumbers, true, true, 3, {},
       [](const TensorList& x) { return addcmul(x[0], x[1], x[2], 2); }},
      {"addcdiv", "addcdiv", "ternary", kFloating, true, true, 3, {{}, {}, {0.5, 2}},
       [](const TensorList& x) { return addcdiv(x[0], x[1], x[2], 2); }},
  };
  return rows;
}

/// Whether dtype t is in domain d (the row's dtypes column).
inline bool accepts(MapDomain d, ScalarType t) {
  switch (d) {
    case MapDomain::kAll: return true;
    case MapDomain::kNumbers: return t != kBool;
    case MapDomain::kIntegral: return !is_floating_point(t);
    case MapDomain::kBool: return t == kBool;
    case MapDomain::kFloating: break;
  }
  return is_floating_point(t);
}

/// The op names recorded in core/ops/ that have no row yet, each family waiting for its rows.
/// The coverage check fails when a name here gets a row (delete it here) or leaves the source,
/// and when an op name appears in core/ops/ that is in neither list: the list only shrinks.
inline const std::vector<const char*>& ops_not_in_table_yet() {
  static const std::vector<const char*> names = {
      // linear algebra, convolution, recurrent
      "addmm", "baddbmm", "bmm", "dot", "mm", "mv", "convolution", "convolution_backward_weight", "_cudnn_rnn",
      "_cudnn_rnn_backward", "linalg_cholesky", "linalg_det", "linalg_eigh", "linalg_inv", "linalg_slogdet",
      "linalg_solve",
      // views, shape and copies
      "as_strided", "cat", "constant_pad_nd", "copy_", "embed_view", "expand", "flip", "permute", "repeat", "roll",
      "stack", "to_copy", "unfold", "view",
      // indexing
      "embedding", "gather", "index", "index_add", "index_put", "index_select", "masked_select",
      // reductions, scans and scatters
      "cumprod", "cumsum", "logsumexp", "max", "mean", "min", "norm", "prod", "std", "sum", "var", "scatter",
      "scatter_add", "tril", "triu",
      // softmax, normalization, pooling, losses
      "_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
      "native_batch_norm", "max_pool2d_with_indices_backward", "binary_cross_entropy", "nll_loss",
      "nll_loss_backward"};
  return names;
}

}  // namespace ember::test
