// Pointwise activation layers (ReLU, LeakyReLU, ELU, GELU, SiLU, Sigmoid, Tanh), each a thin
// module over its F:: function, printing as Python's repr ("LeakyReLU(negative_slope=0.01)").
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

}  // namespace nn
}  // namespace ember
