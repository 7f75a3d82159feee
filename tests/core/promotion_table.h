// PyTorch's promote_types table for the ten dtypes, in ScalarType order; shared by the
// promote_types test (test_dtype.cpp) and the op-level promotion tests (test_type_promotion.cpp).
#pragma once

#include "ember/core/dtype.h"

namespace ember::test {

// Generated with:
// python3 -c "import torch; ds=[torch.bool,torch.uint8,torch.int8,torch.int16,torch.int32,torch.int64,
//   torch.float16,torch.bfloat16,torch.float32,torch.float64];
//   [print([torch.promote_types(a,b) for b in ds]) for a in ds]"
constexpr ScalarType kExpected[10][10] = {
    {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},
    {kByte, kByte, kShort, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},
    {kChar, kShort, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},
    {kShort, kShort, kShort, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},
    {kInt, kInt, kInt, kInt, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble},
    {kLong, kLong, kLong, kLong, kLong, kLong, kHalf, kBFloat16, kFloat, kDouble},
    {kHalf, kHalf, kHalf, kHalf, kHalf, kHalf, kHalf, kFloat, kFloat, kDouble},
    {kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kFloat, kBFloat16, kFloat, kDouble},
    {kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kFloat, kDouble},
    {kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble},
};

}  // namespace ember::test
