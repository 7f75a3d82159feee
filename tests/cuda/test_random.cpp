// Random numbers on CUDA: each CUDA device has its own Philox generator, seeded by manual_seed,
// and draws element k of a sample from block (offset + k) with the CPU's maps from bits to
// values, so the same seed gives the same numbers as the CPU (normal samples within a few ulp
// of double, hence default tolerances there; everything else exactly).
#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

namespace {

/// Runs make(device) after the same manual_seed on the CPU and on CUDA and compares.
template <class F>
void check_seeded(F make, std::optional<Tol> tol = Tol{0, 0}, uint64_t seed = 2024) {
  manual_seed(seed);
  Tensor on_cpu = make(Device(kCPU));
  manual_seed(seed);
  Tensor on_cuda = make(cuda_device());
  check_same(on_cuda, on_cpu, tol);
}

TensorOptions on(Device d, ScalarType t) { return TensorOptions().dtype(t).device(d); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cuda random: rand and uniform_ give the CPU's numbers for every floating dtype") {
  for (ScalarType t : kFloatTypes) {
    check_seeded([t](Device d) { return rand({7, 13}, on(d, t)); });
    check_seeded([t](Device d) { return empty({300}, on(d, t)).uniform_(-2.5, 4); });
    check_seeded([t](Device d) { return rand({}, on(d, t)); });
    check_seeded([t](Device d) { return rand({0, 3}, on(d, t)); });
    check_seeded([t](Device d) { return rand_like(zeros({5, 2}, on(d, t))); });
  }
  check_seeded([](Device d) { return rand({1 << 20 | 3}, TensorOptions().device(d)); });
  check_seeded([](Device d) { return rand({1 << 20 | 3}, on(d, kHalf)); });
}

TEST_CASE("cuda random: randn and normal_ for every floating dtype") {
  for (ScalarType t : kFloatTypes) {
    check_seeded([t](Device d) { return randn({9, 11}, on(d, t)); }, std::nullopt);
    check_seeded([t](Device d) { return empty({257}, on(d, t)).normal_(3, 0.5); }, std::nullopt);
    check_seeded([t](Device d) { return normal(-1, 2, {4, 4}, on(d, t)); }, std::nullopt);
    check_seeded([t](Device d) { return randn_like(zeros({3}, on(d, t))); }, std::nullopt);
  }
  check_seeded([](Device d) { return randn({1 << 20 | 3}, TensorOptions().device(d)); }, std::nullopt);
  // The numbers are a standard normal sample.
  manual_seed(5);
  Tensor z = randn({1 << 20}, TensorOptions().device(cuda_device())).to(kDouble);
  CHECK(std::fabs(z.mean().item<double>()) < 0.01);
  CHECK(std::fabs(z.std().item<double>() - 1) < 0.01);
}

TEST_CASE("cuda random: randint, random_ and randint_like for every dtype") {
  for (ScalarType t : kNumericTypes) {
    check_seeded([t](Device d) { return randint(0, 100, {6, 9}, on(d, t)); });
    check_seeded([t](Device d) { return randint(3, {33}, on(d, t)); });
    check_seeded([t](Device d) { return empty({40}, on(d, t)).random_(5, 17); });
    check_seeded([t](Device d) { return randint_like(zeros({4, 5}, on(d, t)), 1, 9); });
  }
  check_seeded([](Device d) { return empty({16}, on(d, kBool)).random_(0, 2); });
  check_seeded([](Device d) { return randint(-(int64_t{1} << 40), int64_t{1} << 40, {1000}, on(d, kLong)); });
  check_seeded([](Device d) { return randint(-7, 7, {1 << 20 | 3}, on(d, kInt32)); });
}

TEST_CASE("cuda random: bernoulli with a scalar and with a tensor of probabilities") {
  for (ScalarType t : kAllTypes) {
    check_seeded([t](Device d) { return empty({50}, on(d, t)).bernoulli_(0.3); });
    check_seeded([t](Device d) { return bernoulli(zeros({4, 6}, on(d, t)), 0.7); });
  }
  for (ScalarType t : kFloatTypes) {
    Tensor p = make_input({8, 16}, t, 0, 1);
    check_parity(
        [](const TensorList& x) {
          manual_seed(77);
          return bernoulli(x[0]);
        },
        {p});
    check_parity(
        [](const TensorList& x) {
          manual_seed(78);
          return x[0].t().bernoulli();  // non-contiguous probabilities
        },
        {p});
  }
  Tensor big = make_input({1 << 20 | 3}, kFloat, 0, 1);
  check_parity(
      [](const TensorList& x) {
        manual_seed(79);
        return bernoulli(x[0]);
      },
      {big});
}

TEST_CASE("cuda random: sampling into non-contiguous and recorded tensors") {
  for (ScalarType t : {kFloat, kHalf, kDouble}) {
    check_seeded([t](Device d) {
      Tensor x = zeros({6, 10}, on(d, t));
      x.t().uniform_();  // samples land in a transposed view
      x.slice(1, 0, 10, 3).normal_();
      return x;
    }, std::nullopt);
  }
  check_seeded([](Device d) {
    Tensor a = ones({5}, TensorOptions().device(d).requires_grad(true));
    Tensor y = a * 2;
    y.uniform_();
    CHECK(y.requires_grad());
    y.sum().backward();
    return a.grad();  // zeros: sampling cuts the history
  });
}

TEST_CASE("cuda random: randperm draws the CPU's permutation from the CUDA generator") {
  for (int64_t n : {0, 1, 2, 10, 1000, 100003}) {
    check_seeded([n](Device d) { return randperm(n, TensorOptions().device(d)); });
  }
  check_seeded([](Device d) { return randperm(300, on(d, kInt32)); });
  check_seeded([](Device d) { return randperm(64, on(d, kFloat)); });
  manual_seed(3);
  Tensor p = randperm(5000, TensorOptions().device(cuda_device()));
  CHECK(p.is_cuda());
  std::vector<double> v = host_values(p);
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) CHECK(v[i] == static_cast<double>(i));
}

TEST_CASE("cuda random: each device has its own generator, seeded by manual_seed") {
  Device dev = cuda_device();
  Generator& g = default_cuda_generator(dev.index());
  CHECK(&default_generator(dev) == &g);
  manual_seed(123);
  CHECK(g.current_seed() == 123);
  CHECK(g.offset() == 0);
  Tensor a = rand({10, 10}, TensorOptions().device(dev));
  CHECK(g.offset() == 100);  // advanced by the values drawn
  CHECK(default_cpu_generator().offset() == 0);  // the CPU's stream is untouched
  Tensor b = rand({10, 10}, TensorOptions().device(dev));
  CHECK(host_values(a) != host_values(b));
  manual_seed(123);
  check_same(rand({10, 10}, TensorOptions().device(dev)), a.cpu(), Tol{0, 0});
  // torch::cuda::manual_seed reseeds the CUDA generator only.
  cuda::manual_seed(9);
  CHECK(g.current_seed() == 9);
  CHECK(default_cpu_generator().current_seed() == 123);
  cuda::manual_seed_all(10);
  CHECK(g.current_seed() == 10);
  // State round trip: the same state continues with the same numbers.
  std::vector<uint8_t> state = g.get_state();
  Tensor c = randn({64}, TensorOptions().device(dev));
  g.set_state(state);
  check_same(randn({64}, TensorOptions().device(dev)), c.cpu(), Tol{0, 0});
}

TEST_CASE("cuda random: dropout's mask gives the CPU's result for the same seed") {
  for (ScalarType t : {kFloat, kHalf, kBFloat16, kDouble}) {
    Tensor x = make_input({16, 33}, t);
    check_parity(
        [](const TensorList& in) {
          manual_seed(31);
          return dropout(in[0], 0.4, true);
        },
        {x});
  }
  check_grad_parity(
      [](const TensorList& in) {
        manual_seed(32);
        return dropout(in[0], 0.25, true);
      },
      {make_input({8, 9}, kDouble)});
}

TEST_CASE("cuda random: errors") {
  Device dev = cuda_device();
  CHECK(error_of([&] { empty({3}, on(dev, kLong)).normal_(); }).find("\"normal_kernel_cuda\" not implemented for 'Long'") !=
        std::string::npos);
  CHECK(error_of([&] { rand({3}, on(dev, kInt32)); }).find("\"check_uniform_bounds\" not implemented for 'Int'") !=
        std::string::npos);
  CHECK(error_of([&] { bernoulli(zeros({3}, on(dev, kInt32))); })
            .find("\"bernoulli_tensor_cuda_p_\" not implemented for 'Int'") != std::string::npos);
  // Argument checks are the CPU's.
  check_error_parity([](const TensorList& x) { return x[0].clone().uniform_(2, 1); }, {make_input({3}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].clone().normal_(0, -1); }, {make_input({3}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].clone().bernoulli_(1.5); }, {make_input({3}, kFloat)});
  check_error_parity([](const TensorList& x) { return x[0].clone().random_(4, 4); }, {make_input({3}, kFloat)});
}
