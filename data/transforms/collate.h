// Collation: a batch transform from a vector of examples to one value, spelled as libtorch's
// transforms::Collation<T, BatchType> (the example type first); Collate makes one from a
// function.
#pragma once

#include <vector>

#include "ember/data/transforms/base.h"
#include "ember/data/transforms/lambda.h"

namespace ember::data::transforms {

/// A BatchTransform from a batch of T (by default std::vector<T>) to one T.
template <class T, class BatchType = std::vector<T>>
using Collation = BatchTransform<BatchType, T>;

/// A Collation from a function BatchType -> T.
template <class T, class BatchType = std::vector<T>>
using Collate = BatchLambda<BatchType, T>;

}  // namespace ember::data::transforms
