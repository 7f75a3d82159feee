// Autocast (core/autocast.h): the dtype table of CPU autocast bfloat16 for every op family
// ember has, checked line by line against PyTorch 2.9.1's (tests/core/fixtures/
// make_autocast_table.py prints it; the output is pasted below), the state functions and
// their defaults, nested and disabling guards, the guard restoring state when unwinding, the
// weight-cast cache, gradients reaching float32 leaves in float32, float64 left alone, and
// composites (linear, matmul, conv1d) casting once.
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ember/ember.h"
#include "op_check.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

/// make_autocast_table.py's output under torch.autocast("cpu", dtype=torch.bfloat16), for
/// float32, bfloat16, mixed bfloat16/float32 and float64 inputs ("error" where PyTorch raises;
/// prelu and the interpolation row are left out: ember has no prelu, and upsampling is on no
/// CPU list).
constexpr const char* kCpuBf16Table = R"(
mm: f32,f32 -> bf16
bmm: f32,f32 -> bf16
addmm: f32,f32,f32 -> bf16
baddbmm: f32,f32,f32 -> bf16
matmul: f32,f32 -> bf16
linear: f32,f32,f32 -> bf16
conv1d: f32,f32 -> bf16
conv2d: f32,f32 -> bf16
conv_transpose2d: f32,f32 -> bf16
mv: f32,f32 -> f32
dot: f32,f32 -> f32
softmax: f32 -> f32
log_softmax: f32 -> f32
layer_norm: f32,f32,f32 -> f32
group_norm: f32,f32,f32 -> f32
batch_norm: f32,f32,f32 -> f32
exp: f32 -> f32
log: f32 -> f32
log1p: f32 -> f32
rsqrt: f32 -> f32
tanh: f32 -> f32
relu: f32 -> f32
pow: f32 -> f32
sum: f32 -> f32
prod: f32 -> f32
mean: f32 -> f32
cumsum: f32 -> f32
norm: f32 -> f32
logsumexp: f32 -> f32
add: f32,f32 -> f32
mse_loss: f32,f32 -> f32
l1_loss: f32,f32 -> f32
smooth_l1_loss: f32,f32 -> f32
huber_loss: f32,f32 -> f32
nll_loss: f32,i64 -> f32
cross_entropy: f32,i64 -> f32
binary_cross_entropy: f32,f32 -> f32
binary_cross_entropy_with_logits: f32,f32 -> f32
kl_div: f32,f32 -> f32
cat: f32,f32 -> f32
stack: f32,f32 -> f32
where: f32,f32 -> f32
addcmul: f32,f32,f32 -> f32
atan2: f32,f32 -> f32
index_put: f32,f32 -> f32
scatter_add: f32,f32 -> f32
mm: bf16,bf16 -> bf16
bmm: bf16,bf16 -> bf16
addmm: bf16,bf16,bf16 -> bf16
baddbmm: bf16,bf16,bf16 -> bf16
matmul: bf16,bf16 -> bf16
linear: bf16,bf16,bf16 -> bf16
conv1d: bf16,bf16 -> bf16
conv2d: bf16,bf16 -> bf16
conv_transpose2d: bf16,bf16 -> bf16
mv: bf16,bf16 -> bf16
dot: bf16,bf16 -> bf16
softmax: bf16 -> bf16
log_softmax: bf16 -> bf16
layer_norm: bf16,bf16,bf16 -> bf16
group_norm: bf16,bf16,bf16 -> bf16
batch_norm: bf16,bf16,bf16 -> bf16
exp: bf16 -> bf16
log: bf16 -> bf16
log1p: bf16 -> bf16
rsqrt: bf16 -> bf16
tanh: bf16 -> bf16
relu: bf16 -> bf16
pow: bf16 -> bf16
sum: bf16 -> bf16
prod: bf16 -> f32
mean: bf16 -> bf16
cumsum: bf16 -> bf16
norm: bf16 -> bf16
logsumexp: bf16 -> bf16
add: bf16,bf16 -> bf16
mse_loss: bf16,bf16 -> f32
l1_loss: bf16,bf16 -> f32
smooth_l1_loss: bf16,bf16 -> f32
huber_loss: bf16,bf16 -> f32
nll_loss: bf16,i64 -> f32
cross_entropy: bf16,i64 -> f32
binary_cross_entropy: bf16,bf16 -> f32
binary_cross_entropy_with_logits: bf16,bf16 -> f32
kl_div: bf16,bf16 -> f32
cat: bf16,bf16 -> bf16
stack: bf16,bf16 -> bf16
where: bf16,bf16 -> bf16
addcmul: bf16,bf16,bf16 -> bf16
atan2: bf16,bf16 -> bf16
index_put: bf16,bf16 -> bf16
scatter_add: bf16,bf16 -> bf16
mm: bf16,f32 -> bf16
bmm: bf16,f32 -> bf16
addmm: f32,bf16,f32 -> bf16
baddbmm: f32,bf16,f32 -> bf16
matmul: bf16,f32 -> bf16
linear: bf16,f32,f32 -> bf16
conv1d: bf16,f32 -> bf16
conv2d: bf16,f32 -> bf16
conv_transpose2d: bf16,f32 -> bf16
mv: bf16,f32 -> error
dot: bf16,f32 -> error
layer_norm: bf16,f32,f32 -> bf16
group_norm: bf16,f32,f32 -> bf16
batch_norm: bf16,f32,f32 -> bf16
add: bf16,f32 -> f32
mse_loss: bf16,f32 -> f32
l1_loss: bf16,f32 -> f32
smooth_l1_loss: bf16,f32 -> f32
huber_loss: bf16,f32 -> f32
binary_cross_entropy: bf16,f32 -> f32
binary_cross_entropy_with_logits: bf16,f32 -> f32
kl_div: bf16,f32 -> f32
cat: bf16,f32 -> f32
stack: bf16,f32 -> f32
where: bf16,f32 -> f32
addcmul: bf16,f32,f32 -> f32
atan2: bf16,f32 -> f32
index_put: bf16,f32 -> error
scatter_add: bf16,f32 -> error
mm: f64,f64 -> f64
bmm: f64,f64 -> f64
addmm: f64,f64,f64 -> f64
baddbmm: f64,f64,f64 -> f64
matmul: f64,f64 -> f64
linear: f64,f64,f64 -> f64
conv1d: f64,f64 -> f64
conv2d: f64,f64 -> f64
conv_transpose2d: f64,f64 -> f64
mv: f64,f64 -> f64
dot: f64,f64 -> f64
softmax: f64 -> f64
log_softmax: f64 -> f64
layer_norm: f64,f64,f64 -> f64
group_norm: f64,f64,f64 -> f64
batch_norm: f64,f64,f64 -> f64
exp: f64 -> f64
log: f64 -> f64
pow: f64 -> f64
sum: f64 -> f64
prod: f64 -> f64
cumsum: f64 -> f64
norm: f64 -> f64
mse_loss: f64,f64 -> f64
nll_loss: f64,i64 -> f64
cross_entropy: f64,i64 -> f64
binary_cross_entropy: f64,f64 -> f64
kl_div: f64,f64 -> f64
cat: f64,f64 -> f64
addcmul: f64,f64,f64 -> f64
index_put: f64,f64 -> f64
)";

ScalarType dtype_of(const std::string& name) {
  static const std::map<std::string, ScalarType> names = {
      {"f32", kFloat}, {"bf16", kBFloat16}, {"f16", kHalf}, {"f64", kDouble}, {"i64", kLong}};
  auto it = names.find(name);
  if (it == names.end()) throw std::runtime_error("unknown dtype " + name);
  return it->second;
}

std::string name_of(ScalarType t) {
  for (const char* n : {"f32", "bf16", "f16", "f64", "i64"})
    if (dtype_of(n) == t) return n;
  return scalar_type_name(t);
}

/// Values in [0.5, 1.5) (positive for log, rsqrt, kl_div's target), of the given dtype.
Tensor positive(IntArrayRef shape, ScalarType t) { return (rand(shape) + 0.5).to(t); }

using Inputs = std::vector<ScalarType>;

/// Runs the table's op `name` on inputs of the given dtypes (shapes as the fixture script's).
Tensor run_case(const std::string& name, const Inputs& d) {
  auto in = [&](size_t i, IntArrayRef shape) { return positive(shape, d.at(i)); };
  const Tensor idx = tensor(std::vector<int64_t>{0, 1, 1});
  if (name == "mm") return mm(in(0, {2, 3}), in(1, {3, 4}));
  if (name == "bmm") return bmm(in(0, {2, 2, 3}), in(1, {2, 3, 4}));
  if (name == "addmm") return addmm(in(0, {4}), in(1, {2, 3}), in(2, {3, 4}));
  if (name == "baddbmm") return baddbmm(in(0, {4}), in(1, {2, 2, 3}), in(2, {2, 3, 4}));
  if (name == "matmul") return matmul(in(0, {2, 2, 3}), in(1, {3, 4}));
  if (name == "linear") return F::linear(in(0, {2, 3}), in(1, {4, 3}), in(2, {4}));
  if (name == "conv1d") return conv1d(in(0, {1, 2, 5}), in(1, {3, 2, 2}));
  if (name == "conv2d") return conv2d(in(0, {1, 2, 5, 5}), in(1, {3, 2, 2, 2}));
  if (name == "conv_transpose2d") return conv_transpose2d(in(0, {1, 2, 4, 4}), in(1, {2, 3, 2, 2}));
  if (name == "mv") return mv(in(0, {2, 3}), in(1, {3}));
  if (name == "dot") return dot(in(0, {3}), in(1, {3}));
  if (name == "softmax") return softmax(in(0, {2, 3}), 1);
  if (name == "log_softmax") return log_softmax(in(0, {2, 3}), 1);
  if (name == "layer_norm") return layer_norm(in(0, {2, 3}), {3}, in(1, {3}), in(2, {3}));
  if (name == "group_norm") return group_norm(in(0, {2, 4, 3}), 2, in(1, {4}), in(2, {4}));
  if (name == "batch_norm")
    return batch_norm(in(0, {2, 3}), in(1, {3}), in(2, {3}), std::nullopt, std::nullopt, true, 0.1, 1e-5, false);
  if (name == "exp") return exp(in(0, {3}));
  if (name == "log") return log(in(0, {3}));
  if (name == "log1p") return log1p(in(0, {3}));
  if (name == "rsqrt") return rsqrt(in(0, {3}));
  if (name == "tanh") return tanh(in(0, {3}));
  if (name == "relu") return relu(in(0, {3}));
  if (name == "pow") return pow(in(0, {3}), 2.0);
  if (name == "sum") return sum(in(0, {3}));
  if (name == "prod") return prod(in(0, {3}));
  if (name == "mean") return mean(in(0, {3}));
  if (name == "cumsum") return cumsum(in(0, {3}), 0);
  if (name == "norm") return norm(in(0, {3}));
  if (name == "logsumexp") return logsumexp(in(0, {3}), {0});
  if (name == "add") return in(0, {3}) + in(1, {3});
  if (name == "mse_loss") return mse_loss(in(0, {3}), in(1, {3}));
  if (name == "l1_loss") return l1_loss(in(0, {3}), in(1, {3}));
  if (name == "smooth_l1_loss") return smooth_l1_loss(in(0, {3}), in(1, {3}));
  if (name == "huber_loss") return huber_loss(in(0, {3}), in(1, {3}));
  if (name == "nll_loss") return nll_loss(in(0, {3, 2}), tensor(std::vector<int64_t>{0, 1, 1}));
  if (name == "cross_entropy") return cross_entropy_loss(in(0, {3, 2}), tensor(std::vector<int64_t>{0, 1, 1}));
  if (name == "binary_cross_entropy") return binary_cross_entropy(in(0, {3}) * 0.5, in(1, {3}) * 0.5);
  if (name == "binary_cross_entropy_with_logits")
    return binary_cross_entropy_with_logits(in(0, {3}), in(1, {3}) * 0.5);
  if (name == "kl_div") return kl_div(in(0, {3}), in(1, {3}));
  if (name == "cat") return cat({in(0, {3}), in(1, {3})});
  if (name == "stack") return stack({in(0, {3}), in(1, {3})});
  if (name == "where") {
    Tensor a = in(0, {3});
    return where(a.gt(1), a, in(1, {3}));
  }
  if (name == "addcmul") return addcmul(in(0, {3}), in(1, {3}), in(2, {3}));
  if (name == "atan2") return atan2(in(0, {3}), in(1, {3}));
  if (name == "index_put") return index_put(in(0, {3}), {idx.slice(0, 0, 2)}, in(1, {2}));
  if (name == "scatter_add") return scatter_add(in(0, {3}), 0, idx, in(1, {3}));
  throw std::runtime_error("no case for " + name);
}

struct Row {
  std::string name;
  Inputs inputs;
  std::string expected;  // a dtype name, or "error"
};

std::vector<Row> parse_table(const char* text) {
  std::vector<Row> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    Row r;
    size_t colon = line.find(':'), arrow = line.find(" -> ");
    r.name = line.substr(0, colon);
    std::istringstream ins(line.substr(colon + 2, arrow - colon - 2));
    for (std::string t; std::getline(ins, t, ',');) r.inputs.push_back(dtype_of(t));
    r.expected = line.substr(arrow + 4);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

TEST_CASE("autocast: off by default, CPU bfloat16 and CUDA float16 default dtypes") {
  CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
  CHECK_FALSE(autocast::is_autocast_enabled(kCUDA));
  CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
  CHECK(autocast::get_autocast_dtype(kCUDA) == kHalf);
  CHECK(autocast::is_autocast_cache_enabled());
  CHECK_FALSE(autocast::is_active());
  CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kFloat);  // nothing cast outside a region
}

TEST_CASE("autocast: CPU bfloat16 dtype table equals PyTorch's") {
  AutocastGuard guard(kCPU, kBFloat16);
  for (const Row& r : parse_table(kCpuBf16Table)) {
    std::string ins;
    for (ScalarType t : r.inputs) ins += name_of(t) + ",";
    CAPTURE(r.name);
    CAPTURE(ins);
    if (r.expected == "error") {
      CHECK_THROWS_AS(run_case(r.name, r.inputs), Error);
      continue;
    }
    Tensor out = run_case(r.name, r.inputs);
    CHECK(name_of(out.dtype()) == r.expected);
  }
}

TEST_CASE("autocast: the libtorch state functions") {
  autocast::set_autocast_enabled(kCPU, true);
  CHECK(autocast::is_autocast_enabled(kCPU));
  CHECK_FALSE(autocast::is_autocast_enabled(kCUDA));
  CHECK(autocast::is_active());
  autocast::set_autocast_dtype(kCPU, kHalf);
  CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kHalf);
  autocast::set_autocast_dtype(kCPU, kBFloat16);
  autocast::set_autocast_enabled(kCPU, false);
  CHECK_FALSE(autocast::is_active());
  CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kFloat);
  // CUDA's state is its own: enabling it does not touch CPU tensors.
  autocast::set_autocast_enabled(kCUDA, true);
  CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kFloat);
  autocast::set_autocast_enabled(kCUDA, false);
  test::check_error([] { autocast::set_autocast_dtype(kCPU, kFloat); }, "target dtype is not supported");
  CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
}

TEST_CASE("autocast: nested guards, disabling inside a region, restoring on exit") {
  {
    AutocastGuard outer(kCPU, kBFloat16);
    CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kBFloat16);
    {
      AutocastGuard inner(kCPU, kHalf);
      CHECK(autocast::get_autocast_dtype(kCPU) == kHalf);
      CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kHalf);
      {
        AutocastGuard off(kCPU, kBFloat16, /*enabled=*/false);
        CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
        CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kFloat);
      }
      CHECK(autocast::is_autocast_enabled(kCPU));
      CHECK(autocast::get_autocast_dtype(kCPU) == kHalf);
    }
    CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
    CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kBFloat16);
  }
  CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
  CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
}

TEST_CASE("autocast: a guard restores the state when an exception unwinds through it") {
  try {
    AutocastGuard guard(kCPU, kHalf);
    Tensor w = ones({2, 2}).requires_grad_();
    (void)mm(ones({2, 2}), w);
    CHECK(autocast::cached_cast_count() == 1);
    (void)mm(ones({2, 3}), ones({2, 3}));  // shapes cannot be multiplied: throws
    FAIL("mm did not throw");
  } catch (const Error&) {
  }
  CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
  CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
  CHECK(autocast::cached_cast_count() == 0);
  CHECK_FALSE(autocast::is_active());
  // A guard whose dtype is refused changes nothing.
  CHECK_THROWS_AS(AutocastGuard(kCPU, kDouble), Error);
  CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
  CHECK(mm(ones({2, 2}), ones({2, 2})).dtype() == kFloat);
}

TEST_CASE("autocast: weight casts are cached for the outermost region, then cleared") {
  Tensor w = rand({3, 3}).requires_grad_();  // a float32 leaf that requires grad: a weight
  Tensor x = rand({2, 3});                  // an activation: never cached
  {
    AutocastGuard outer(kCPU);
    Tensor a = F::linear(x, w);
    CHECK(autocast::cached_cast_count() == 1);
    {
      AutocastGuard inner(kCPU);
      Tensor b = F::linear(x, w);
      CHECK(autocast::cached_cast_count() == 1);  // the same cast reused
    }
    CHECK(autocast::cached_cast_count() == 1);  // an inner region's exit keeps the cache
    (void)x.mm(w.t());  // w.t() is not a leaf: cast, not cached
    CHECK(autocast::cached_cast_count() == 1);
    (void)mm(x, w);
    CHECK(autocast::cached_cast_count() == 1);
  }
  CHECK(autocast::cached_cast_count() == 0);
  {
    // cache_enabled=false: nothing kept.
    AutocastGuard guard(kCPU, std::nullopt, true, /*cache_enabled=*/false);
    (void)mm(x, w);
    CHECK(autocast::cached_cast_count() == 0);
  }
  CHECK(autocast::is_autocast_cache_enabled());
  {
    // Not cached: a leaf that does not require grad, a non-leaf, a bfloat16 source.
    AutocastGuard guard(kCPU);
    (void)mm(x, rand({3, 3}));
    (void)mm(x, w * 2);
    (void)mm(x, rand({3, 3}).to(kHalf).requires_grad_());
    CHECK(autocast::cached_cast_count() == 0);
    (void)mm(x, w);
    CHECK(autocast::cached_cast_count() == 1);
    autocast::clear_autocast_cache();
    CHECK(autocast::cached_cast_count() == 0);
  }
}

TEST_CASE("autocast: the cached cast is the same tensor for a weight used twice in a region") {
  Tensor w = rand({3, 3}).requires_grad_();
  AutocastGuard guard(kCPU);
  Tensor a = mm(rand({2, 3}), w), b = mm(rand({2, 3}), w);
  // Each mm's second input edge leads to the ToCopy node of the one cached cast.
  auto edge = [](const Tensor& t) { return t.grad_fn()->next_edges()[1].function.get(); };
  REQUIRE(edge(a) != nullptr);
  CHECK(edge(a) == edge(b));
  CHECK(edge(a)->name() == "ToCopyBackward0");
}

TEST_CASE("autocast: gradients reach float32 leaves in float32") {
  Tensor x = rand({4, 3}).requires_grad_();
  Tensor w = rand({5, 3}).requires_grad_();
  Tensor b = rand({5}).requires_grad_();
  Tensor loss;
  {
    AutocastGuard guard(kCPU);
    Tensor h = F::linear(x, w, b);
    CHECK(h.dtype() == kBFloat16);
    loss = mse_loss(h, zeros({4, 5}));  // on the float32 list
    CHECK(loss.dtype() == kFloat);
  }
  loss.backward();
  for (const Tensor* t : {&x, &w, &b}) {
    REQUIRE(t->grad().defined());
    CHECK(t->grad().dtype() == kFloat);
  }
  // Against the float32 gradient of the same function, within bfloat16's resolution.
  Tensor x2 = x.detach().requires_grad_(), w2 = w.detach().requires_grad_(), b2 = b.detach().requires_grad_();
  mse_loss(F::linear(x2, w2, b2), zeros({4, 5})).backward();
  test::check_close(w.grad(), w2.grad(), 0.05, 0.05);
  test::check_close(x.grad(), x2.grad(), 0.05, 0.05);
}

TEST_CASE("autocast: float64 inputs are left alone, integers untouched") {
  AutocastGuard guard(kCPU);
  Tensor d = rand({2, 2}).to(kDouble);
  CHECK(mm(d, d).dtype() == kDouble);
  CHECK(F::linear(d, d).dtype() == kDouble);
  CHECK(mse_loss(d, d).dtype() == kDouble);
  CHECK(mm(arange(4).view({2, 2}), arange(4).view({2, 2})).dtype() == kLong);
  CHECK(autocast::cached_cast_count() == 0);
}

TEST_CASE("autocast: compositions cast once, at their entry") {
  AutocastGuard guard(kCPU);
  Tensor w = rand({4, 3}).requires_grad_();
  // linear of a 3-d input goes through matmul and add: the bias is cast with the rest.
  Tensor y = F::linear(rand({2, 5, 3}), w, rand({4}));
  CHECK(y.dtype() == kBFloat16);
  CHECK(autocast::cached_cast_count() == 1);
  // conv1d with padding="same" pads (cat) before the convolution.
  CHECK(conv1d(rand({1, 2, 6}), rand({3, 2, 2}), {}, 1, "same").dtype() == kBFloat16);
  // cross_entropy = log_softmax + nll_loss, float32 as a whole.
  CHECK(cross_entropy_loss(rand({3, 4}).to(kBFloat16), tensor(std::vector<int64_t>{0, 1, 3})).dtype() == kFloat);
  // A bfloat16 activation meeting a float32 weight: PyTorch casts both (no dtype error).
  CHECK(mm(rand({2, 3}).to(kBFloat16), rand({3, 2})).dtype() == kBFloat16);
  CHECK(addmm(rand({2}), rand({2, 3}).to(kBFloat16), rand({3, 2})).dtype() == kBFloat16);
}

TEST_CASE("autocast: the state is per thread") {
  AutocastGuard guard(kCPU);
  bool other_enabled = true;
  ScalarType other_dtype = kFloat;
  std::thread t([&] {
    other_enabled = autocast::is_autocast_enabled(kCPU);
    other_dtype = mm(ones({2, 2}), ones({2, 2})).dtype();
  });
  t.join();
  CHECK_FALSE(other_enabled);
  CHECK(other_dtype == kFloat);
}
