// PyTorch's type promotion: the result dtype of an op on several tensors and scalars.
// Categories rank bool < integer < floating; a higher category wins, and within a category
// dimensioned tensors beat 0-dim tensors, which beat Python/C++ scalars.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

/// The promoted type of two dtypes (torch.promote_types).
ScalarType promote_types(ScalarType a, ScalarType b);
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
ScalarType result_type(const Scalar& a, const Tensor& b);
ScalarType result_type(const TensorList& tensors);
/// The dtype a float-producing op (exp, sqrt, mean...) gives: integers become the default float.
ScalarType promote_to_float(ScalarType t);
/// Whether a value of type `from` may be written into `to` by an in-place op
/// (torch.can_cast): no float -> integer, no non-bool -> bool.
bool can_cast(ScalarType from, ScalarType to);
/// Raises "result type Float can't be cast to the desired output type Long" when needed.
void check_can_cast(ScalarType result, ScalarType out);

}  // namespace ember
