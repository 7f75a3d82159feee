// <torch/linalg.h> for ember: torch::linalg (det, slogdet, inv, solve, cholesky, eigh, eigvalsh,
// matrix_power, vector_norm, matrix_norm) is ember::linalg (core/ops/linalg_matrix.h).
#pragma once

#include <torch/all.h>
