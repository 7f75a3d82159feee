// CUDA parity of softmax and log_softmax (core/ops/softmax.cpp; kernels in cuda/softmax.cu):
// every floating dtype, over dims 0, 1 and -1 of 3-d inputs whose lines take each kernel
// (short rows in registers, long rows a block each, strided lines), lines holding -inf, only
// -inf, NaN or +inf, gradients through backward(), the backward ops on identical inputs,
// non-contiguous, 0-dim and empty inputs, the dtype argument, and bitwise-repeatable results.
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// 3-d shapes whose lines along dims 0, 1 and -1 are short (7), medium (100, 4 elements a
/// lane) and long (3000: a block per row when last, many lanes along a strided dim).
const std::vector<std::vector<int64_t>> kShapes = {{4, 5, 7}, {3, 4, 100}, {2, 3, 3000}, {3000, 2, 3}};
const std::vector<int64_t> kDims = {0, 1, -1};

Tensor softmax_of(const Tensor& x, int64_t dim, bool log) { return log ? log_softmax(x, dim) : softmax(x, dim); }

/// x (a 3-d CPU tensor) with special lines along `dim`: one with some -inf elements, one of
/// only -inf, one with a NaN, one with a +inf.
Tensor with_special_lines(const Tensor& x, int64_t dim) {
  Tensor y = x.clone();
  Tensor v = y.transpose(dim, -1);  // lines along the last dim of this view
  auto line = [&](int64_t i, int64_t j) { return v.select(0, i).select(0, j); };
  int64_t n = v.size(-1);
  line(0, 0).narrow(0, 0, std::max<int64_t>(n / 2, 1)).fill_(-kInf);
  if (n > 1) line(0, 0).narrow(0, n - 1, 1).fill_(1.5);  // the rest stays finite
  line(0, 1).fill_(-kInf);
  line(1, 0).narrow(0, n / 2, 1).fill_(kNan);
  line(1, 1).narrow(0, n / 3, 1).fill_(kInf);
  return y;
}

/// Gradients go through the forward's output, which a 16-bit rounding may leave one unit apart
/// on the two devices; log_softmax's gradient reads exp(y), which spreads that unit.
Tol grad_tol(ScalarType t) {
  if (t == kHalf) return {2e-2, 2e-2};
  if (t == kBFloat16) return {1e-1, 1e-1};
  return default_tol(t);
}

}  // namespace

TEST_CASE("cuda softmax / log_softmax: every floating dtype, dims 0, 1 and -1, short and long lines") {
  for (ScalarType t : kFloatTypes)
    for (const auto& shape : kShapes)
      for (int64_t dim : kDims)
        for (bool log : {false, true}) {
          INFO(scalar_type_name(t) << " shape " << shape.size() << "-d [" << shape[0] << ", " << shape[1] << ", "
                                   << shape[2] << "] dim " << dim << (log ? " log_softmax" : " softmax"));
          check_parity([&](const TensorList& x) { return softmax_of(x[0], dim, log); }, {make_input(shape, t)});
        }
}

TEST_CASE("cuda softmax / log_softmax: lines with -inf, only -inf, NaN and +inf, as on the CPU") {
  for (ScalarType t : kFloatTypes)
    for (const auto& shape : kShapes)
      for (int64_t dim : kDims)
        for (bool log : {false, true}) {
          INFO(scalar_type_name(t) << " dim " << dim << " shape [" << shape[0] << ", " << shape[1] << ", " << shape[2]
                                   << "]" << (log ? " log_softmax" : " softmax"));
          Tensor x = with_special_lines(make_input(shape, kDouble), dim).to(t);
          check_parity([&](const TensorList& in) { return softmax_of(in[0], dim, log); }, {x});
        }
  // A row of one -inf and finite values: exactly 0 (softmax) and -inf (log_softmax) there.
  Tensor x = tensor({{-kInf, 0.0, 1.0}, {-kInf, -kInf, -kInf}}, kFloat);
  check_parity([](const TensorList& in) { return softmax(in[0], 1); }, {x});
  check_parity([](const TensorList& in) { return log_softmax(in[0], 1); }, {x});
  CHECK(host_values(softmax(x.to(cuda_device()), 1))[0] == 0.0);
}

TEST_CASE("cuda softmax / log_softmax: gradients through backward()") {
  for (ScalarType t : kFloatTypes)
    for (const auto& shape : kShapes)
      for (int64_t dim : kDims)
        for (bool log : {false, true}) {
          INFO(scalar_type_name(t) << " dim " << dim << " shape [" << shape[0] << ", " << shape[1] << ", " << shape[2]
                                   << "]" << (log ? " log_softmax" : " softmax"));
          check_grad_parity([&](const TensorList& x) { return softmax_of(x[0], dim, log); }, {make_input(shape, t)},
                            grad_tol(t));
        }
  // -inf elements and lines of only -inf backpropagate as on the CPU (0 / NaN).
  for (bool log : {false, true})
    check_grad_parity([&](const TensorList& x) { return softmax_of(x[0], -1, log); },
                      {with_special_lines(make_input({4, 5, 7}, kDouble), -1)});
}

TEST_CASE("cuda _softmax_backward_data / _log_softmax_backward_data on the same (grad, output)") {
  for (ScalarType t : kFloatTypes)
    for (const auto& shape : kShapes)
      for (int64_t dim : kDims)
        for (bool log : {false, true}) {
          INFO(scalar_type_name(t) << " dim " << dim << " shape [" << shape[0] << ", " << shape[1] << ", " << shape[2]
                                   << "]" << (log ? " log_softmax" : " softmax"));
          Tensor y = softmax_of(make_input(shape, kDouble), dim, log).to(t);
          Tensor g = make_input(shape, t);
          check_parity(
              [&](const TensorList& in) {
                return log ? _log_softmax_backward_data(in[0], in[1], dim) : _softmax_backward_data(in[0], in[1], dim);
              },
              {g, y});
        }
}

TEST_CASE("cuda softmax: non-contiguous, 0-dim and empty inputs, the dtype argument, very long rows") {
  for (bool log : {false, true}) {
    // Made dense first: a transposed input gives the CPU's values.
    check_parity([&](const TensorList& x) { return softmax_of(x[0].transpose(0, 2), 1, log); },
                 {make_input({5, 6, 7}, kFloat)});
    check_parity([&](const TensorList& x) { return softmax_of(x[0].narrow(2, 1, 30), -1, log); },
                 {make_input({3, 4, 40}, kFloat)});
    check_parity([&](const TensorList& x) { return softmax_of(x[0], 0, log); }, {make_input({}, kFloat)});
    check_parity([&](const TensorList& x) { return softmax_of(x[0], 1, log); }, {make_input({3, 0, 4}, kFloat)});
    check_parity([&](const TensorList& x) { return softmax_of(x[0], 0, log); }, {make_input({0, 5}, kFloat)});
    // 200000 elements a row: a 1024-thread block, many elements a thread. The CPU's float sum
    // of 200000 terms (in SIMD lanes) is itself good to ~1e-5, which log_softmax shows as is.
    check_parity([&](const TensorList& x) { return softmax_of(x[0], -1, log); }, {make_input({2, 200000}, kFloat)},
                 Tol{1e-4, 1e-5});
    // Many rows past one block of registers each.
    check_grad_parity([&](const TensorList& x) { return softmax_of(x[0], 1, log); }, {make_input({4000, 9}, kFloat)});
  }
  check_parity([](const TensorList& x) { return softmax(x[0], 1, kFloat); }, {make_input({3, 5}, kHalf)});
  check_parity([](const TensorList& x) { return log_softmax(x[0], 0, kDouble); }, {make_input({3, 5}, kFloat)});
  check_parity([](const TensorList& x) { return softmax(x[0], 1, kFloat); }, {make_input({3, 5}, kInt64)});
}

TEST_CASE("cuda softmax: the same input gives the same bits every time") {
  for (const auto& shape : std::vector<std::vector<int64_t>>{{64, 3000}, {64, 300}, {300, 64, 5}}) {
    Tensor x = make_input(shape, kFloat).to(cuda_device());
    for (int64_t dim : {0, -1}) {
      Tensor a = log_softmax(x, dim), b = log_softmax(x, dim);
      check_same(a, b.cpu(), Tol{0, 0});
      Tensor g = make_input(shape, kFloat).to(cuda_device());
      check_same(_softmax_backward_data(g, softmax(x, dim), dim), _softmax_backward_data(g, softmax(x, dim), dim).cpu(),
                 Tol{0, 0});
    }
  }
}

TEST_CASE("cuda softmax: integer inputs are refused with the CPU's message") {
  check_error_parity([](const TensorList& x) { return softmax(x[0], 0); }, {make_input({3}, kInt32)});
  check_error_parity([](const TensorList& x) { return log_softmax(x[0], 0); }, {make_input({3, 2}, kInt64)});
}
