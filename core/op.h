// Op and run_op: how every op meets devices and autograd.
// An op is one struct holding its whole contract — forward per device and backward — so
// grepping its name shows everything (DESIGN.md, "One op, end to end"). Public functions
// check their inputs, work out output shapes and dtypes, and call run_op, which picks the
// device kernel and, when grad mode is on and an input requires grad, records a Node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/autograd/saved_tensor.h"
#include "ember/core/profiler_hook.h"
#include "ember/core/tensor.h"

namespace ember {

using autograd::SavedTensors;

/// What an op's backward needs kept alive.
enum class Save { kNothing, kInputs, kOutputs, kBoth };

class Op {
 public:
  virtual ~Op() = default;
  /// PyTorch's op name ("mul"); the Node is named "MulBackward0" from it.
  virtual const char* name() const = 0;
  /// The recorded Node's name; override only where PyTorch's breaks the pattern
  /// ("CopyBackwards").
  virtual std::string node_name() const;
  /// Forward on CPU. Outputs arrive allocated with their final shape and dtype
  /// (possibly strided, for in-place ops on views).
  virtual void cpu(const TensorList& in, TensorList& out) const = 0;
  /// Forward on CUDA; by default the op has no CUDA kernel.
  virtual void cuda(const TensorList& in, TensorList& out) const;
  /// Gradients of the inputs given gradients of the outputs (an undefined gradient for an
  /// output that received none is replaced by zeros before this is called). Built from
  /// public ops, so double backward comes free. Return undefined for inputs that need none.
  virtual TensorList backward(const SavedTensors& saved, const TensorList& grads) const;
  virtual Save saves() const { return Save::kInputs; }
  /// Whether out = f(in) may be computed with out aliasing in[0] (elementwise ops).
  virtual bool elementwise() const { return false; }
};

/// A one-input, one-output op.
class UnaryOp : public Op {
 public:
  virtual void cpu(const Tensor& x, Tensor& out) const = 0;
  virtual void cuda(const Tensor& x, Tensor& out) const;
  virtual Tensor backward(const SavedTensors& saved, const Tensor& grad) const;
  void cpu(const TensorList& in, TensorList& out) const final { cpu(in[0], out[0]); }
  void cuda(const TensorList& in, TensorList& out) const final { cuda(in[0], out[0]); }
  TensorList backward(const SavedTensors& s, const TensorList& g) const final { return {backward(s, g[0])}; }
};

/// Shape and dtype of one output run_op allocates.
struct OutSpec {
  DimVector sizes;
  ScalarType dtype;
};

namespace detail {
/// An empty TensorList whose buffer is reused from a small per-thread pool, so run_op's
/// output list costs no heap allocation per op. It is cleared (its tensors released) when
/// it goes back; ops nested inside a kernel take their own.
struct PooledList {
  PooledList();
  ~PooledList();
  PooledList(const PooledList&) = delete;
  PooledList& operator=(const PooledList&) = delete;
  TensorList list;
};
Device check_same_device(const TensorList& inputs, const char* op_name);
TensorList allocate_outputs(const std::vector<OutSpec>& specs, Device device);
Tensor allocate_output(const OutSpec& spec, Device device);
void run_forward(const Op& op, Device device, const TensorList& in, TensorList& out);
bool should_record(const TensorList& inputs);
void record(std::shared_ptr<Op> op, const TensorList& inputs, TensorList& outputs);
/// Marks `view` as sharing base's storage and, when `op` is given, records its node.
void record_view(std::shared_ptr<Op> op, const Tensor& base, Tensor& view);
/// Raises PyTorch's errors for writing into `self`: memory overlap, leaves, views of leaves.
void check_inplace(const Tensor& self, const char* op_name);
/// Copies an out-of-place result into self and makes self take its place in the graph.
Tensor& commit_inplace(Tensor& self, const Tensor& result);
/// Writes v into every element of t: no autograd, no version bump (for fresh tensors).
void fill_values(Tensor& t, const Scalar& v);
/// Copies src into dst (casting, broadcasting) with no autograd, and bumps dst's version.
void copy_into(Tensor& dst, const Tensor& src);
/// Makes self take result's place in the autograd graph after an in-place write.
void rebase_history(Tensor& self, const Tensor& result);
bool can_compute_in_place(const Tensor& self, const TensorList& inputs, const Op& op);
}  // namespace detail

/// Runs `op` on `inputs` producing outputs shaped by `specs`, recording autograd history.
template <class OpT>
TensorList run_op(OpT op, const TensorList& inputs, const std::vector<OutSpec>& specs) {
  profiler::OpRange range(op.name(), inputs);  // records the op while a profile runs
  Device device = detail::check_same_device(inputs, op.name());
  TensorList out = detail::allocate_outputs(specs, device);
  detail::run_forward(op, device, inputs, out);
  if (detail::should_record(inputs)) detail::record(std::make_shared<OpT>(std::move(op)), inputs, out);
  return out;
}

/// The one-output form (most ops): no vector of specs, and the Op is moved to the heap only
/// when a Node is recorded.
template <class OpT>
Tensor run_op(OpT op, const TensorList& inputs, const OutSpec& spec) {
  profiler::OpRange range(op.name(), inputs);
  Device device = detail::check_same_device(inputs, op.name());
  detail::PooledList pooled;
  TensorList& out = pooled.list;
  out.push_back(detail::allocate_output(spec, device));
  detail::run_forward(op, device, inputs, out);
  if (detail::should_record(inputs)) detail::record(std::make_shared<OpT>(std::move(op)), inputs, out);
  return std::move(out[0]);
}

/// Runs an op that writes into `self` (add_, clamp_, ...): inputs[0] must be self.
/// Without recording and with compatible memory the kernel writes into self directly;
/// otherwise the op runs out of place and the result is copied in, and self's history is
/// rebased onto the new node (Note [In-place ops] in core/op.cpp).
template <class OpT>
Tensor& run_inplace_op(OpT op, Tensor& self, const TensorList& inputs) {
  profiler::OpRange range(op.name(), inputs, profiler::detail::OpKind::kInplace);
  detail::check_inplace(self, op.name());
  if (!detail::should_record(inputs) && detail::can_compute_in_place(self, inputs, op)) {
    Device device = detail::check_same_device(inputs, op.name());
    TensorList out{self};
    detail::run_forward(op, device, inputs, out);
    self.unsafeGetTensorImpl()->storage()->bump_version();
    return self;
  }
  TensorList in = inputs;
  // The op may save its first input for backward; self is about to change, so give it a copy.
  if (detail::should_record(inputs) && (op.saves() == Save::kInputs || op.saves() == Save::kBoth))
    in[0] = self.clone();
  Tensor result = run_op(std::move(op), in, OutSpec{DimVector(self.sizes()), self.dtype()});
  return detail::commit_inplace(self, result);
}

/// A view op: `view` was built sharing base's storage; backward as any op. Every view
/// remembers its base, recorded or not, so a later in-place write through it reaches the
/// base's history (Note [View history] in autograd/view_history.h).
template <class OpT>
Tensor run_view_op(OpT op, const Tensor& base, Tensor view) {
  profiler::OpRange range(op.name(), base, profiler::detail::OpKind::kView);
  std::shared_ptr<Op> node_op;
  if (detail::should_record({base})) node_op = std::make_shared<OpT>(std::move(op));
  detail::record_view(std::move(node_op), base, view);
  return view;
}

}  // namespace ember
