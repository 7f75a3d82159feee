// Options of the transformer modules with libtorch's names (TransformerEncoderLayerOptions,
// TransformerDecoderLayerOptions, TransformerEncoderOptions, TransformerDecoderOptions,
// TransformerOptions) and PyTorch Python's arguments and defaults, including the ones only
// Python has (layer_norm_eps, batch_first, norm_first, bias).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/core/arg.h"
#include "ember/nn/enums.h"
#include "ember/nn/modules/container.h"

namespace ember {
namespace nn {

/// The feedforward activation: kReLU, kGELU or any Tensor -> Tensor callable (libtorch's).
using activation_t = std::variant<enumtype::kReLU, enumtype::kGELU, std::function<Tensor(const Tensor&)>>;

/// PyTorch's _get_activation_fn for the string spellings: "relu" or "gelu".
inline activation_t activation_from_string(const std::string& name) {
  if (name == "relu") return enumtype::kReLU{};
  EMBER_CHECK(name == "gelu", "activation should be relu/gelu, not ", name);
  return enumtype::kGELU{};
}

/// TransformerEncoderLayer(d_model, nhead).dim_feedforward(2048).dropout(0.1)
/// .activation(kReLU).layer_norm_eps(1e-5).batch_first(false).norm_first(false).bias(true);
/// activation("gelu") takes Python's string spelling too.
struct TransformerEncoderLayerOptions {
  /*implicit*/ TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  TransformerEncoderLayerOptions& activation(const std::string& name) {
    activation_ = activation_from_string(name);
    return *this;
  }
  TransformerEncoderLayerOptions& activation(const char* name) { return activation(std::string(name)); }
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(activation_t, activation) = enumtype::kReLU{};
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  /// Inputs and outputs are (batch, seq, feature) rather than (seq, batch, feature).
  EMBER_ARG(bool, batch_first) = false;
  /// Layer norm before attention and feedforward (pre-norm) rather than after them.
  EMBER_ARG(bool, norm_first) = false;
  /// Whether the Linear, MultiheadAttention and LayerNorm layers have biases.
  EMBER_ARG(bool, bias) = true;
};

/// TransformerDecoderLayer(d_model, nhead) with the same options as the encoder layer.
struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerDecoderLayerOptions& activation(const std::string& name) {
    activation_ = activation_from_string(name);
    return *this;
  }
  TransformerDecoderLayerOptions& activation(const char* name) { return activation(std::string(name)); }
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(activation_t, activation) = enumtype::kReLU{};
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  /// Inputs and outputs are (batch, seq, feature) rather than (seq, batch, feature).
  EMBER_ARG(bool, batch_first) = false;
  /// Layer norm before attention and feedforward (pre-norm) rather than after them.
  EMBER_ARG(bool, norm_first) = false;
  /// Whether the Linear, MultiheadAttention and LayerNorm layers have biases.
  EMBER_ARG(bool, bias) = true;
};

class TransformerEncoderLayerImpl;
class TransformerDecoderLayerImpl;
class TransformerEncoderImpl;
class TransformerDecoderImpl;

/// TransformerEncoderOptions(encoder_layer, num_layers).norm(AnyModule(LayerNorm(...))): the
/// encoder holds num_layers deep copies of encoder_layer (or of a layer built from its options).
struct TransformerEncoderOptions {
  TransformerEncoderOptions(std::shared_ptr<TransformerEncoderLayerImpl> encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  /// From the holder: TransformerEncoderOptions(TransformerEncoderLayer(8, 2), 6).
  template <class Holder>
  requires requires(const Holder& h) {
    { h.ptr() } -> std::convertible_to<std::shared_ptr<TransformerEncoderLayerImpl>>;
  }
  TransformerEncoderOptions(const Holder& encoder_layer, int64_t num_layers)
      : TransformerEncoderOptions(std::shared_ptr<TransformerEncoderLayerImpl>(encoder_layer.ptr()),
                                  num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options, int64_t num_layers)
      : num_layers_(num_layers),
        layer_options(std::make_shared<TransformerEncoderLayerOptions>(encoder_layer_options)) {}
  EMBER_ARG(std::shared_ptr<TransformerEncoderLayerImpl>, encoder_layer);
  EMBER_ARG(int64_t, num_layers);
  /// The final norm (empty: none).
  EMBER_ARG(AnyModule, norm);

 public:
  /// Set when built from layer options: the encoder builds the layer itself.
  std::shared_ptr<TransformerEncoderLayerOptions> layer_options;
};

/// TransformerDecoderOptions(decoder_layer, num_layers).norm(AnyModule(LayerNorm(...))).
struct TransformerDecoderOptions {
  TransformerDecoderOptions(std::shared_ptr<TransformerDecoderLayerImpl> decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  template <class Holder>
  requires requires(const Holder& h) {
    { h.ptr() } -> std::convertible_to<std::shared_ptr<TransformerDecoderLayerImpl>>;
  }
  TransformerDecoderOptions(const Holder& decoder_layer, int64_t num_layers)
      : TransformerDecoderOptions(std::shared_ptr<TransformerDecoderLayerImpl>(decoder_layer.ptr()),
                                  num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options, int64_t num_layers)
      : num_layers_(num_layers),
        layer_options(std::make_shared<TransformerDecoderLayerOptions>(decoder_layer_options)) {}
  EMBER_ARG(std::shared_ptr<TransformerDecoderLayerImpl>, decoder_layer);
  EMBER_ARG(int64_t, num_layers);
  EMBER_ARG(AnyModule, norm);

 public:
  /// Set when built from layer options: the decoder builds the layer itself.
  std::shared_ptr<TransformerDecoderLayerOptions> layer_options;
};

/// TransformerOptions().d_model(512).nhead(8).num_encoder_layers(6).num_decoder_layers(6)
/// .dim_feedforward(2048).dropout(0.1).activation(kReLU).custom_encoder(nullptr)
/// .custom_decoder(nullptr).layer_norm_eps(1e-5).batch_first(false).norm_first(false).bias(true).
struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  TransformerOptions& activation(const std::string& name) {
    activation_ = activation_from_string(name);
    return *this;
  }
  TransformerOptions& activation(const char* name) { return activation(std::string(name)); }
  EMBER_ARG(int64_t, d_model) = 512;
  EMBER_ARG(int64_t, nhead) = 8;
  EMBER_ARG(int64_t, num_encoder_layers) = 6;
  EMBER_ARG(int64_t, num_decoder_layers) = 6;
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(activation_t, activation) = enumtype::kReLU{};
  /// Used instead of building an encoder / decoder (then the other options do not shape it).
  EMBER_ARG(std::shared_ptr<TransformerEncoderImpl>, custom_encoder) = nullptr;
  EMBER_ARG(std::shared_ptr<TransformerDecoderImpl>, custom_decoder) = nullptr;
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(bool, norm_first) = false;
  EMBER_ARG(bool, bias) = true;
};

}  // namespace nn
}  // namespace ember
