// CUDA parity of the nn ops with kernels of their own (core/ops/embedding.cpp, pooling.cpp,
// separable_map.cpp, padding.cpp, upsample.cpp): embedding (padding_idx, scale_grad_by_freq,
// int32 indices, renorm, out-of-range indices), one_hot, max_pool1d/2d (stride, padding,
// dilation, ceil_mode, overlapping windows, ties and NaN, indices), avg_pool1d/2d
// (count_include_pad, divisor_override), adaptive average and max pooling, interpolate
// (nearest, linear, bilinear, align_corners both ways, scale factors) and pad in all four
// modes — values and gradients in float32 and float64, float16 where the CPU computes it,
// and the integer dtypes of the gathers.
#include "cuda/parity.h"

#include "ember/nn/functional/upsampling.h"

using namespace ember;
using namespace ember::test;
namespace F = ember::nn::functional;

namespace {

const std::vector<ScalarType> kNnTypes = {kFloat, kDouble, kHalf};

/// A half gradient sums a few rounded terms per element: allow an ulp or two.
Tol nn_tol(ScalarType t) {
  if (t == kHalf) return {1e-3, 2e-3};
  return default_tol(t);
}

template <class Tuple>
TensorList both(const Tuple& t) {
  return {std::get<0>(t), std::get<1>(t)};
}

}  // namespace

// ---- embedding, one_hot ----------------------------------------------------------------------

TEST_CASE("cuda embedding: rows, padding_idx, scale_grad_by_freq, int32 indices, gradients") {
  for (ScalarType t : kNnTypes) {
    INFO("dtype " << t);
    Tensor w = make_input({10, 4}, t);
    Tensor idx = tensor(std::vector<int64_t>{2, 5, 5, 0, 9, 2, 2, 7, 1, 5, 3, 3}).reshape({3, 4});
    for (int64_t pad : {-1, 2})
      for (bool freq : {false, true}) {
        INFO("padding_idx " << pad << ", scale_grad_by_freq " << freq);
        check_grad_parity([&](const TensorList& a) { return embedding(a[0], a[1], pad, freq); }, {w, idx},
                          nn_tol(t));
      }
    check_parity([](const TensorList& a) { return embedding(a[0], a[1]); }, {w, idx.to(kInt)});
  }
  // Any dtype moves (the gather copies bits), and an empty index gives an empty result.
  check_parity([](const TensorList& a) { return embedding(a[0], a[1]); },
               {make_input({6, 3}, kLong, -50, 50), make_input({2, 5}, kLong, 0, 6)});
  check_parity([](const TensorList& a) { return embedding(a[0], a[1]); },
               {make_input({6, 3}, kFloat), zeros({0}, kLong)});
  check_error_parity([](const TensorList& a) { return embedding(a[0], a[1]); },
                     {make_input({6, 3}, kFloat), tensor(std::vector<int64_t>{1, 6})});
  check_error_parity([](const TensorList& a) { return embedding(a[0], a[1]); },
                     {make_input({6, 3}, kFloat), tensor(std::vector<int64_t>{-1, 2})});
}

TEST_CASE("cuda embedding_renorm_: rows above max_norm are rescaled once each") {
  for (double p : {2.0, 1.0}) {
    check_parity(
        [p](const TensorList& a) {
          Tensor w = a[0].clone();
          embedding_renorm_(w, a[1], 1.5, p);
          return w;
        },
        {make_input({8, 5}, kFloat), tensor(std::vector<int64_t>{1, 3, 3, 6, 0})});
  }
}

TEST_CASE("cuda one_hot: inferred and given class counts, empty input, errors") {
  Tensor x = make_input({3, 4}, kLong, 0, 5);
  check_parity([](const TensorList& a) { return one_hot(a[0]); }, {x});
  check_parity([](const TensorList& a) { return one_hot(a[0], 7); }, {x});
  check_parity([](const TensorList& a) { return one_hot(a[0], 3); }, {zeros({0}, kLong)});
  check_error_parity([](const TensorList& a) { return one_hot(a[0], 4); },
                     {tensor(std::vector<int64_t>{1, 4})});
  check_error_parity([](const TensorList& a) { return one_hot(a[0]); },
                     {tensor(std::vector<int64_t>{1, -1})});
}

// ---- max pooling -------------------------------------------------------------------------------

TEST_CASE("cuda max_pool2d: kernel, stride, padding, dilation, ceil_mode; values, indices, gradients") {
  struct Case {
    std::vector<int64_t> k, s, p, d;
    bool ceil;
  };
  const std::vector<Case> cases = {
      {{2}, {}, {0}, {1}, false},               // the CNN's 2x2
      {{3}, {2}, {1}, {1}, false},              // overlapping windows
      {{3, 2}, {1, 2}, {1, 0}, {1, 1}, true},   // stride 1: every input in up to 3 windows
      {{2, 3}, {2, 1}, {1, 1}, {2, 2}, true},   // dilation
      {{1, 2}, {1, 1}, {0, 2}, {1, 3}, false},  // an empty window (the middle one along W)
  };
  for (const Case& c : cases) {
    INFO("kernel " << IntArrayRef(c.k) << ", stride " << IntArrayRef(c.s) << ", padding " << IntArrayRef(c.p)
                   << ", dilation " << IntArrayRef(c.d) << ", ceil_mode " << c.ceil);
    auto pool = [&](const TensorList& a) {
      return both(max_pool2d_with_indices(a[0], c.k, c.s, c.p, c.d, c.ceil));
    };
    const bool small_w = c.p[c.p.size() - 1] == 2;
    Tensor x = make_input({2, 3, 9, small_w ? 2 : 8}, kFloat);
    for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16, kInt32, kUInt8}) {
      INFO("dtype " << t);
      check_parity(pool, {x.to(t)});
    }
    for (ScalarType t : kNnTypes) {
      INFO("dtype " << t);
      check_grad_parity([&](const TensorList& a) { return max_pool2d(a[0], c.k, c.s, c.p, c.d, c.ceil); },
                        {x.to(t)}, nn_tol(t));
    }
  }
}

TEST_CASE("cuda max_pool: ties, NaN, unbatched input, max_pool1d, bool refused") {
  // Integer-valued floats: many ties (the first maximum wins on both).
  Tensor ties = make_input({2, 7, 7}, kLong, 0, 3).to(kFloat);
  check_parity([](const TensorList& a) { return both(max_pool2d_with_indices(a[0], {3}, {1}, {1})); },
               {ties});
  check_grad_parity([](const TensorList& a) { return max_pool2d(a[0], {3}, {1}, {1}); }, {ties});
  Tensor nan = make_input({1, 2, 6, 6}, kFloat);
  nan.index_put_({0, 1, 2, 3}, std::nan(""));
  check_parity([](const TensorList& a) { return both(max_pool2d_with_indices(a[0], {2}, {2})); }, {nan});
  for (bool ceil : {false, true}) {
    check_parity(
        [ceil](const TensorList& a) { return both(max_pool1d_with_indices(a[0], {3}, {2}, {1}, {2}, ceil)); },
        {make_input({2, 3, 11}, kDouble)});
    check_grad_parity([ceil](const TensorList& a) { return max_pool1d(a[0], {3}, {2}, {1}, {2}, ceil); },
                      {make_input({3, 11}, kDouble)});
  }
  check_error_parity([](const TensorList& a) { return max_pool2d(a[0], {2}); },
                     {make_input({1, 4, 4}, kBool)});
}

TEST_CASE("cuda adaptive pooling: average and max, 1-d and 2-d, smaller and larger outputs, gradients") {
  for (ScalarType t : kNnTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({2, 3, 7, 9}, t);
    for (std::vector<int64_t> out : {std::vector<int64_t>{1, 1}, {3, 4}, {7, 9}, {10, 12}}) {
      INFO("output " << IntArrayRef(out));
      check_grad_parity([&](const TensorList& a) { return adaptive_avg_pool2d(a[0], out); }, {x}, nn_tol(t));
      check_parity([&](const TensorList& a) { return both(adaptive_max_pool2d(a[0], out)); }, {x});
      check_grad_parity([&](const TensorList& a) { return std::get<0>(adaptive_max_pool2d(a[0], out)); }, {x},
                        nn_tol(t));
    }
    Tensor x1 = make_input({2, 5, 13}, t);
    check_grad_parity([](const TensorList& a) { return adaptive_avg_pool1d(a[0], {4}); }, {x1}, nn_tol(t));
    check_parity([](const TensorList& a) { return both(adaptive_max_pool1d(a[0], {5})); }, {x1});
  }
}

// ---- average pooling ------------------------------------------------------------------------------

TEST_CASE("cuda avg_pool: count_include_pad, ceil_mode, divisor_override, 1-d, gradients") {
  for (ScalarType t : kNnTypes) {
    INFO("dtype " << t);
    Tensor x = make_input({2, 3, 9, 8}, t);
    for (bool ceil : {false, true})
      for (bool cip : {false, true}) {
        INFO("ceil_mode " << ceil << ", count_include_pad " << cip);
        check_grad_parity([&](const TensorList& a) { return avg_pool2d(a[0], {3}, {2}, {1}, ceil, cip); },
                          {x}, nn_tol(t));
        check_grad_parity(
            [&](const TensorList& a) {
              return avg_pool2d(a[0], {3, 2}, {1, 2}, {1, 0}, ceil, cip);
            },
            {x}, nn_tol(t));
      }
    check_grad_parity([](const TensorList& a) { return avg_pool2d(a[0], {2}, {2}, {0}, false, true, 3); },
                      {x}, nn_tol(t));
    check_grad_parity([](const TensorList& a) { return avg_pool1d(a[0], {3}, {2}, {1}, true, false); },
                      {make_input({2, 4, 10}, t)}, nn_tol(t));
  }
  // Integer dtypes average in integer arithmetic on both devices.
  check_parity([](const TensorList& a) { return avg_pool2d(a[0], {2}); },
               {make_input({1, 2, 6, 6}, kLong, -20, 20)});
}

// ---- interpolate --------------------------------------------------------------------------------

TEST_CASE("cuda interpolate: nearest, linear, bilinear, align_corners both ways, gradients") {
  for (ScalarType t : kNnTypes) {
    INFO("dtype " << t);
    Tensor x2 = make_input({2, 3, 5, 6}, t), x1 = make_input({2, 3, 7}, t);
    for (std::vector<int64_t> size : {std::vector<int64_t>{10, 12}, {3, 4}, {5, 9}, {1, 1}}) {
      INFO("size " << IntArrayRef(size));
      check_grad_parity([&](const TensorList& a) { return upsample_nearest2d(a[0], size); }, {x2}, nn_tol(t));
      for (bool ac : {false, true}) {
        INFO("align_corners " << ac);
        check_grad_parity([&](const TensorList& a) { return upsample_bilinear2d(a[0], size, ac); }, {x2},
                          nn_tol(t));
        check_grad_parity([&](const TensorList& a) { return upsample_linear1d(a[0], {size[1]}, ac); }, {x1},
                          nn_tol(t));
      }
    }
    check_grad_parity([](const TensorList& a) { return upsample_nearest1d(a[0], {16}); }, {x1}, nn_tol(t));
    check_grad_parity(
        [](const TensorList& a) {
          return F::interpolate(a[0], F::InterpolateFuncOptions()
                                          .scale_factor(std::vector<double>{1.5, 2.5})
                                          .mode(kBilinear)
                                          .align_corners(false));
        },
        {x2}, nn_tol(t));
  }
  // Nearest is a gather: integer and bool tensors too.
  for (ScalarType t : {kLong, kUInt8, kBool})
    check_parity(
        [](const TensorList& a) {
          return upsample_nearest2d(a[0], {7, 3});
        },
        {make_input({1, 2, 4, 5}, t)});
  check_error_parity(
      [](const TensorList& a) {
        return upsample_bilinear2d(a[0], {4, 4}, false);
      },
      {make_input({1, 1, 2, 2}, kLong)});
}

// ---- pad ------------------------------------------------------------------------------------

TEST_CASE("cuda pad: constant (negative pads, value), reflect, replicate, circular; 1-d and 2-d, gradients") {
  for (ScalarType t : kNnTypes) {
    INFO("dtype " << t);
    Tensor x2 = make_input({2, 3, 5, 6}, t), x1 = make_input({2, 3, 7}, t);
    for (std::string_view mode : {"reflect", "replicate", "circular"}) {
      INFO("mode " << mode);
      check_grad_parity([&](const TensorList& a) { return pad(a[0], {2, 1, 3, 4}, mode); }, {x2}, nn_tol(t));
      check_grad_parity([&](const TensorList& a) { return pad(a[0], {3, 2}, mode); }, {x1}, nn_tol(t));
      // Unbatched input (ember's circular padding takes batched input only, as its CPU op).
      if (mode != "circular")
        check_grad_parity(
            [&](const TensorList& a) {
              return pad(a[0], {4, 0}, mode);
            },
            {x1.select(0, 1)}, nn_tol(t));
    }
    check_grad_parity(
        [](const TensorList& a) {
          return pad(a[0], {2, 1, 3, 4}, "constant", 1.5);
        },
        {x2}, nn_tol(t));
    check_grad_parity([](const TensorList& a) { return pad(a[0], {-1, 2, 0, -2, 1, 1}); }, {x2}, nn_tol(t));
    check_grad_parity([](const TensorList& a) { return constant_pad_nd(a[0], {-2, -3}); }, {x1}, nn_tol(t));
  }
  // Non-contiguous input, integer and bool dtypes (constant pads and gathers move values).
  check_grad_parity(
      [](const TensorList& a) {
        return pad(a[0].transpose(2, 3), {1, 2, 2, 1}, "reflect");
      },
      {make_input({2, 2, 5, 4}, kFloat)});
  for (ScalarType t : {kLong, kUInt8, kBool}) {
    Tensor x = make_input({2, 4, 5}, t);
    check_parity([](const TensorList& a) { return pad(a[0], {1, 2, 2, 1}, "replicate"); }, {x});
    check_parity([](const TensorList& a) { return pad(a[0], {1, 2}, "circular"); }, {x});
    check_parity([](const TensorList& a) { return constant_pad_nd(a[0], {1, 2, 0, 1}, 1); }, {x});
  }
}
