// The fused attention kernels (cuda/attention.cu) called directly through cuda/attention.h,
// against a float64 reference by plain loops (tests/cuda/attention_ref.h; not ember's SDPA op):
// out and logsumexp, grad_q / grad_k / grad_v, for float32, float16 and bfloat16, head sizes
// 8 to 256 (every tile the plan picks, shared memory past 48 KB), lengths 1, 7, 65, 130 and
// L != S, causal, additive masks read through broadcast (stride 0) and transposed strides with
// -inf entries, fully masked rows (out 0, logsumexp -inf, zero gradients, no NaN), empty L or
// S, batch x heads past the 65535 grid fold, a non-default current stream, and bitwise
// repeatable backward. Outputs are pre-filled with NaN, so an element a kernel forgets to
// write fails.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cuda/attention_ref.h"
#include "cuda/parity.h"
#include "ember/cuda/attention.h"
#include "ember/cuda/runtime/stream.h"

using namespace ember;
using namespace ember::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Shape {
  int64_t B, H, L, S, E, Ev;
};

/// Tolerances relative to the largest reference magnitude of the tensor (atol) and to the
/// element (rtol): the kernels accumulate in float and round once; the 16-bit gradients also
/// go through the rounded forward output (D = rowsum(grad_out * out)).
Tol out_tol(ScalarType t) {
  if (t == kHalf) return {2e-3, 4e-3};
  if (t == kBFloat16) return {1.2e-2, 1.6e-2};
  return {5e-5, 2e-4};
}
Tol grad_tol(ScalarType t) {
  if (t == kHalf) return {5e-3, 1e-2};
  if (t == kBFloat16) return {3e-2, 3e-2};
  return {1e-4, 5e-4};
}

/// CHECKs got (any device, any dtype) against want: shape by count, -inf exactly where
/// wanted, no NaN, |got - want| <= atol * max(1, max |want|) + rtol * |want|.
void check_values(const Tensor& got, const std::vector<double>& want, Tol tol, const std::string& what) {
  INFO(what);
  std::vector<double> g = host_values(got);
  REQUIRE(g.size() == want.size());
  double scale = 1;
  for (double w : want)
    if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
  int bad = 0;
  for (size_t n = 0; n < g.size(); ++n) {
    const bool ok = std::isinf(want[n])
                        ? g[n] == want[n]
                        : !std::isnan(g[n]) &&
                              std::fabs(g[n] - want[n]) <= tol.atol * scale + tol.rtol * std::fabs(want[n]);
    if (!ok && bad++ < 5) {
      INFO("element " << n << ": got " << g[n] << ", want " << want[n]);
      CHECK(ok);
    }
  }
  CHECK(bad == 0);
}

TensorOptions on_cuda(ScalarType t) { return TensorOptions().dtype(t).device(cuda_device()); }

/// A problem on the GPU and its float64 twin (built from the dtype-rounded inputs).
struct Case {
  Shape sh;
  ScalarType dtype;
  bool causal = false;
  double scale = 0;            // 0: 1/sqrt(E)
  Tensor q, k, v, mask, dout;  // CUDA; mask an expanded [B, H, L, S] view or undefined
  AttnProblem ref;
};

/// `mask_base`: undefined, or a CPU double tensor broadcastable to [B, H, L, S] (-inf allowed),
/// expanded on the GPU after conversion to the dtype.
Case make_case(Shape sh, ScalarType dtype, bool causal, const Tensor& mask_base = {}, double scale = 0) {
  Case c;
  c.sh = sh, c.dtype = dtype, c.causal = causal;
  c.scale = scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(sh.E));
  Tensor q = make_input({sh.B, sh.H, sh.L, sh.E}, dtype, -2, 2);
  Tensor k = make_input({sh.B, sh.H, sh.S, sh.E}, dtype, -2, 2);
  Tensor v = make_input({sh.B, sh.H, sh.S, sh.Ev}, dtype, -1, 1);
  Tensor go = make_input({sh.B, sh.H, sh.L, sh.Ev}, dtype, -1, 1);
  c.q = q.to(cuda_device()), c.k = k.to(cuda_device()), c.v = v.to(cuda_device()),
  c.dout = go.to(cuda_device());
  AttnProblem& p = c.ref;
  p.bh = sh.B * sh.H, p.L = sh.L, p.S = sh.S, p.E = sh.E, p.Ev = sh.Ev, p.causal = causal, p.scale = c.scale;
  p.q = host_values(q), p.k = host_values(k), p.v = host_values(v), p.dout = host_values(go);
  if (mask_base.defined()) {
    Tensor m = mask_base.to(dtype);
    c.mask = m.to(cuda_device()).expand({sh.B, sh.H, sh.L, sh.S});
    p.mask = host_values(m.expand({sh.B, sh.H, sh.L, sh.S}));
  }
  return c;
}

struct Results {
  Tensor out, lse, dq, dk, dv;
};

/// The kernels on the case: outputs pre-filled with NaN.
Results run(const Case& c) {
  const Shape& s = c.sh;
  Results r;
  r.out = full({s.B, s.H, s.L, s.Ev}, NAN, on_cuda(c.dtype));
  r.lse = full({s.B, s.H, s.L}, NAN, on_cuda(kFloat));
  cuda::sdpa_forward(c.q, c.k, c.v, c.mask, c.causal, c.scale, {}, r.out, r.lse);
  r.dq = full({s.B, s.H, s.L, s.E}, NAN, on_cuda(c.dtype));
  r.dk = full({s.B, s.H, s.S, s.E}, NAN, on_cuda(c.dtype));
  r.dv = full({s.B, s.H, s.S, s.Ev}, NAN, on_cuda(c.dtype));
  cuda::sdpa_backward(c.dout, c.q, c.k, c.v, c.mask, c.causal, c.scale, {}, r.out, r.lse, r.dq, r.dk, r.dv);
  cuda::synchronize();
  return r;
}

void check_case(const Case& c) {
  const Shape& s = c.sh;
  INFO("B " << s.B << ", H " << s.H << ", L " << s.L << ", S " << s.S << ", E " << s.E << ", Ev " << s.Ev
            << ", " << c.dtype << (c.causal ? ", causal" : "") << (c.mask.defined() ? ", mask" : ""));
  Results r = run(c);
  AttnRef want = attn_reference(c.ref);
  check_values(r.out, want.out, out_tol(c.dtype), "out");
  check_values(r.lse, want.lse, {2e-5, 2e-5}, "logsumexp");  // float32 always, from float sums
  check_values(r.dq, want.dq, grad_tol(c.dtype), "grad_q");
  check_values(r.dk, want.dk, grad_tol(c.dtype), "grad_k");
  check_values(r.dv, want.dv, grad_tol(c.dtype), "grad_v");
}

/// Random additive mask values in [-2, 2) of `shape` (CPU double), every `every`-th entry -inf.
Tensor mask_values(IntArrayRef shape, int every, uint64_t seed) {
  Tensor m = make_input(shape, kDouble, -2, 2, seed).contiguous();
  double* p = m.data_ptr<double>();
  for (int64_t n = 0; n < m.numel(); ++n)
    if (every > 0 && (n * 7919) % every == 0) p[n] = -kInf;
  return m;
}

const std::vector<ScalarType> kKernelTypes = {kFloat, kHalf, kBFloat16};

}  // namespace

TEST_CASE("cuda sdpa kernels: which head sizes and dtypes are fused") {
  CHECK(cuda::sdpa_fused_supported(64, 64, static_cast<int>(kFloat)));
  CHECK(cuda::sdpa_fused_supported(256, 256, static_cast<int>(kHalf)));
  CHECK(cuda::sdpa_fused_supported(8, 200, static_cast<int>(kBFloat16)));
  CHECK_FALSE(cuda::sdpa_fused_supported(64, 64, static_cast<int>(kDouble)));
  CHECK_FALSE(cuda::sdpa_fused_supported(257, 64, static_cast<int>(kFloat)));
  CHECK_FALSE(cuda::sdpa_fused_supported(64, 0, static_cast<int>(kFloat)));
}

TEST_CASE("cuda sdpa kernels: float32 forward and backward, lengths and head sizes, causal or not") {
  const std::vector<Shape> shapes = {
      {1, 1, 1, 1, 8, 8},       {2, 3, 7, 7, 64, 64},     {1, 2, 65, 130, 80, 80}, {1, 1, 130, 65, 128, 128},
      {1, 1, 33, 40, 256, 256}, {2, 1, 64, 64, 64, 32},   {1, 1, 1, 130, 64, 64},  {1, 1, 130, 1, 64, 64},
      {1, 2, 129, 129, 8, 256}, {1, 1, 200, 300, 16, 16},
  };
  for (const Shape& s : shapes)
    for (bool causal : {false, true}) check_case(make_case(s, kFloat, causal));
  check_case(make_case({1, 2, 65, 70, 64, 64}, kFloat, false, {}, 0.3));  // a given scale
}

TEST_CASE("cuda sdpa kernels: float16 and bfloat16, accumulated in float") {
  const std::vector<Shape> shapes = {
      {2, 2, 7, 65, 64, 64}, {1, 1, 130, 130, 128, 128}, {1, 1, 65, 33, 256, 80}};
  for (ScalarType t : {kHalf, kBFloat16})
    for (const Shape& s : shapes)
      for (bool causal : {false, true}) check_case(make_case(s, t, causal));
}

TEST_CASE("cuda sdpa kernels: additive masks through their strides, with -inf entries") {
  const int64_t B = 2, H = 3, L = 70, S = 90;
  for (ScalarType t : kKernelTypes)
    for (bool causal : {false, true}) {
      // [L, S] shared by batches and heads (stride 0 on both), every 5th entry -inf.
      check_case(make_case({B, H, L, S, 64, 64}, t, causal, mask_values({L, S}, 5, 11)));
      // Key padding: [B, 1, 1, S], the last 20 keys of batch 1 hidden.
      Tensor pad = zeros({B, 1, 1, S}, TensorOptions().dtype(kDouble));
      pad.select(0, 1).narrow(2, S - 20, 20).fill_(-kInf);
      check_case(make_case({B, H, L, S, 32, 48}, t, causal, pad));
      // A full per-head mask [1, H, L, S] broadcast over the batch.
      check_case(make_case({B, H, L, S, 16, 16}, t, causal, mask_values({1, H, L, S}, 9, 12)));
      // A transposed (non-contiguous) [L, S] view.
      Tensor tr = mask_values({S, L}, 7, 13).t();
      check_case(make_case({B, H, L, S, 64, 64}, t, causal, tr));
    }
}

TEST_CASE("cuda sdpa kernels: rows that see no key give out 0, logsumexp -inf, zero gradients") {
  const int64_t L = 70, S = 80;
  Tensor m = mask_values({L, S}, 0, 14);
  m.select(0, 0).fill_(-kInf);      // the first row (the only row causal lets see key 0 alone)
  m.select(0, 33).fill_(-kInf);     // a middle row
  m.select(0, L - 1).fill_(-kInf);  // the last row, in a partial tile
  m.narrow(0, 40, 10).narrow(1, 0, 64).fill_(-kInf);  // rows whose whole first key tile is masked
  for (ScalarType t : kKernelTypes)
    for (bool causal : {false, true}) {
      Case c = make_case({2, 2, L, S, 64, 64}, t, causal, m);
      check_case(c);
      Results r = run(c);
      std::vector<double> lse = host_values(r.lse), out = host_values(r.out.select(2, 33)),
                          dq = host_values(r.dq.select(2, L - 1));
      CHECK(lse[33] == -kInf);
      for (double x : out) CHECK(x == 0.0);
      for (double x : dq) CHECK(x == 0.0);
    }
  // Every row masked: everything 0 (and grad_k, grad_v too), no NaN.
  Tensor all = full({1, 1, 1, 1}, -kInf, TensorOptions().dtype(kDouble));
  check_case(make_case({1, 2, 20, 30, 16, 16}, kFloat, false, all));
}

TEST_CASE("cuda sdpa kernels: causal with L != S, keys seen by no query") {
  // Fewer queries than keys: keys past L are seen by nobody (grad_k, grad_v 0 there), whole
  // key tiles included; more queries than keys: the rows past S see every key.
  for (ScalarType t : kKernelTypes) {
    check_case(make_case({1, 2, 30, 200, 64, 64}, t, true));
    check_case(make_case({1, 2, 200, 30, 64, 64}, t, true));
  }
}

TEST_CASE("cuda sdpa kernels: empty lengths, batch x heads past the grid fold") {
  // S == 0: out 0, logsumexp -inf, grad_q 0. L == 0: grad_k and grad_v 0.
  check_case(make_case({2, 2, 5, 0, 8, 8}, kFloat, false));
  check_case(make_case({2, 2, 0, 5, 8, 8}, kFloat, false));
  check_case(make_case({2, 2, 0, 5, 8, 8}, kFloat, true));
  // B == 0: nothing to do, no error.
  Case none = make_case({0, 2, 5, 5, 8, 8}, kFloat, false);
  Results r = run(none);
  CHECK(r.out.numel() == 0);
  // 70000 slices: blockIdx.y folds into z.
  check_case(make_case({70000, 1, 2, 3, 8, 8}, kFloat, true));
  check_case(make_case({7, 10000, 1, 1, 8, 8}, kHalf, false));
}

TEST_CASE("cuda sdpa kernels: the current stream, and a bitwise repeatable backward") {
  Case c = make_case({2, 2, 130, 100, 64, 64}, kFloat, true, mask_values({130, 100}, 11, 15));
  Results first = run(c);
  {
    cuda::CUDAStreamGuard guard(cuda::getStreamFromPool());
    Results again = run(c);  // run() synchronises the device
    const std::vector<std::pair<Tensor, Tensor>> pairs = {{first.out, again.out},
                                                          {first.lse, again.lse},
                                                          {first.dq, again.dq},
                                                          {first.dk, again.dk},
                                                          {first.dv, again.dv}};
    for (const auto& [a, b] : pairs) CHECK(host_values(a) == host_values(b));
  }
}
