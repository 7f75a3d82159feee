// Linear-family layers: Identity, Linear, Bilinear, Flatten, Unflatten, LazyLinear
// (libtorch's torch/nn/modules/linear.h), with PyTorch's default initialisation and
// Python-style printing.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/nn/cloneable.h"
#include "ember/nn/functional/linear.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/options/linear.h"

namespace ember {
namespace nn {

/// Returns its input unchanged (a placeholder layer).
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  IdentityImpl() = default;
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Identity);

/// y = x W^T + b with W [out, in] ~ kaiming_uniform(a=sqrt(5)), b ~ U(±1/sqrt(in)).
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset() override;
  /// Re-draws weight and bias with PyTorch's default initialisation.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LinearOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(Linear);

/// y = x1^T W x2 + b with W [out, in1, in2]; W and b ~ U(±1/sqrt(in1)).
class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : BilinearImpl(BilinearOptions(in1_features, in2_features, out_features)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);

  BilinearOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(Bilinear);

/// Flattens dims start_dim..end_dim into one.
class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {});
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  FlattenOptions options;
};
EMBER_MODULE(Flatten);

/// Splits dim `dim` into the dims `sizes` (one may be -1).
class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(const UnflattenOptions& options);
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  UnflattenOptions options;
};
EMBER_MODULE(Unflatten);

/// A Linear whose in_features is taken from the first input: weight and bias stay undefined
/// (registered under their names) until the first forward creates and initialises them.
class LazyLinearImpl : public Cloneable<LazyLinearImpl> {
 public:
  explicit LazyLinearImpl(const LazyLinearOptions& options);
  void reset() override;
  void reset_parameters();
  /// Whether weight is still waiting for the first input.
  bool has_uninitialized_params() const { return !weight.defined(); }
  /// Prints "LazyLinear(in_features=0, ...)" before and "Linear(...)" after initialisation,
  /// as PyTorch's module turns into a Linear.
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LazyLinearOptions options;
  int64_t in_features = 0;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(LazyLinear);

}  // namespace nn
}  // namespace ember
