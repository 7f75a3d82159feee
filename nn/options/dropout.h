// Options of the dropout layers and functions, as libtorch spells them: DropoutOptions(0.2)
// .inplace(true) for modules (the module's training flag decides), F::DropoutFuncOptions()
// .p(0.5).training(true) for functions.
#pragma once

#include "ember/core/arg.h"

namespace ember {
namespace nn {

/// Dropout(p).inplace(false); also Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout.
struct DropoutOptions {
  /*implicit*/ DropoutOptions(double p = 0.5) : p_(p) {}
  /// Probability of an element (or channel) being zeroed.
  EMBER_ARG(double, p);
  /// Whether to overwrite the input.
  EMBER_ARG(bool, inplace) = false;
};

using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace functional {

struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;
};

using Dropout1dFuncOptions = DropoutFuncOptions;
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;

/// As libtorch: alpha dropout's functional form defaults to training(false).
struct AlphaDropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};

struct FeatureAlphaDropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};

}  // namespace functional
}  // namespace nn
}  // namespace ember
