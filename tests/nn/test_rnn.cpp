// RNN, LSTM, GRU and their cells: outputs, final states and gradients equal to PyTorch's for
// the same weights (fixtures loaded through state-dict keys), float64 gradcheck of every
// kind incl. bidirectional and two layers, batch_first / unbatched / given states, dropout
// between layers in training only, parameter names and shapes, init bounds, reprs and errors.
#include <cmath>
#include <sstream>

#include "nn/fixtures/rnn_fixture.h"
#include "module_check.h"
#include "op_check.h"

using namespace ember;
using ember::test::repr;
using ember::test::keys_of;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {

// ---- PyTorch fixtures ------------------------------------------------------------------

const OrderedDict<std::string, Tensor>& fixture() {
  static const OrderedDict<std::string, Tensor> all =
      deserialize_safetensors(std::vector<uint8_t>(std::begin(kRnnFixture), std::end(kRnnFixture)));
  return all;
}

/// The tensors of one case, "<case>." stripped from their names.
struct Case {
  explicit Case(const std::string& name) {
    const std::string prefix = name + ".";
    for (const auto& item : fixture())
      if (item.key().rfind(prefix, 0) == 0) t.insert(item.key().substr(prefix.size()), item.value());
    REQUIRE(!t.is_empty());
  }
  bool has(const std::string& k) const { return t.find(k) != nullptr; }
  Tensor get(const std::string& k) const { return t[k]; }
  /// A fresh leaf copy (requires grad) of input / h0 / c0, or undefined when absent.
  Tensor leaf(const std::string& k) const { return has(k) ? get(k).clone().requires_grad_(true) : Tensor(); }
  /// The model.* entries as a state dict.
  OrderedDict<std::string, Tensor> state_dict() const {
    OrderedDict<std::string, Tensor> sd;
    for (const auto& item : t)
      if (item.key().rfind("model.", 0) == 0) sd.insert(item.key().substr(6), item.value());
    return sd;
  }
  OrderedDict<std::string, Tensor> t;
};

/// Loads the case's weights (strict: every key must match by name and shape) after checking
/// that the module's own keys come in PyTorch's order.
void load_weights(nn::Module& m, const Case& c) {
  m.to(kDouble);
  CHECK(keys_of(m.state_dict()) == keys_of(c.state_dict()));
  m.load_state_dict(c.state_dict());
}

/// sum(result * w_result) over the results the case has, and CHECKs each against PyTorch's.
Tensor weighted_loss(const Case& c, const std::vector<std::pair<std::string, Tensor>>& results) {
  Tensor loss;
  for (const auto& [name, r] : results) {
    INFO("result " << name);
    CHECK(shape(r) == shape(c.get(name)));
    check_close(r, c.get(name), 1e-12, 1e-10);
    Tensor term = (r * c.get("w_" + name)).sum();
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

/// After backward: the input's, the states' and every parameter's gradient against PyTorch's.
void check_grads(const nn::Module& m, const Case& c, const Tensor& x, const Tensor& h0, const Tensor& c0) {
  check_close(x.grad(), c.get("grad.input"), 1e-12, 1e-10);
  if (h0.defined()) check_close(h0.grad(), c.get("grad.h0"), 1e-12, 1e-10);
  if (c0.defined()) check_close(c0.grad(), c.get("grad.c0"), 1e-12, 1e-10);
  for (const auto& p : m.named_parameters()) {
    INFO("parameter " << p.key());
    REQUIRE(p.value().grad().defined());
    check_close(p.value().grad(), c.get("grad.model." + p.key()), 1e-12, 1e-10);
  }
}

template <class Holder>
void check_single_state_layer(Holder m, const std::string& name) {
  Case c(name);
  load_weights(*m, c);
  Tensor x = c.leaf("input"), h0 = c.leaf("h0");
  auto [output, h_n] = m->forward(x, h0);
  weighted_loss(c, {{"output", output}, {"h_n", h_n}}).backward();
  check_grads(*m, c, x, h0, Tensor());
}

template <class Holder>
void check_simple_cell(Holder m, const std::string& name) {
  Case c(name);
  load_weights(*m, c);
  Tensor x = c.leaf("input"), h0 = c.leaf("h0");
  Tensor h = m->forward(x, h0);
  weighted_loss(c, {{"h_n", h}}).backward();
  check_grads(*m, c, x, h0, Tensor());
}

}  // namespace

TEST_CASE("test_rnn: outputs, states and gradients equal PyTorch's (fixtures)") {
  SUBCASE("RNN tanh, 2 layers, bidirectional, given h0") {
    check_single_state_layer(nn::RNN(nn::RNNOptions(2, 3).num_layers(2).bidirectional(true)), "rnn_tanh_bi2");
  }
  SUBCASE("RNN relu, batch_first, zero h0") {
    check_single_state_layer(nn::RNN(nn::RNNOptions(2, 3).nonlinearity(kReLU).batch_first(true)), "rnn_relu_bf");
  }
  SUBCASE("GRU, 2 layers, bidirectional, given h0") {
    check_single_state_layer(nn::GRU(nn::GRUOptions(2, 3).num_layers(2).bidirectional(true)), "gru_bi2");
  }
  SUBCASE("GRU without bias, unbatched input and h0") {
    check_single_state_layer(nn::GRU(nn::GRUOptions(2, 3).bias(false)), "gru_nobias_unbatched");
  }
  SUBCASE("LSTM, 2 layers, bidirectional, given (h0, c0)") {
    Case c("lstm_bi2");
    nn::LSTM m(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true));
    load_weights(*m, c);
    Tensor x = c.leaf("input"), h0 = c.leaf("h0"), c0 = c.leaf("c0");
    auto [output, state] = m->forward(x, std::make_tuple(h0, c0));
    auto [h_n, c_n] = state;
    weighted_loss(c, {{"output", output}, {"h_n", h_n}, {"c_n", c_n}}).backward();
    check_grads(*m, c, x, h0, c0);
  }
  SUBCASE("LSTM with proj_size, batch_first") {
    Case c("lstm_proj_bf");
    nn::LSTM m(nn::LSTMOptions(2, 4).proj_size(2).batch_first(true));
    load_weights(*m, c);
    Tensor x = c.leaf("input"), h0 = c.leaf("h0"), c0 = c.leaf("c0");
    auto [output, state] = m->forward(x, std::make_tuple(h0, c0));
    weighted_loss(c, {{"output", output}, {"h_n", std::get<0>(state)}, {"c_n", std::get<1>(state)}}).backward();
    check_grads(*m, c, x, h0, c0);
  }
  SUBCASE("RNNCell tanh") { check_simple_cell(nn::RNNCell(2, 3), "rnn_cell"); }
  SUBCASE("RNNCell relu, zero h0") {
    check_simple_cell(nn::RNNCell(nn::RNNCellOptions(2, 3).nonlinearity(kReLU)), "rnn_cell_relu");
  }
  SUBCASE("GRUCell") { check_simple_cell(nn::GRUCell(2, 3), "gru_cell"); }
  SUBCASE("LSTMCell") {
    Case c("lstm_cell");
    nn::LSTMCell m(2, 3);
    load_weights(*m, c);
    Tensor x = c.leaf("input"), h0 = c.leaf("h0"), c0 = c.leaf("c0");
    auto [h, cell] = m->forward(x, std::make_tuple(h0, c0));
    weighted_loss(c, {{"h_n", h}, {"c_n", cell}}).backward();
    check_grads(*m, c, x, h0, c0);
  }
}

// ---- gradcheck ---------------------------------------------------------------------------

namespace {

/// The module's parameters (float64 leaves) followed by `extra`: gradcheck perturbs them in
/// place, so the module sees each perturbation without being rebuilt.
TensorList with_parameters(nn::Module& m, TensorList extra) {
  TensorList all = m.parameters();
  all.insert(all.end(), extra.begin(), extra.end());
  return all;
}

}  // namespace

TEST_CASE("test_rnn: gradcheck of the layers (float64, incl. bidirectional and 2 layers)") {
  manual_seed(3);
  SUBCASE("RNN tanh, 2 layers, bidirectional") {
    nn::RNN m(nn::RNNOptions(2, 2).num_layers(2).bidirectional(true));
    m->to(kDouble);
    Tensor x = rand_leaf({3, 2, 2}), h0 = rand_leaf({4, 2, 2});
    check_grad([&](const TensorList&) {
      auto [out, h] = m->forward(x, h0);
      return cat({out.flatten(), h.flatten()});
    }, with_parameters(*m, {x, h0}));
  }
  SUBCASE("RNN relu, batch_first") {
    nn::RNN m(nn::RNNOptions(2, 3).nonlinearity(kReLU).batch_first(true));
    m->to(kDouble);
    Tensor x = rand_leaf({2, 3, 2});
    check_grad([&](const TensorList&) { return std::get<0>(m->forward(x)); }, with_parameters(*m, {x}));
  }
  SUBCASE("LSTM, 2 layers, bidirectional") {
    nn::LSTM m(nn::LSTMOptions(2, 2).num_layers(2).bidirectional(true));
    m->to(kDouble);
    Tensor x = rand_leaf({3, 2, 2}), h0 = rand_leaf({4, 2, 2}), c0 = rand_leaf({4, 2, 2});
    check_grad([&](const TensorList&) {
      auto [out, state] = m->forward(x, std::make_tuple(h0, c0));
      return cat({out.flatten(), std::get<0>(state).flatten(), std::get<1>(state).flatten()});
    }, with_parameters(*m, {x, h0, c0}));
  }
  SUBCASE("LSTM with proj_size") {
    nn::LSTM m(nn::LSTMOptions(2, 3).proj_size(2));
    m->to(kDouble);
    Tensor x = rand_leaf({3, 2, 2});
    check_grad([&](const TensorList&) {
      auto [out, state] = m->forward(x);
      return cat({out.flatten(), std::get<1>(state).flatten()});
    }, with_parameters(*m, {x}));
  }
  SUBCASE("GRU, 2 layers, bidirectional") {
    nn::GRU m(nn::GRUOptions(2, 2).num_layers(2).bidirectional(true));
    m->to(kDouble);
    Tensor x = rand_leaf({3, 2, 2}), h0 = rand_leaf({4, 2, 2});
    check_grad([&](const TensorList&) {
      auto [out, h] = m->forward(x, h0);
      return cat({out.flatten(), h.flatten()});
    }, with_parameters(*m, {x, h0}));
  }
}

TEST_CASE("test_rnn: gradcheck of the cells (float64)") {
  manual_seed(4);
  Tensor x = rand_leaf({2, 3}), h0 = rand_leaf({2, 2}), c0 = rand_leaf({2, 2});
  SUBCASE("RNNCell") {
    nn::RNNCell m(3, 2);
    m->to(kDouble);
    check_grad([&](const TensorList&) { return m->forward(x, h0); }, with_parameters(*m, {x, h0}));
  }
  SUBCASE("LSTMCell") {
    nn::LSTMCell m(3, 2);
    m->to(kDouble);
    check_grad([&](const TensorList&) {
      auto [h, c] = m->forward(x, std::make_tuple(h0, c0));
      return cat({h.flatten(), c.flatten()});
    }, with_parameters(*m, {x, h0, c0}));
  }
  SUBCASE("GRUCell") {
    nn::GRUCell m(3, 2);
    m->to(kDouble);
    check_grad([&](const TensorList&) { return m->forward(x, h0); }, with_parameters(*m, {x, h0}));
  }
}

// ---- layouts and states ------------------------------------------------------------------

TEST_CASE("test_rnn: batch_first, unbatched input and default states agree with the plain form") {
  manual_seed(5);
  nn::LSTM m(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  nn::LSTM bf(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  bf->load_state_dict(m->state_dict());
  Tensor x = randn({5, 2, 3});
  auto [out, state] = m->forward(x);
  CHECK(shape(out) == std::vector<int64_t>{5, 2, 8});
  CHECK(shape(std::get<0>(state)) == std::vector<int64_t>{4, 2, 4});
  CHECK(shape(std::get<1>(state)) == std::vector<int64_t>{4, 2, 4});

  // Zero initial states are the default.
  Tensor zeros_state = zeros({4, 2, 4});
  auto [out0, state0] = m->forward(x, std::make_tuple(zeros_state, zeros_state));
  check_close(out, out0, 0, 0);

  // batch_first: the same numbers with batch and time swapped.
  auto [out_bf, state_bf] = bf->forward(x.transpose(0, 1).contiguous());
  check_close(out_bf.transpose(0, 1), out, 1e-6, 1e-5);
  check_close(std::get<0>(state_bf), std::get<0>(state), 1e-6, 1e-5);

  // Unbatched [T, I]: the batched result of its one sample, without the batch dim.
  Tensor sample = x.select(1, 1);
  auto [out_u, state_u] = m->forward(sample);
  CHECK(shape(out_u) == std::vector<int64_t>{5, 8});
  CHECK(shape(std::get<0>(state_u)) == std::vector<int64_t>{4, 4});
  check_close(out_u, out.select(1, 1), 1e-6, 1e-5);
  check_close(std::get<1>(state_u), std::get<1>(state).select(1, 1), 1e-6, 1e-5);

  // The last forward output of a bidirectional layer is h_n of the forward direction, the
  // first reverse output is h_n of the reverse direction.
  check_close(out.select(0, 4).narrow(1, 0, 4), std::get<0>(state).select(0, 2), 0, 0);
  check_close(out.select(0, 0).narrow(1, 4, 4), std::get<0>(state).select(0, 3), 0, 0);
}

TEST_CASE("test_rnn: cells take unbatched 1-D inputs and default to zero states") {
  manual_seed(6);
  nn::GRUCell cell(3, 4);
  Tensor x = randn({2, 3});
  Tensor h = cell->forward(x);
  check_close(h, cell->forward(x, zeros({2, 4})), 0, 0);
  Tensor h1 = cell->forward(x.select(0, 1));
  CHECK(shape(h1) == std::vector<int64_t>{4});
  check_close(h1, h.select(0, 1), 1e-6, 1e-5);

  nn::LSTMCell lstm(3, 4);
  auto [hb, cb] = lstm->forward(x);
  auto [hu, cu] = lstm->forward(x.select(0, 0), std::make_tuple(zeros({4}), zeros({4})));
  check_close(hu, hb.select(0, 0), 1e-6, 1e-5);
  check_close(cu, cb.select(0, 0), 1e-6, 1e-5);
}

TEST_CASE("test_rnn: a layer stack equals its cells run step by step") {
  // An independent composition: the cell modules, looped in C++, with the layer's weights.
  manual_seed(7);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2));
  nn::GRUCell c0(3, 4), c1(4, 4);
  const auto sd = gru->state_dict();
  for (auto [cell, l] : {std::pair{c0, 0}, std::pair{c1, 1}}) {
    const std::string s = "_l" + std::to_string(l);
    cell->load_state_dict({{"weight_ih", sd["weight_ih" + s]}, {"weight_hh", sd["weight_hh" + s]},
                           {"bias_ih", sd["bias_ih" + s]}, {"bias_hh", sd["bias_hh" + s]}});
  }
  Tensor x = randn({4, 2, 3});
  auto [out, h_n] = gru->forward(x);
  Tensor h0 = zeros({2, 4}), h1 = zeros({2, 4});
  for (int64_t t = 0; t < 4; ++t) {
    h0 = c0->forward(x.select(0, t), h0);
    h1 = c1->forward(h0, h1);
    check_close(out.select(0, t), h1, 1e-6, 1e-5);
  }
  check_close(h_n, stack({h0, h1}), 1e-6, 1e-5);
}

// ---- dropout -----------------------------------------------------------------------------

TEST_CASE("test_rnn: dropout between layers in training only") {
  manual_seed(8);
  nn::RNN plain(nn::RNNOptions(3, 4).num_layers(2));
  nn::RNN dropped(nn::RNNOptions(3, 4).num_layers(2).dropout(1.0));
  dropped->load_state_dict(plain->state_dict());
  Tensor x = randn({5, 2, 3});

  // eval: no dropout at all.
  dropped->eval();
  check_close(std::get<0>(dropped->forward(x)), std::get<0>(plain->forward(x)), 0, 0);

  // train with p = 1: the second layer sees zeros, so it runs on its biases alone — the same
  // as a one-layer RNN with layer 1's weights fed a zero input.
  dropped->train();
  nn::RNN second(nn::RNNOptions(4, 4));
  const auto sd = plain->state_dict();
  second->load_state_dict({{"weight_ih_l0", sd["weight_ih_l1"]}, {"weight_hh_l0", sd["weight_hh_l1"]},
                           {"bias_ih_l0", sd["bias_ih_l1"]}, {"bias_hh_l0", sd["bias_hh_l1"]}});
  auto [out, h_n] = dropped->forward(x);
  auto [out_zero, h_zero] = second->forward(zeros({5, 2, 4}));
  check_close(out, out_zero, 1e-6, 1e-5);
  check_close(h_n.select(0, 1), h_zero.select(0, 0), 1e-6, 1e-5);
  // ... while layer 0's h_n is untouched by dropout.
  check_close(h_n.select(0, 0), std::get<1>(plain->forward(x)).select(0, 0), 0, 0);

  // p = 0.5 in training: random, so two runs differ; never after the last layer, so a
  // one-layer module with dropout is deterministic.
  nn::LSTM half(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  CHECK(!equal(std::get<0>(half->forward(x)), std::get<0>(half->forward(x))));
  half->eval();
  CHECK(equal(std::get<0>(half->forward(x)), std::get<0>(half->forward(x))));
  nn::GRU one(nn::GRUOptions(3, 4).dropout(0.5));
  CHECK(equal(std::get<0>(one->forward(x)), std::get<0>(one->forward(x))));
}

// ---- parameters --------------------------------------------------------------------------

TEST_CASE("test_rnn: parameter names, order and shapes as PyTorch's") {
  nn::LSTM m(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true).proj_size(1));
  // PyTorch 2.9.1: list(nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=1).state_dict())
  std::vector<std::string> expected;
  for (std::string l : {"_l0", "_l0_reverse", "_l1", "_l1_reverse"})
    for (std::string p : {"weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"}) expected.push_back(p + l);
  CHECK(keys_of(m->state_dict()) == expected);
  const auto sd = m->state_dict();
  CHECK(shape(sd["weight_ih_l0"]) == std::vector<int64_t>{12, 2});
  CHECK(shape(sd["weight_hh_l0"]) == std::vector<int64_t>{12, 1});
  CHECK(shape(sd["bias_hh_l0_reverse"]) == std::vector<int64_t>{12});
  CHECK(shape(sd["weight_hr_l0"]) == std::vector<int64_t>{1, 3});
  CHECK(shape(sd["weight_ih_l1"]) == std::vector<int64_t>{12, 2});
  CHECK(m->all_weights().size() == 20);

  CHECK(keys_of(nn::GRU(nn::GRUOptions(2, 3).bias(false))->state_dict()) ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"});
  CHECK(keys_of(nn::RNN(nn::RNNOptions(2, 3).num_layers(2))->named_parameters()) ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l1",
                                 "weight_hh_l1", "bias_ih_l1", "bias_hh_l1"});
  CHECK(shape(nn::GRU(2, 3)->state_dict()["weight_hh_l0"]) == std::vector<int64_t>{9, 3});
  CHECK(keys_of(nn::GRUCell(nn::GRUCellOptions(2, 3).bias(false))->state_dict()) ==
        std::vector<std::string>{"weight_ih", "weight_hh"});
  nn::LSTMCell cell(2, 3);
  CHECK(keys_of(cell->state_dict()) == std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"});
  CHECK(shape(cell->weight_ih) == std::vector<int64_t>{12, 2});
}

TEST_CASE("test_rnn: every parameter starts in U(-1/sqrt(hidden), 1/sqrt(hidden))") {
  manual_seed(9);
  nn::LSTM m(nn::LSTMOptions(5, 16).num_layers(2).bidirectional(true));
  nn::GRUCell cell(5, 16);
  for (const nn::Module* mod : {static_cast<const nn::Module*>(m.get()), static_cast<const nn::Module*>(cell.get())})
    for (const auto& p : mod->named_parameters()) {
      INFO(p.key());
      std::vector<double> v = values(p.value());
      double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
      CHECK(lo >= -0.25);
      CHECK(hi <= 0.25);
      CHECK(hi - lo > 0.3);  // spread over the range, not a constant
    }
}

TEST_CASE("test_rnn: clone copies the weights and shares nothing") {
  nn::GRU m(nn::GRUOptions(2, 3).num_layers(2));
  auto copy = std::dynamic_pointer_cast<nn::GRUImpl>(m->clone());
  REQUIRE(copy != nullptr);
  Tensor x = randn({3, 1, 2});
  check_close(std::get<0>(copy->forward(x)), std::get<0>(m->forward(x)), 0, 0);
  {
    NoGradGuard no_grad;
    copy->all_weights()[0].fill_(0.5);
  }
  CHECK(!equal(m->all_weights()[0], copy->all_weights()[0]));
  CHECK(equal(copy->named_parameters()["weight_ih_l0"], copy->all_weights()[0]));
}

// ---- reprs and errors --------------------------------------------------------------------

TEST_CASE("test_rnn: reprs as Python's") {
  CHECK(repr(*nn::RNN(nn::RNNOptions(3, 4)
                          .nonlinearity(kReLU)
                          .num_layers(2)
                          .dropout(0.5)
                          .bidirectional(true)
                          .batch_first(true)
                          .bias(false))) ==
        "RNN(3, 4, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)");
  CHECK(repr(*nn::LSTM(nn::LSTMOptions(3, 4).proj_size(2))) == "LSTM(3, 4, proj_size=2)");
  CHECK(repr(*nn::GRU(3, 4)) == "GRU(3, 4)");
  CHECK(repr(*nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(kReLU).bias(false))) ==
        "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  CHECK(repr(*nn::LSTMCell(3, 4)) == "LSTMCell(3, 4)");
  CHECK(repr(*nn::GRUCell(3, 4)) == "GRUCell(3, 4)");
}

TEST_CASE("test_rnn: PyTorch's error texts") {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  check_error([&] { lstm->forward(zeros({5, 2, 6})); },
              "input.size(-1) must be equal to input_size. Expected 3, got 6");
  check_error([&] { lstm->forward(zeros({5, 2, 3}), std::make_tuple(zeros({2, 3, 4}), zeros({2, 2, 4}))); },
              "Expected hidden[0] size (2, 2, 4), got [2, 3, 4]");
  check_error([&] { lstm->forward(zeros({5, 2, 3}), std::make_tuple(zeros({2, 2, 4}), zeros({1, 2, 4}))); },
              "Expected hidden[1] size (2, 2, 4), got [1, 2, 4]");
  check_error([&] { lstm->forward(zeros({5, 2, 3}), std::make_tuple(zeros({2, 4}), zeros({2, 4}))); },
              "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors");
  check_error([&] { lstm->forward(zeros({5, 3}), std::make_tuple(zeros({2, 1, 4}), zeros({2, 4}))); },
              "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 2-D) tensors");
  check_error([&] { lstm->forward(zeros({1, 5, 2, 3})); }, "LSTM: Expected input to be 2D or 3D, got 4D instead");
  check_error([&] { lstm->forward(zeros({0, 2, 3})); }, "Expected sequence length to be larger than 0 in RNN");

  nn::GRU gru(3, 4);
  check_error([&] { gru->forward(zeros({5, 2, 3}), zeros({1, 3, 4})); }, "Expected hidden size (1, 2, 4), got [1, 3, 4]");
  check_error([&] { gru->forward(zeros({5, 2, 3}, kDouble)); },
              "input must have the type torch.float32, got type torch.float64");
  check_error([&] { gru->forward(zeros({5, 3}), zeros({1, 1, 4})); },
              "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
  nn::RNN rnn(3, 4);
  check_error([&] { rnn->forward(zeros({5})); }, "RNN: Expected input to be 2D or 3D, got 1D tensor instead");
  check_error([&] { rnn->forward(zeros({5, 2, 3}), zeros({1, 4})); },
              "For batched 3-D input, hx should also be 3-D but got 2-D tensor");

  nn::RNNCell cell(3, 4);
  check_error([&] { cell->forward(zeros({2, 5})); }, "input has inconsistent input_size: got 5 expected 3");
  check_error([&] { cell->forward(zeros({2, 3}), zeros({3, 4})); }, "Input batch size 2 doesn't match hidden0 batch size 3");
  check_error([&] { cell->forward(zeros({2, 3}), zeros({2, 5})); }, "hidden0 has inconsistent hidden_size: got 5, expected 4");
  check_error([&] { cell->forward(zeros({2, 3, 3})); }, "RNNCell: Expected input to be 1D or 2D, got 3D instead");
  nn::LSTMCell lstm_cell(3, 4);
  check_error([&] { lstm_cell->forward(zeros({2, 3}), std::make_tuple(zeros({2, 4}), zeros({2, 5}))); },
              "hidden1 has inconsistent hidden_size: got 5, expected 4");
  check_error([&] { lstm_cell->forward(zeros({2, 3}), std::make_tuple(zeros({1, 2, 4}), zeros({2, 4}))); },
              "LSTMCell: Expected hx[0] to be 1D or 2D, got 3D instead");
  nn::GRUCell gru_cell(3, 4);
  check_error([&] { gru_cell->forward(zeros({2, 3}), zeros({2, 2, 4})); },
              "GRUCell: Expected hidden to be 1D or 2D, got 3D instead");

  check_error([] { nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)); }, "proj_size has to be smaller than hidden_size");
  check_error([] { nn::GRU(nn::GRUOptions(3, 4).dropout(1.5)); },
              "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  check_error([] { nn::RNN(nn::RNNOptions(3, 0)); }, "hidden_size must be greater than zero");
}
