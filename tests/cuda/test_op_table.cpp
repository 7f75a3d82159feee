// CPU-vs-CUDA parity of every CUDA row of the op table (tests/op_table.h): the forward in each
// dtype the row accepts, the gradients of the differentiable rows in float32 and float64, and
// the same error on both devices for the dtypes it refuses. The CPU is the reference (its own
// sweeps are in tests/core/test_op_table.cpp).
#include "cuda/parity.h"
#include "op_table.h"

using namespace ember;
using namespace ember::test;

namespace {

TensorList row_inputs(const OpRow& row, ScalarType t) {
  TensorList in;
  for (int i = 0; i < row.arity; ++i) in.push_back(make_input({5, 7}, t, row.in[i].lo, row.in[i].hi));
  return in;
}

}  // namespace

TEST_CASE("cuda op table: every CUDA row agrees with the CPU in every dtype it accepts") {
  for (const OpRow& row : op_table()) {
    if (!row.cuda) continue;
    for (ScalarType t : kAllTypes) {
      INFO(std::string(row.name) << " on " << std::string(dtype_name(t)));
      if (accepts(row.dtypes, t)) check_parity(row.fn, row_inputs(row, t));
      else check_error_parity(row.fn, row_inputs(row, t));
    }
  }
}

TEST_CASE("cuda op table: gradients of every differentiable CUDA row agree with the CPU") {
  for (const OpRow& row : op_table()) {
    if (!row.cuda || !row.differentiable) continue;
    for (ScalarType t : {kFloat, kDouble}) {
      INFO(std::string(row.name) << " on " << std::string(dtype_name(t)));
      check_grad_parity(row.fn, row_inputs(row, t));
    }
  }
}
