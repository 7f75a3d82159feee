// nn::utils::rnn (pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence) against
// hand-worked layouts, PyTorch's errors, and the recurrent layers' forward_with_packed_input
// against running each sequence alone through the plain forward (outputs, final states and
// weight gradients).
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/reduce.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/utils/rnn.h"
#include "op_check.h"

using namespace ember;
using namespace ember::nn::utils::rnn;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::longs;
using ember::test::shape;
using ember::test::values;

namespace {
/// The sequences (1, 2, 3), (4), (5, 6), one feature each.
std::vector<Tensor> three_sequences() {
  return {from_values({1, 2, 3}, {3, 1}), from_values({4}, {1, 1}), from_values({5, 6}, {2, 1})};
}
std::vector<double> ints(const Tensor& t) { return values(t); }
}  // namespace

TEST_CASE("pad_sequence pads each sequence to the longest") {
  Tensor padded = pad_sequence(three_sequences(), /*batch_first=*/false, /*padding_value=*/-1);
  CHECK(shape(padded) == std::vector<int64_t>{3, 3, 1});
  CHECK(values(padded) == std::vector<double>{1, 4, 5, 2, -1, 6, 3, -1, -1});
  Tensor first = pad_sequence(three_sequences(), /*batch_first=*/true);
  CHECK(shape(first) == std::vector<int64_t>{3, 3, 1});
  CHECK(values(first) == std::vector<double>{1, 2, 3, 4, 0, 0, 5, 6, 0});
  check_error([] { pad_sequence(std::vector<Tensor>{}); }, "received an empty list of sequences");
}

TEST_CASE("pack_padded_sequence lays sequences out step by step, longest first") {
  Tensor padded = pad_sequence(three_sequences(), false, -1);
  PackedSequence packed = pack_padded_sequence(padded, longs({3, 1, 2}), false, /*enforce_sorted=*/false);
  // Sorted by length: sequences 0 (3 steps), 2 (2 steps), 1 (1 step).
  CHECK(values(packed.data()) == std::vector<double>{1, 5, 4, 2, 6, 3});
  CHECK(ints(packed.batch_sizes()) == std::vector<double>{3, 2, 1});
  CHECK(ints(packed.sorted_indices()) == std::vector<double>{0, 2, 1});
  CHECK(ints(packed.unsorted_indices()) == std::vector<double>{0, 2, 1});

  auto [unpacked, lengths] = pad_packed_sequence(packed, false, -1);
  CHECK(values(unpacked) == values(padded));
  CHECK(ints(lengths) == std::vector<double>{3, 1, 2});
  auto [longer, unused] = pad_packed_sequence(packed, /*batch_first=*/true, 0.0, /*total_length=*/5);
  CHECK(shape(longer) == std::vector<int64_t>{3, 5, 1});
  CHECK(values(longer) == std::vector<double>{1, 2, 3, 0, 0, 4, 0, 0, 0, 0, 5, 6, 0, 0, 0});

  // batch_first input, already sorted.
  PackedSequence sorted = pack_sequence({from_values({1, 2}, {2, 1}), from_values({3}, {1, 1})});
  CHECK(values(sorted.data()) == std::vector<double>{1, 3, 2});
  CHECK(!sorted.sorted_indices().defined());
}

TEST_CASE("packing raises PyTorch's errors") {
  Tensor padded = pad_sequence(three_sequences());
  check_error([&] { pack_padded_sequence(padded, longs({3, 1, 2})); },
              "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True.");
  check_error([&] { pack_padded_sequence(padded, longs({3, 2, 0})); },
              "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
  check_error([&] { pack_padded_sequence(padded, longs({3, 2})); },
              "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)");
  PackedSequence packed = pack_sequence(three_sequences(), false);
  check_error([&] { pad_packed_sequence(packed, false, 0.0, 2); },
              "Expected total_length to be at least the length of the longest sequence in input, but got "
              "total_length=2 and max sequence length being 3");
  check_error([&] { pack_sequence(three_sequences(), true); }, "must be sorted in decreasing order");
}

TEST_CASE("gradients flow through packing and unpacking") {
  Tensor x = from_values({1, 2, 3, 4, 5, 6}, {3, 2, 1}).requires_grad_();  // [T=3, B=2, 1]
  PackedSequence packed = pack_padded_sequence(x, longs({1, 3}), false, false);
  auto [y, lengths] = pad_packed_sequence(packed);
  (y * from_values({10, 20, 30, 40, 50, 60}, {3, 2, 1})).sum().backward();
  // Sequence 0 has one step: only x[0, 0] reaches the output; sequence 1 has all three.
  CHECK(values(x.grad()) == std::vector<double>{10, 20, 0, 40, 0, 60});
}

namespace {

/// Runs `layer` on each sequence alone (batch of one, its own length) and on all of them packed,
/// and checks outputs, final states and the weights' gradients agree.
template <class Layer, class RunPacked, class RunAlone>
void check_packed_against_alone(Layer& layer, RunPacked run_packed, RunAlone run_alone, bool lstm) {
  manual_seed(11);
  const int64_t B = 3, T = 4, I = 2;
  const std::vector<int64_t> lengths = {4, 2, 3};
  const int64_t H = layer->options.hidden_size(), D = layer->options.bidirectional() ? 2 : 1,
                L = layer->options.num_layers();
  Tensor x = randn({B, T, I}, kDouble);  // batch first
  Tensor h0 = randn({L * D, B, H}, kDouble), c0 = randn({L * D, B, H}, kDouble);

  PackedSequence packed = pack_padded_sequence(x, longs(lengths), /*batch_first=*/true, /*enforce_sorted=*/false);
  auto [out, h_n, c_n] = run_packed(packed, h0, c0);
  auto [padded, unused] = pad_packed_sequence(out, /*batch_first=*/true);
  CHECK(shape(padded) == std::vector<int64_t>{B, T, D * H});
  padded.sum().backward();
  std::vector<std::vector<double>> packed_grads;
  for (const Tensor& p : layer->parameters()) packed_grads.push_back(values(p.grad()));
  layer->zero_grad();

  Tensor total;
  for (int64_t b = 0; b < B; ++b) {
    CAPTURE(b);
    Tensor xb = x.narrow(0, b, 1).narrow(1, 0, lengths[static_cast<size_t>(b)]);
    auto [yb, hb, cb] = run_alone(xb, h0.narrow(1, b, 1), c0.narrow(1, b, 1));
    check_close(padded.narrow(0, b, 1).narrow(1, 0, lengths[static_cast<size_t>(b)]), yb, 1e-12, 1e-12);
    check_close(h_n.narrow(1, b, 1), hb, 1e-12, 1e-12);
    if (lstm) check_close(c_n.narrow(1, b, 1), cb, 1e-12, 1e-12);
    total = total.defined() ? total + yb.sum() : yb.sum();
  }
  // Padding positions are zeros in the padded output, so both sums see the same terms.
  total.backward();
  auto params = layer->parameters();
  for (size_t i = 0; i < params.size(); ++i) check_close(params[i].grad(), packed_grads[i], 1e-10, 1e-10);
}

}  // namespace

TEST_CASE("LSTM, GRU and RNN forward_with_packed_input equal each sequence run alone") {
  SUBCASE("LSTM, two layers, bidirectional, batch first") {
    nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true).batch_first(true));
    lstm->to(kDouble);
    check_packed_against_alone(
        lstm,
        [&](const PackedSequence& p, const Tensor& h0, const Tensor& c0) {
          auto [out, state] = lstm->forward_with_packed_input(p, std::make_tuple(h0, c0));
          return std::make_tuple(out, std::get<0>(state), std::get<1>(state));
        },
        [&](const Tensor& x, const Tensor& h0, const Tensor& c0) {
          auto [y, state] = lstm->forward(x, std::make_tuple(h0, c0));
          return std::make_tuple(y, std::get<0>(state), std::get<1>(state));
        },
        true);
  }
  SUBCASE("GRU, two layers") {
    nn::GRU gru(nn::GRUOptions(2, 3).num_layers(2).batch_first(true));
    gru->to(kDouble);
    check_packed_against_alone(
        gru,
        [&](const PackedSequence& p, const Tensor& h0, const Tensor&) {
          auto [out, h] = gru->forward_with_packed_input(p, h0);
          return std::make_tuple(out, h, Tensor());
        },
        [&](const Tensor& x, const Tensor& h0, const Tensor&) {
          auto [y, h] = gru->forward(x, h0);
          return std::make_tuple(y, h, Tensor());
        },
        false);
  }
  SUBCASE("RNN (tanh), bidirectional") {
    nn::RNN rnn(nn::RNNOptions(2, 3).bidirectional(true).batch_first(true));
    rnn->to(kDouble);
    check_packed_against_alone(
        rnn,
        [&](const PackedSequence& p, const Tensor& h0, const Tensor&) {
          auto [out, h] = rnn->forward_with_packed_input(p, h0);
          return std::make_tuple(out, h, Tensor());
        },
        [&](const Tensor& x, const Tensor& h0, const Tensor&) {
          auto [y, h] = rnn->forward(x, h0);
          return std::make_tuple(y, h, Tensor());
        },
        false);
  }
}

TEST_CASE("forward_with_packed_input defaults to zero states and checks them") {
  nn::LSTM lstm(nn::LSTMOptions(2, 3));
  PackedSequence packed = pack_sequence({randn({3, 2}), randn({2, 2})});
  auto [out, state] = lstm->forward_with_packed_input(packed);
  CHECK(shape(out.data()) == std::vector<int64_t>{5, 3});
  CHECK(shape(std::get<0>(state)) == std::vector<int64_t>{1, 2, 3});
  check_error([&] { lstm->forward_with_packed_input(packed, std::make_tuple(zeros({1, 5, 3}), zeros({1, 5, 3}))); },
              "Expected hidden[0] size (1, 2, 3), got [1, 5, 3]");
}
