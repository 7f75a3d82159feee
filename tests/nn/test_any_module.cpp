// AnyModule / AnyValue / Sequential with libtorch's forward-argument rules: any forward
// signature, exact argument types, FORWARD_HAS_DEFAULT_ARGS, forward<ReturnType>() and the
// errors libtorch gives. The user modules are written as for libtorch.
#include <string>
#include <tuple>

#include "ember/core/ops/creation.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/rnn.h"
#include "op_check.h"

namespace torch = ember;  // what a libtorch program says once (or gets from <torch/torch.h>)

using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::values;

namespace {

/// x * k + mask (when given): two defaulted parameters, declared for AnyModule.
struct ScaleImpl : torch::nn::Module {
  torch::Tensor forward(const torch::Tensor& x, int64_t k = 2, torch::Tensor mask = {}) {
    torch::Tensor y = x * static_cast<double>(k);
    return mask.defined() ? y + mask : y;
  }

 protected:
  FORWARD_HAS_DEFAULT_ARGS({1, torch::nn::AnyValue(int64_t{2})}, {2, torch::nn::AnyValue(torch::Tensor())})
};

/// x + y, no defaults.
struct AddImpl : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x, torch::Tensor y) { return x + y; }
};

/// A forward with a default that is not declared with FORWARD_HAS_DEFAULT_ARGS.
struct UndeclaredImpl : torch::nn::Module {
  torch::Tensor forward(const torch::Tensor& x, double shift = 1) { return x + shift; }
};

/// Returns the input and its sum, a non-Tensor result.
struct PairImpl : torch::nn::Module {
  std::tuple<torch::Tensor, double> forward(const torch::Tensor& x) { return {x, x.sum().item<double>()}; }
};

}  // namespace

TEST_CASE("AnyModule calls any forward signature, filling declared defaults") {
  torch::nn::AnyModule any(ScaleImpl{});
  torch::Tensor x = from_values({1, -2}, {2});
  check_close(any.forward(x), {2, -4});
  check_close(any.forward<torch::Tensor>(x, int64_t{3}), {3, -6});
  check_close(any.forward(x, int64_t{3}, from_values({10, 10}, {2})), {13, 4});
  torch::nn::AnyValue result = any.any_forward(x);
  CHECK(result.type_info() == typeid(torch::Tensor));
  check_close(result.get<torch::Tensor>(), {2, -4});

  check_error([&] { any.forward(x, 3); }, "Expected argument #1 to be of type long, but received value of type int");
  check_error([&] { any.forward(x, int64_t{1}, torch::Tensor(), 4.0); },
              "'s forward() method expects at least 1 argument(s) and at most 3 argument(s), but received 4.");
  check_error([&] { any.forward(); }, "but received 0.");

  torch::nn::AnyModule undeclared(UndeclaredImpl{});
  check_error([&] { undeclared.forward(x); },
              "'s forward() method expects 2 argument(s), but received 1. If ");
  check_error([&] { undeclared.forward(x); }, "`FORWARD_HAS_DEFAULT_ARGS` macro.");
  check_close(undeclared.forward(x, 0.5), {1.5, -1.5});

  torch::nn::AnyModule pair(PairImpl{});
  auto [same, sum] = pair.forward<std::tuple<torch::Tensor, double>>(x);
  CHECK(sum == -1);
  check_error([&] { pair.forward(x); }, "Attempted to cast AnyValue to ember::Tensor, but its actual type is std::tuple<");
  check_error([] { torch::nn::AnyModule().forward(torch::zeros({1})); }, "Cannot call forward() on an empty AnyModule");
}

TEST_CASE("AnyModule holds libtorch's layers with their default forward arguments") {
  torch::manual_seed(0);
  torch::nn::MultiheadAttention mha(torch::nn::MultiheadAttentionOptions(4, 2));
  torch::Tensor q = torch::randn({3, 1, 4});
  torch::nn::AnyModule any(mha);
  auto [out, weights] = any.forward<std::tuple<torch::Tensor, torch::Tensor>>(q, q, q);
  auto [direct, direct_weights] = mha->forward(q, q, q);
  CHECK(values(out) == values(direct));
  CHECK(values(weights) == values(direct_weights));

  torch::nn::LSTM lstm(torch::nn::LSTMOptions(4, 3));
  torch::nn::AnyModule any_lstm(lstm);
  auto [y, state] = any_lstm.forward<std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>>>(q);
  CHECK(y.sizes().vec() == std::vector<int64_t>{3, 1, 3});
}

TEST_CASE("Sequential passes several inputs to its first module and any type between modules") {
  torch::nn::Sequential seq(AddImpl{}, ScaleImpl{}, torch::nn::ReLU());
  torch::Tensor a = from_values({1, -3}, {2}), b = from_values({0.5, 1}, {2});
  check_close(seq->forward(a, b), {3, 0});  // relu(2 (a + b))
  check_close(seq->forward<torch::Tensor>(a, b), {3, 0});

  torch::nn::Sequential to_pair(torch::nn::Linear(2, 2), PairImpl{});
  torch::Tensor a32 = a.to(torch::kFloat);
  auto [t, s] = to_pair->forward<std::tuple<torch::Tensor, double>>(a32);
  CHECK(s == doctest::Approx(t.sum().item<double>()));
  check_error([&] { to_pair->forward(a32); },
              "The type of the return value is std::tuple<ember::Tensor, double>, but you asked for type ember::Tensor");

  torch::nn::Sequential with_lstm(torch::nn::Linear(2, 4), torch::nn::LSTM(4, 3));
  auto [y, hc] = with_lstm->forward<std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>>>(
      torch::zeros({5, 1, 2}));
  CHECK(std::get<0>(hc).sizes().vec() == std::vector<int64_t>{1, 1, 3});
}

TEST_CASE("AnyValue holds any copyable value") {
  torch::nn::AnyValue v(int64_t{7});
  CHECK(v.get<int64_t>() == 7);
  CHECK(v.try_get<double>() == nullptr);
  CHECK(v.type_info() == typeid(int64_t));
  torch::nn::AnyValue copy = v;
  CHECK(*copy.try_get<int64_t>() == 7);
  check_error([&] { v.get<std::string>(); }, "Attempted to cast AnyValue to std::__cxx11::basic_string");
}
