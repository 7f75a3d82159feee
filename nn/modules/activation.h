// Activation layers (libtorch's torch/nn/modules/activation.h, less the Softmax family of
// nn/modules/softmax.h), each a thin module over its F:: function, printing as Python's repr
// ("LeakyReLU(negative_slope=0.01)"). PReLU is the one with a parameter; RReLU draws random
// slopes while training.
#pragma once

#include <ostream>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/activation.h"

namespace ember {
namespace nn {

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  ReLUOptions options;
};
EMBER_MODULE(ReLU);

class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  LeakyReLUOptions options;
};
EMBER_MODULE(LeakyReLU);

class ELUImpl : public Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  ELUOptions options;
};
EMBER_MODULE(ELU);

class GELUImpl : public Cloneable<GELUImpl> {
 public:
  explicit GELUImpl(const GELUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  GELUOptions options;
};
EMBER_MODULE(GELU);

class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  SiLUImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(SiLU);

class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  SigmoidImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Sigmoid);

class TanhImpl : public Cloneable<TanhImpl> {
 public:
  TanhImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Tanh);

/// scale * ELU(x) with SELU's fixed alpha and scale.
class SELUImpl : public Cloneable<SELUImpl> {
 public:
  explicit SELUImpl(const SELUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  SELUOptions options;
};
EMBER_MODULE(SELU);

/// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
class CELUImpl : public Cloneable<CELUImpl> {
 public:
  explicit CELUImpl(const CELUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  CELUOptions options;
};
EMBER_MODULE(CELU);

/// a * sigmoid(b), a and b the halves of the input along options.dim.
class GLUImpl : public Cloneable<GLUImpl> {
 public:
  explicit GLUImpl(const GLUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  GLUOptions options;
};
EMBER_MODULE(GLU);

/// 0 where |x| <= lambda, else x.
class HardshrinkImpl : public Cloneable<HardshrinkImpl> {
 public:
  explicit HardshrinkImpl(const HardshrinkOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  HardshrinkOptions options;
};
EMBER_MODULE(Hardshrink);

/// min(max(x, min_val), max_val); max_val must exceed min_val.
class HardtanhImpl : public Cloneable<HardtanhImpl> {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  HardtanhOptions options;
};
EMBER_MODULE(Hardtanh);

/// log(sigmoid(x)).
class LogSigmoidImpl : public Cloneable<LogSigmoidImpl> {
 public:
  LogSigmoidImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(LogSigmoid);

/// x tanh(softplus(x)).
class MishImpl : public Cloneable<MishImpl> {
 public:
  MishImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Mish);

/// max(0, x) + weight * min(0, x) with a learnt `weight` of num_parameters slopes (1, or one per
/// channel of dim 1), each initialised to options.init.
class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  void reset() override;
  /// Refills weight with options.init.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  PReLUOptions options;
  Tensor weight;
};
EMBER_MODULE(PReLU);

/// min(max(x, 0), 6).
class ReLU6Impl : public Cloneable<ReLU6Impl> {
 public:
  explicit ReLU6Impl(const ReLU6Options& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  ReLU6Options options;
};
EMBER_MODULE(ReLU6);

/// leaky_relu with a slope drawn from U(lower, upper) per element while training, and with
/// (lower + upper) / 2 in eval mode.
class RReLUImpl : public Cloneable<RReLUImpl> {
 public:
  explicit RReLUImpl(const RReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  RReLUOptions options;
};
EMBER_MODULE(RReLU);

/// log(1 + exp(beta x)) / beta, linear where beta x > threshold.
class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  SoftplusOptions options;
};
EMBER_MODULE(Softplus);

/// x -+ lambda outside [-lambda, lambda], 0 inside.
class SoftshrinkImpl : public Cloneable<SoftshrinkImpl> {
 public:
  explicit SoftshrinkImpl(const SoftshrinkOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  SoftshrinkOptions options;
};
EMBER_MODULE(Softshrink);

/// x / (1 + |x|).
class SoftsignImpl : public Cloneable<SoftsignImpl> {
 public:
  SoftsignImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Softsign);

/// x - tanh(x).
class TanhshrinkImpl : public Cloneable<TanhshrinkImpl> {
 public:
  TanhshrinkImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Tanhshrink);

/// value where x <= threshold, else x.
class ThresholdImpl : public Cloneable<ThresholdImpl> {
 public:
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);
  ThresholdOptions options;
};
EMBER_MODULE(Threshold);

}  // namespace nn
}  // namespace ember
