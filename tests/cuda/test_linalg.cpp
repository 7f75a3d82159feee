// Matrix products on CUDA (cuBLAS, cuda/gemm.cpp) against the CPU: mm, bmm, addmm, baddbmm,
// mv, dot, outer, matmul's shape rules and einsum, in every float dtype, with transposed,
// sliced, expanded and broadcast-batch operands; empty and k == 0 products; gradients;
// non-default streams and other threads; and PyTorch's errors (integer dtypes have no CUDA
// product, shape mismatches say the same as on the CPU). Then linear's bias fused through
// cuBLASLt's epilogue (float32, float16, bfloat16; transposed and misaligned operands; the
// cases that must not fuse), and ember::backends::cuda::matmul::allow_tf32 on and off.
#include <cmath>
#include <string>
#include <thread>

#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Products sum k terms in an order cuBLAS chooses (and, for 16-bit types, may reduce
/// partial sums in 16 bits, PyTorch's default), so they get looser tolerances than
/// elementwise ops: about a few units in the last place of values of size ~sqrt(k).
Tol product_tol(ScalarType t) {
  switch (t) {
    case kHalf:
      return {1e-2, 1e-2};
    case kBFloat16:
      return {5e-2, 2e-2};
    case kFloat:
      return {1e-4, 1e-4};
    default:
      return {1e-10, 1e-10};
  }
}

/// Inputs in [-1, 1), so sums stay small and tolerances meaningful.
Tensor input(IntArrayRef shape, ScalarType t) { return make_input(shape, t, -1, 1); }

std::string shape_string(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// The message the op raises on CUDA tensors ("" when it does not raise).
template <class F>
std::string cuda_error(F f, const TensorList& inputs) {
  try {
    TensorList in = to_cuda(inputs);
    (void)f(in);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cuda mm: every float dtype, odd sizes, transposed and sliced operands") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    const Tol tol = product_tol(t);
    auto mm2 = [](const TensorList& x) { return x[0].mm(x[1]); };
    check_parity(mm2, {input({17, 33}, t), input({33, 9}, t)}, tol);
    check_parity(mm2, {input({1, 1}, t), input({1, 1}, t)}, tol);
    check_parity(mm2, {input({5, 1}, t), input({1, 7}, t)}, tol);  // k == 1: an outer product
    check_parity(mm2, {input({1, 64}, t), input({64, 1}, t)}, tol);
    // Transposed operands reach cuBLAS as transposes, without copies.
    check_parity([](const TensorList& x) { return x[0].t().mm(x[1]); },
                 {input({33, 17}, t), input({33, 9}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].mm(x[1].t()); },
                 {input({17, 33}, t), input({9, 33}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].t().mm(x[1].t()); },
                 {input({33, 17}, t), input({9, 33}, t)}, tol);
    // Padded rows (a leading dimension larger than the row) and steps along columns (copied).
    check_parity([](const TensorList& x) { return x[0].slice(1, 2, 20).mm(x[1].slice(0, 0, 36, 2)); },
                 {input({6, 24}, t), input({36, 5}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].slice(1, 0, 24, 3).mm(x[1].slice(1, 1, 12, 2)); },
                 {input({6, 24}, t), input({8, 12}, t)}, tol);
    // One matrix row of another tensor (x[0] of a batch), and a 0-stride expanded operand.
    check_parity(
        [](const TensorList& x) {
          return x[0][1].t().mm(x[1].expand({4, 6}));
        },
        {input({3, 4, 5}, t), input({1, 6}, t)}, tol);
  }
}

TEST_CASE("cuda mm: a product with over 1<<20 outputs, and a deep k") {
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) {
    INFO("dtype " << t);
    check_parity([](const TensorList& x) { return x[0].mm(x[1]); },
                 {input({1025, 256}, t), input({256, 1027}, t)}, product_tol(t));
  }
  check_parity([](const TensorList& x) { return x[0].mm(x[1]); },
               {input({7, 4099}, kDouble), input({4099, 5}, kDouble)}, product_tol(kDouble));
  check_parity([](const TensorList& x) { return x[0].mm(x[1]); },
               {input({7, 1000}, kFloat), input({1000, 5}, kFloat)}, Tol{1e-3, 1e-4});
}

TEST_CASE("cuda mm and bmm: empty results and an empty inner dimension") {
  for (ScalarType t : {kFloat, kHalf}) {
    auto mm2 = [](const TensorList& x) { return x[0].mm(x[1]); };
    check_parity(mm2, {input({0, 3}, t), input({3, 4}, t)});
    check_parity(mm2, {input({3, 0}, t), input({0, 4}, t)});  // k == 0: zeros
    check_parity([](const TensorList& x) { return x[0].bmm(x[1]); },
                 {input({0, 2, 3}, t), input({0, 3, 4}, t)});
    check_parity([](const TensorList& x) { return x[0].bmm(x[1]); },
                 {input({2, 2, 0}, t), input({2, 0, 4}, t)});
  }
}

TEST_CASE("cuda bmm: batches with transposed items, a broadcast batch and interleaved items") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    const Tol tol = product_tol(t);
    auto bmm2 = [](const TensorList& x) { return x[0].bmm(x[1]); };
    check_parity(bmm2, {input({4, 7, 5}, t), input({4, 5, 3}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].transpose(1, 2).bmm(x[1].transpose(1, 2)); },
                 {input({4, 5, 7}, t), input({4, 3, 5}, t)}, tol);
    // Batch stride 0: one matrix for every item.
    check_parity(
        [](const TensorList& x) {
          return x[0].expand({4, 7, 5}).bmm(x[1]);
        },
        {input({1, 7, 5}, t), input({4, 5, 3}, t)}, tol);
    // Items interleaved in memory (m, batch, k), and the batch innermost (copied).
    check_parity(
        [](const TensorList& x) {
          return x[0].permute({1, 0, 2}).bmm(x[1]);
        },
        {input({7, 4, 5}, t), input({4, 5, 3}, t)}, tol);
    check_parity(
        [](const TensorList& x) {
          return x[0].permute({2, 0, 1}).bmm(x[1]);
        },
        {input({7, 5, 4}, t), input({4, 5, 3}, t)}, tol);
    check_parity(bmm2, {input({300, 2, 3}, t), input({300, 3, 2}, t)}, tol);  // many small items
  }
}

TEST_CASE("cuda addmm and baddbmm: beta, alpha, broadcast self, beta == 0 ignores NaN") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    const Tol tol = product_tol(t);
    check_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2]); },
                 {input({6, 4}, t), input({6, 5}, t), input({5, 4}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2], 0.5, -2); },
                 {input({4}, t), input({6, 5}, t), input({5, 4}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].addmm(x[1].t(), x[2], 2, 1); },
                 {input({6, 1}, t), input({5, 6}, t), input({5, 4}, t)}, tol);
    // beta == 0: self is not read; alpha == 0: only beta * self.
    check_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2], 0, 1); },
                 {full({6, 4}, NAN, TensorOptions().dtype(t)), input({6, 5}, t), input({5, 4}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2], 3, 0); },
                 {input({6, 4}, t), input({6, 5}, t), input({5, 4}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2], 3, 2); },
                 {input({6, 4}, t), input({6, 0}, t), input({0, 4}, t)}, tol);  // k == 0

    check_parity([](const TensorList& x) { return x[0].baddbmm(x[1], x[2]); },
                 {input({3, 6, 4}, t), input({3, 6, 5}, t), input({3, 5, 4}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].baddbmm(x[1], x[2].transpose(1, 2), -1, 0.25); },
                 {input({6, 1}, t), input({3, 6, 5}, t), input({3, 4, 5}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].baddbmm(x[1], x[2], 0, 1); },
                 {full({3, 6, 4}, NAN, TensorOptions().dtype(t)), input({3, 6, 5}, t), input({3, 5, 4}, t)},
                 tol);
  }
}

TEST_CASE("cuda mv, dot, outer: strided and expanded vectors") {
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    const Tol tol = product_tol(t);
    check_parity([](const TensorList& x) { return x[0].mv(x[1]); }, {input({7, 9}, t), input({9}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].t().mv(x[1].slice(0, 0, 21, 3)); },
                 {input({7, 9}, t), input({21}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].mv(x[1].expand({9})); },
                 {input({7, 9}, t), input({1}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].mv(x[1]); }, {input({0, 9}, t), input({9}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].dot(x[1]); }, {input({100}, t), input({100}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].slice(0, 0, 30, 2).dot(x[1].slice(0, 1, 16)); },
                 {input({30}, t), input({16}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].dot(x[1]); }, {input({0}, t), input({0}, t)}, tol);
    check_parity([](const TensorList& x) { return x[0].outer(x[1]); }, {input({5}, t), input({3}, t)}, tol);
    check_parity([](const TensorList& x) { return ger(x[0].slice(0, 0, 10, 2), x[1]); },
                 {input({10}, t), input({4}, t)}, tol);
  }
}

TEST_CASE("cuda matmul: every shape rule, folded and batched, with broadcast batch dims") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4}, {4}},
      {{3, 4}, {4}},
      {{4}, {4, 5}},
      {{3, 4}, {4, 5}},
      {{2, 3, 4}, {4}},
      {{4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{1, 3, 4}, {6, 4, 2}},
      {{2, 2, 3, 4}, {4}},
      {{4}, {3, 2, 4, 5}},
      {{2, 3, 0}, {0, 5}},
      {{0, 3, 4}, {4, 5}}};
  for (ScalarType t : kFloatTypes) {
    INFO("dtype " << t);
    for (const auto& [sa, sb] : shapes) {
      INFO("shapes " << shape_string(sa) << " @ " << shape_string(sb));
      check_parity([](const TensorList& x) { return x[0].matmul(x[1]); }, {input(sa, t), input(sb, t)},
                   product_tol(t));
    }
    // A transposed batch operand (the fold would need a copy, so it goes batched).
    check_parity([](const TensorList& x) { return x[0].transpose(-2, -1).matmul(x[1]); },
                 {input({2, 4, 3}, t), input({4, 5}, t)}, product_tol(t));
  }
}

TEST_CASE("cuda einsum: contractions, batch dims, diagonals and ellipses") {
  struct Case {
    const char* eq;
    std::vector<std::vector<int64_t>> shapes;
  };
  const std::vector<Case> cases = {{"ij,jk->ik", {{3, 4}, {4, 5}}},
                                   {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
                                   {"bhqd,bhkd->bhqk", {{2, 3, 4, 8}, {2, 3, 5, 8}}},
                                   {"i,i->", {{7}, {7}}},
                                   {"i,j->ij", {{3}, {4}}},
                                   {"ii->i", {{4, 4}}},
                                   {"...ij,...jk", {{2, 3, 4}, {4, 5}}},
                                   {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}}};
  for (ScalarType t : {kFloat, kDouble, kHalf}) {
    INFO("dtype " << t);
    for (const Case& c : cases) {
      INFO("equation " << c.eq);
      TensorList in;
      for (const auto& s : c.shapes) in.push_back(input(s, t));
      const std::string eq = c.eq;
      check_parity([eq](const TensorList& x) { return einsum(eq, x); }, in, product_tol(t));
    }
  }
}

TEST_CASE("cuda linalg gradients match the CPU's") {
  for (ScalarType t : {kFloat, kDouble, kHalf}) {
    INFO("dtype " << t);
    const Tol tol = product_tol(t);
    check_grad_parity([](const TensorList& x) { return x[0].mm(x[1].t()); },
                      {input({5, 4}, t), input({3, 4}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return x[0].bmm(x[1]); },
                      {input({2, 5, 4}, t), input({2, 4, 3}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2], 0.5, 2); },
                      {input({3}, t), input({5, 4}, t), input({4, 3}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return x[0].baddbmm(x[1], x[2], 2, -1); },
                      {input({5, 1}, t), input({2, 5, 4}, t), input({2, 4, 3}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return x[0].mv(x[1]); }, {input({5, 4}, t), input({4}, t)},
                      tol);
    check_grad_parity([](const TensorList& x) { return x[0].dot(x[1]); }, {input({6}, t), input({6}, t)},
                      tol);
    check_grad_parity([](const TensorList& x) { return x[0].outer(x[1]); }, {input({3}, t), input({4}, t)},
                      tol);
    // matmul: folded (the 2-D operand needs a gradient) and broadcast-batched.
    check_grad_parity([](const TensorList& x) { return x[0].matmul(x[1]); },
                      {input({2, 3, 4}, t), input({4, 5}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return x[0].matmul(x[1]); },
                      {input({2, 1, 3, 4}, t), input({5, 4, 2}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return x[0].matmul(x[1]); },
                      {input({4}, t), input({2, 4, 5}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return einsum("bij,bjk->bik", x); },
                      {input({2, 3, 4}, t), input({2, 4, 5}, t)}, tol);
  }
}

TEST_CASE("cuda products on a pool stream and on other threads") {
  const TensorList in{input({33, 17}, kFloat), input({17, 9}, kFloat)};
  auto mm2 = [](const TensorList& x) { return x[0].mm(x[1]); };
  {
    // Each stream gets its own cuBLAS workspace; alternate between two.
    cuda::CUDAStreamGuard guard(cuda::getStreamFromPool());
    check_parity(mm2, in, product_tol(kFloat));
  }
  check_parity(mm2, in, product_tol(kFloat));
  {
    cuda::CUDAStreamGuard guard(cuda::getStreamFromPool(true));
    check_parity(mm2, in, product_tol(kFloat));
  }
  // Threads take a handle of their own and give it back when they end (doctest's CHECK is
  // not thread-safe: the threads only compute, the main thread compares).
  Tensor want = in[0].mm(in[1]);
  for (int round = 0; round < 3; ++round) {
    Tensor got;
    std::thread worker([&] { got = in[0].to(cuda_device()).mm(in[1].to(cuda_device())).cpu(); });
    worker.join();
    CHECK(allclose(got, want, 1e-4, 1e-4));
  }
}

TEST_CASE("cuda linear: the bias fused into the product (cuBLASLt epilogue), forward and gradients") {
  for (ScalarType t : {kFloat, kHalf, kBFloat16}) {
    INFO("dtype " << t);
    const Tol tol = product_tol(t);
    auto linear = [](const TensorList& x) { return nn::functional::linear(x[0], x[1], x[2]); };
    // linear's own layout: x [m, k], weight [n, k] (read transposed), bias [n].
    check_parity(linear, {input({8, 16}, t), input({12, 16}, t), input({12}, t)}, tol);
    check_parity(linear, {input({65, 33}, t), input({17, 33}, t), input({17}, t)}, tol);  // odd sizes
    check_parity(linear, {input({300, 256}, t), input({129, 256}, t), input({129}, t)}, tol);
    check_grad_parity(linear, {input({8, 16}, t), input({12, 16}, t), input({12}, t)}, tol);
    check_grad_parity(linear, {input({33, 7}, t), input({5, 7}, t), input({5}, t)}, tol);
    // A weight stored transposed ([k, n] in memory): linear's w.t() is then row-major.
    check_parity([](const TensorList& x) { return nn::functional::linear(x[0], x[1].t(), x[2]); },
                 {input({9, 16}, t), input({16, 12}, t), input({12}, t)}, tol);
    check_grad_parity([](const TensorList& x) { return nn::functional::linear(x[0], x[1].t(), x[2]); },
                      {input({9, 16}, t), input({16, 12}, t), input({12}, t)}, tol);
    // Operands that start off the allocator's alignment (a column slice: 2 or 4 bytes in) and a
    // transposed input; a strided bias (made contiguous); a [1, n] bias; another alpha.
    check_parity([](const TensorList& x) { return nn::functional::linear(x[0].slice(1, 1, 14), x[1], x[2]); },
                 {input({10, 15}, t), input({6, 13}, t), input({6}, t)}, tol);
    check_parity([](const TensorList& x) { return x[2].slice(0, 1, 19, 3).addmm(x[0].t(), x[1].t()); },
                 {input({11, 10}, t), input({6, 11}, t), input({19}, t)}, tol);
    check_parity([](const TensorList& x) { return x[2].addmm(x[0], x[1], 1, -0.5); },
                 {input({10, 11}, t), input({11, 6}, t), input({1, 6}, t)}, tol);
    // Cases the epilogue must leave alone, computed the unfused way: beta != 1, a full self, a
    // column, one input row, one output column.
    check_parity([](const TensorList& x) { return x[2].addmm(x[0], x[1], 0.5, 1); },
                 {input({10, 11}, t), input({11, 6}, t), input({6}, t)}, tol);
    check_parity([](const TensorList& x) { return x[2].addmm(x[0], x[1]); },
                 {input({10, 11}, t), input({11, 6}, t), input({10, 6}, t)}, tol);
    check_parity([](const TensorList& x) { return x[2].addmm(x[0], x[1]); },
                 {input({10, 11}, t), input({11, 6}, t), input({10, 1}, t)}, tol);
    check_parity(linear, {input({1, 16}, t), input({12, 16}, t), input({12}, t)}, tol);
    check_parity(linear, {input({8, 16}, t), input({1, 16}, t), input({1}, t)}, tol);
    // A batched input: linear goes through matmul and a broadcast add.
    check_grad_parity(linear, {input({2, 3, 16}, t), input({12, 16}, t), input({12}, t)}, tol);
  }
  // float64 keeps the cuBLAS path.
  check_grad_parity([](const TensorList& x) { return nn::functional::linear(x[0], x[1], x[2]); },
                    {input({8, 16}, kDouble), input({12, 16}, kDouble), input({12}, kDouble)},
                    product_tol(kDouble));
}

namespace {

/// Sets ember::backends::cuda::matmul::allow_tf32 for a scope, and puts back what it was.
struct AllowTF32 {
  bool before;
  explicit AllowTF32(bool on) : before(backends::cuda::matmul::allow_tf32) { backends::cuda::matmul::allow_tf32 = on; }
  ~AllowTF32() { backends::cuda::matmul::allow_tf32 = before; }
  AllowTF32(const AllowTF32&) = delete;
  AllowTF32& operator=(const AllowTF32&) = delete;
};

/// TF32 keeps 10 of float32's 23 mantissa bits: each product term is off by up to ~2^-10 of
/// its size, and k terms of random sign add up to about sqrt(k) of that (PyTorch's TF32
/// tests use a similar scale).
Tol tf32_tol(int64_t k) { return {2e-3 * std::sqrt(static_cast<double>(k)), 1e-2}; }

/// A float32 product whose exact result TF32 cannot give: every element of a is 1 + 2^-15,
/// which float32 holds and TF32 rounds to 1; b is ones. With k = 64 every partial sum is
/// exact in float32, so out = 64 + 2^-9 exactly in float32 and 64 exactly with TF32.
Tensor tf32_probe(bool bias) {
  const auto opts = TensorOptions().device(cuda_device());
  Tensor a = full({512, 64}, 1.0 + std::ldexp(1.0, -15), opts), b = ones({64, 512}, opts);
  return bias ? zeros({512}, opts).addmm(a, b) : a.mm(b);
}

}  // namespace

TEST_CASE("cuda matmul TF32: off by default (full float32), on when allowed, float32 only") {
  CHECK(!backends::cuda::matmul::allow_tf32);  // PyTorch's default
  const double exact = 64 + std::ldexp(1.0, -9);
  for (bool bias : {false, true}) {
    INFO((bias ? "addmm with a bias row (cuBLASLt)" : "mm (cuBLAS)"));
    {
      AllowTF32 off(false);
      Tensor out = tf32_probe(bias).cpu();
      CHECK(out.min().item<double>() == exact);
      CHECK(out.max().item<double>() == exact);
    }
    {
      // cuBLAS may use TF32 then, and for a product this size on tensor-core GPUs it does.
      AllowTF32 on(true);
      Tensor out = tf32_probe(bias).cpu();
      CHECK(out.max().item<double>() == 64);
    }
  }
  // Against the CPU (which has no TF32) within TF32's error, for mm, bmm, linear and matmul.
  AllowTF32 on(true);
  const Tol tol = tf32_tol(1024);
  check_parity([](const TensorList& x) { return x[0].mm(x[1]); }, {input({200, 1024}, kFloat), input({1024, 96}, kFloat)},
               tol);
  check_parity([](const TensorList& x) { return x[0].bmm(x[1].transpose(1, 2)); },
               {input({3, 40, 1024}, kFloat), input({3, 50, 1024}, kFloat)}, tol);
  check_grad_parity([](const TensorList& x) { return nn::functional::linear(x[0], x[1], x[2]); },
                    {input({64, 1024}, kFloat), input({128, 1024}, kFloat), input({128}, kFloat)}, tol);
  // float16, bfloat16 and float64 ignore the switch: their usual tolerances hold.
  for (ScalarType t : {kHalf, kBFloat16, kDouble})
    check_parity([](const TensorList& x) { return x[0].mm(x[1]); }, {input({17, 33}, t), input({33, 9}, t)},
                 product_tol(t));
}

TEST_CASE("cuda linalg errors: integer dtypes have no CUDA product; shape errors as on the CPU") {
  for (ScalarType t : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64}) {
    const std::string name = scalar_type_name(t);
    INFO("dtype " << name);
    auto not_implemented = [&](const char* kernel) {
      return std::string("\"") + kernel + "\" not implemented for '" + name + "'";
    };
    const TensorList mats{make_input({2, 3}, t), make_input({3, 4}, t)};
    const TensorList batches{make_input({2, 2, 3}, t), make_input({2, 3, 4}, t)};
    CHECK(cuda_error([](const TensorList& x) { return x[0].mm(x[1]); }, mats) ==
          not_implemented("addmm_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].matmul(x[1]); }, mats) ==
          not_implemented("addmm_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].bmm(x[1]); }, batches) ==
          not_implemented("baddbmm_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].matmul(x[1]); }, batches) ==
          not_implemented("baddbmm_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].addmm(x[1], x[2]); },
                     {make_input({2, 4}, t), mats[0], mats[1]}) == not_implemented("addmm_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].baddbmm(x[1], x[2]); },
                     {make_input({2, 2, 4}, t), batches[0], batches[1]}) == not_implemented("baddbmm_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].mv(x[1]); }, {mats[0], make_input({3}, t)}) ==
          not_implemented("addmv_impl_cuda"));
    CHECK(cuda_error([](const TensorList& x) { return x[0].dot(x[1]); },
                     {make_input({3}, t), make_input({3}, t)}) == not_implemented("dot"));
  }
  // Shapes, ranks and dtype mismatches: the CPU's texts.
  check_error_parity([](const TensorList& x) { return x[0].mm(x[1]); },
                     {input({2, 3}, kFloat), input({4, 5}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].mm(x[1]); },
                     {input({2, 3}, kFloat), input({3, 5}, kDouble)});
  check_error_parity([](const TensorList& x) { return x[0].bmm(x[1]); },
                     {input({2, 2, 3}, kFloat), input({2, 4, 4}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].bmm(x[1]); },
                     {input({2, 3}, kFloat), input({2, 3, 4}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].addmm(x[1], x[2]); },
                     {input({4}, kFloat), input({2, 3}, kFloat), input({3, 3}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].baddbmm(x[1], x[2]); },
                     {input({2, 2, 4}, kFloat), input({2, 2, 3}, kFloat), input({2, 3, 4}, kHalf)});
  check_error_parity([](const TensorList& x) { return x[0].mv(x[1]); },
                     {input({2, 3}, kFloat), input({4}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].dot(x[1]); },
                     {input({3}, kFloat), input({4}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].matmul(x[1]); },
                     {input({}, kFloat), input({3}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].matmul(x[1]); },
                     {input({2, 3, 4}, kFloat), input({2, 5, 6}, kFloat)});
  check_error_parity([](const TensorList& x) { return einsum("ij,jk->ik", x); },
                     {input({2, 3}, kFloat), input({4, 5}, kFloat)});
  // Operands on two devices.
  std::string msg;
  try {
    (void)input({2, 3}, kFloat).to(cuda_device()).mm(input({3, 4}, kFloat));
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(msg.find("Expected all tensors to be on the same device") != std::string::npos);
}
