// Random tensors, seeded by manual_seed (core/generator.h): rand, randn, randint, randperm,
// bernoulli, normal and the *_like forms (random.cpp; Philox draws in core/philox.h).
#pragma once

#include "ember/core/tensor.h"

namespace ember {

Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = kLong);
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options = kLong);
Tensor randperm(int64_t n, TensorOptions options = kLong);
/// Draws 0/1 with probability p per element (p a tensor of probabilities, or a number).
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& self, double p);
Tensor normal(double mean, double std, IntArrayRef size, TensorOptions options = {});
Tensor rand_like(const Tensor& t, TensorOptions options = {});
Tensor randn_like(const Tensor& t, TensorOptions options = {});
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, TensorOptions options = {});

}  // namespace ember
