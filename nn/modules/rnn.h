// Recurrent layers RNN, LSTM, GRU and their cells RNNCell, LSTMCell, GRUCell (libtorch's
// torch/nn/modules/rnn.h) with PyTorch's parameter names, order and shapes (weight_ih_l0,
// weight_hh_l0, bias_ih_l0, bias_hh_l0, [weight_hr_l0], then the _reverse set, layer by layer),
// its initialisation U(±1/sqrt(hidden_size)), unbatched inputs and error texts.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/rnn.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/any_module.h"
#include "ember/nn/options/rnn.h"
#include "ember/nn/utils/rnn.h"

namespace ember {
namespace nn {

namespace detail {

enum class RNNMode { kRNN_TANH, kRNN_RELU, kLSTM, kGRU };

/// What the three layer kinds share: the options of any of them in one shape.
struct RNNSpec {
  RNNMode mode;
  int64_t input_size;
  int64_t hidden_size;
  int64_t num_layers;
  bool bias;
  bool batch_first;
  double dropout;
  bool bidirectional;
  int64_t proj_size;

  int64_t num_directions() const { return bidirectional ? 2 : 1; }
  /// The size of h: proj_size when an LSTM projects, hidden_size otherwise.
  int64_t real_hidden_size() const { return proj_size > 0 ? proj_size : hidden_size; }
  /// Rows of W_ih / W_hh: hidden_size times the number of gates (1, 4 or 3).
  int64_t gate_size() const;
};

/// Checks the options as PyTorch's RNNBase constructor does (and warns about dropout with
/// one layer, as it does).
void check_rnn_spec(const RNNSpec& spec);
/// Registers the parameters of `spec` on `module` in PyTorch's order, drawn from
/// U(±1/sqrt(hidden_size)); returns them in that order (the "flat weights").
std::vector<Tensor> register_rnn_parameters(Module& module, const RNNSpec& spec);
/// Re-draws every weight from U(±1/sqrt(hidden_size)), as PyTorch's RNNBase.reset_parameters.
void reset_rnn_parameters(std::vector<Tensor>& weights, int64_t hidden_size);
/// Python's repr: "LSTM(10, 20, num_layers=2, bidirectional=True)".
void print_rnn(std::ostream& stream, const std::string& name, const RNNSpec& spec);
/// The whole forward of a layer stack: input [T, N, I] (or [N, T, I] with batch_first, or an
/// unbatched [T, I]), hx / cx the initial states or undefined for zeros. Returns (output, h_n, c_n);
/// c_n is undefined unless the mode is LSTM.
std::tuple<Tensor, Tensor, Tensor> rnn_forward(const RNNSpec& spec, const std::vector<Tensor>& weights,
                                               const Tensor& input, const Tensor& hx, const Tensor& cx,
                                               bool training);
/// The same over a PackedSequence: each step runs only on the sequences that have it, and a
/// sequence's h_n / c_n are its states after its own last step. hx / cx are in the caller's batch
/// order (permuted to the packed order here and back for h_n / c_n, as PyTorch's permute_hidden).
std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> rnn_forward_packed(const RNNSpec& spec,
                                                                          const std::vector<Tensor>& weights,
                                                                          const utils::rnn::PackedSequence& input,
                                                                          Tensor hx, Tensor cx, bool training);

/// The layer base: parameter registration in reset() (from Derived's options, through
/// Derived::spec_of), repr, all_weights().
template <class Derived>
class RNNImplBase : public Cloneable<Derived> {
 public:
  void reset() override {
    spec_ = Derived::spec_of(static_cast<const Derived&>(*this).options);
    check_rnn_spec(spec_);
    flat_weights_ = register_rnn_parameters(*this, spec_);
  }
  /// Re-draws every parameter from U(±1/sqrt(hidden_size)).
  void reset_parameters() { reset_rnn_parameters(flat_weights_, spec_.hidden_size); }
  void pretty_print(std::ostream& stream) const override { print_rnn(stream, this->name(), spec_); }
  /// The parameters in PyTorch's order (_flat_weights), e.g. weight_ih_l0, weight_hh_l0, ...
  std::vector<Tensor> all_weights() const { return flat_weights_; }
  /// cuDNN's contiguous weight buffer is not used, so there is nothing to flatten.
  void flatten_parameters() {}

 protected:
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& hx, const Tensor& cx) {
    return rnn_forward(spec_, flat_weights_, input, hx, cx, this->is_training());
  }

  RNNSpec spec_{};
  std::vector<Tensor> flat_weights_;
};

/// The cell base: weight_ih [G*H, I], weight_hh [G*H, H], bias_ih, bias_hh [G*H].
template <class Derived>
class RNNCellImplBase : public Cloneable<Derived> {
 public:
  RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t num_chunks)
      : input_size_(input_size), hidden_size_(hidden_size), bias_(bias), num_chunks_(num_chunks) {}
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  Tensor weight_ih;
  Tensor weight_hh;
  Tensor bias_ih;
  Tensor bias_hh;

 protected:
  /// "relu" for an RNNCell with ReLU (printed in its repr); empty otherwise.
  virtual std::string nonlinearity_str() const { return ""; }
  /// "<cell>: Expected input to be 1D or 2D, got 3D instead".
  void check_input_dim(const std::string& cell, const Tensor& input) const;

  int64_t input_size_, hidden_size_;
  bool bias_;
  int64_t num_chunks_;
};

}  // namespace detail

/// A multi-layer Elman RNN with tanh or ReLU.
class RNNImpl : public detail::RNNImplBase<RNNImpl> {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  /// (output, h_n): output [T, N, D*H] (batch first if asked), h_n [num_layers*D, N, H].
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())})
  /// The forward over variable-length sequences (nn::utils::rnn::pack_padded_sequence).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  RNNOptions options;

 private:
  friend class detail::RNNImplBase<RNNImpl>;
  static detail::RNNSpec spec_of(const RNNOptions& o);
};
EMBER_MODULE(RNN);

/// A multi-layer long short-term memory RNN.
class LSTMImpl : public detail::RNNImplBase<LSTMImpl> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  /// (output, (h_n, c_n)); hx_opt = (h_0, c_0), zeros when absent.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})
  /// The forward over variable-length sequences (nn::utils::rnn::pack_padded_sequence).
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMOptions options;

 private:
  friend class detail::RNNImplBase<LSTMImpl>;
  static detail::RNNSpec spec_of(const LSTMOptions& o);
};
EMBER_MODULE(LSTM);

/// A multi-layer gated recurrent unit RNN.
class GRUImpl : public detail::RNNImplBase<GRUImpl> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  /// (output, h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())})
  /// The forward over variable-length sequences (nn::utils::rnn::pack_padded_sequence).
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  GRUOptions options;

 private:
  friend class detail::RNNImplBase<GRUImpl>;
  static detail::RNNSpec spec_of(const GRUOptions& o);
};
EMBER_MODULE(GRU);

/// One Elman RNN step: input [N, I] or [I], hx [N, H] or [H] (zeros when undefined).
class RNNCellImpl : public detail::RNNCellImplBase<RNNCellImpl> {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())})

  RNNCellOptions options;

 protected:
  std::string nonlinearity_str() const override;
};
EMBER_MODULE(RNNCell);

/// One LSTM step: returns (h', c').
class LSTMCellImpl : public detail::RNNCellImplBase<LSTMCellImpl> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(std::optional<std::tuple<Tensor, Tensor>>())})

  LSTMCellOptions options;
};
EMBER_MODULE(LSTMCell);

/// One GRU step.
class GRUCellImpl : public detail::RNNCellImplBase<GRUCellImpl> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});
  FORWARD_HAS_DEFAULT_ARGS({1, ::ember::nn::AnyValue(::ember::Tensor())})

  GRUCellOptions options;
};
EMBER_MODULE(GRUCell);

}  // namespace nn
}  // namespace ember
