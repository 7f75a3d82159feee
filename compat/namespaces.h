// libtorch's three namespaces as names of ember's one: included by every drop-in header in
// compat/include (<torch/...>, <ATen/...>, <c10/...>), installed as <ember/compat/namespaces.h>.
//
// Note [torch, at and c10 are aliases]
// `torch`, `at` and `c10` are namespace aliases of `ember`, so torch::Tensor, at::Tensor and
// ember::Tensor are one type, and every libtorch spelling that ember has (c10::Device,
// at::kFloat, torch::nn::Linear, c10::cuda::CUDAStream) resolves without a list of
// using-declarations to keep in step. A user's own `namespace torch = ember;` re-declares the
// same alias, which C++ allows ([namespace.alias]). What an alias cannot do: a user may not
// open `namespace torch { ... }` to add names (it is an alias, not a namespace); write
// `namespace ember { ... }` instead. Names libtorch spells differently from ember are added
// to namespace ember by the drop-in header that libtorch declares them in (c10::str in
// <c10/util/StringUtil.h>, c10::toString in <c10/core/ScalarType.h>, at::parallel_for in
// <ATen/Parallel.h>, torch::jit in <torch/script.h>).
#pragma once

namespace ember {}

namespace torch = ember;
namespace at = ember;
namespace c10 = ember;
