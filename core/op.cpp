// run_op's helpers: device checks, output allocation, kernel dispatch, and recording an
// autograd Node for an op (OpNode), including in-place ops and in-place ops on views.
#include "ember/core/op.h"

#include <cctype>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/reduce.h"

namespace ember {

void Op::cuda(const TensorList&, TensorList&) const {
  detail::throw_error(detail::str_cat("\"", name(), "\" is not implemented for CUDA tensors"));
}

TensorList Op::backward(const SavedTensors&, const TensorList&) const {
  detail::throw_error(detail::str_cat("the derivative for '", name(), "' is not implemented."));
}

void UnaryOp::cuda(const Tensor&, Tensor&) const {
  detail::throw_error(detail::str_cat("\"", name(), "\" is not implemented for CUDA tensors"));
}

Tensor UnaryOp::backward(const SavedTensors&, const Tensor&) const {
  detail::throw_error(detail::str_cat("the derivative for '", name(), "' is not implemented."));
}

namespace {

/// "mul" -> "MulBackward0", "leaky_relu" -> "LeakyReluBackward0" (PyTorch's node names).
std::string backward_name(const char* op) {
  std::string out;
  bool up = true;
  for (const char* c = op; *c; ++c) {
    if (*c == '_') { up = true; continue; }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
    up = false;
  }
  return out + "Backward0";
}

/// The Node recorded for one run of an Op.
class OpNode final : public autograd::Node {
 public:
  OpNode(std::shared_ptr<Op> op) : op_(std::move(op)) {}

  std::string name() const override { return backward_name(op_->name()); }

  TensorList apply(TensorList&& grads) override {
    EMBER_CHECK(!released_,
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.");
    // An output that received no gradient contributes zeros (only multi-output ops see this).
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined())
        grads[i] = zeros(input_metadata_[i].sizes,
                         TensorOptions().dtype(input_metadata_[i].dtype).device(input_metadata_[i].device));
    saved_.owner_ = weak_from_this();
    return op_->backward(saved_, grads);
  }

  void release_variables() override {
    for (auto& s : saved_.inputs) s.reset();
    for (auto& s : saved_.outputs) s.reset();
    released_ = saved_.inputs.size() + saved_.outputs.size() > 0;
  }

  SavedTensors& saved() { return saved_; }

 private:
  std::shared_ptr<Op> op_;
  SavedTensors saved_;
  bool released_ = false;
};

/// Note [In-place on a view]
/// Writing in place into a view changes its base too, so the base's history must learn of
/// it. CopySlices is the base's new grad_fn: the gradient of the base splits into the part
/// outside the view (flows to the base's old history) and the part inside the view (flows
/// to the node that computed the new values). Views here are described by their geometry
/// (sizes, strides, offset) relative to a contiguous base, as as_strided would make them.
struct ViewGeometry {
  DimVector sizes, strides;
  int64_t offset;
};

class CopySlices final : public autograd::Node {
 public:
  CopySlices(ViewGeometry g) : g_(std::move(g)) {}
  std::string name() const override { return "CopySlices"; }
  TensorList apply(TensorList&& grads) override {
    const Tensor& grad = grads[0];
    Tensor base_grad = grad.clone();
    Tensor region = base_grad.as_strided(g_.sizes, g_.strides, g_.offset);
    Tensor view_grad = region.clone();
    region.zero_();
    return {base_grad, view_grad};
  }

 private:
  ViewGeometry g_;
};

/// grad_fn of a view after its base was rebased: picks the view's region of the base grad.
class AsStridedBackward final : public autograd::Node {
 public:
  AsStridedBackward(ViewGeometry g, DimVector base_sizes)
      : g_(std::move(g)), base_sizes_(std::move(base_sizes)) {}
  std::string name() const override { return "AsStridedBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Tensor base_grad = zeros(base_sizes_, grads[0].options());
    base_grad.as_strided(g_.sizes, g_.strides, g_.offset).copy_(grads[0]);
    return {base_grad};
  }

 private:
  ViewGeometry g_;
  DimVector base_sizes_;
};

autograd::InputMetadata metadata_of(const Tensor& t) {
  return {DimVector(t.sizes()), t.dtype(), t.device()};
}

bool differentiable_dtype(ScalarType t) { return is_floating_point(t); }

}  // namespace

namespace detail {

Device check_same_device(const TensorList& inputs, const char* op_name) {
  (void)op_name;
  Device d = kCPU;
  bool first = true;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (first) { d = t.device(); first = false; continue; }
    EMBER_CHECK(t.device() == d,
                "Expected all tensors to be on the same device, but found at least two devices, ",
                d, " and ", t.device(), "!");
  }
  return d;
}

TensorList allocate_outputs(const std::vector<OutSpec>& specs, Device device) {
  TensorList out;
  out.reserve(specs.size());
  for (const OutSpec& s : specs) out.push_back(empty(s.sizes, TensorOptions().dtype(s.dtype).device(device)));
  return out;
}

void run_forward(const Op& op, Device device, const TensorList& in, TensorList& out) {
  if (device.is_cuda()) op.cuda(in, out);
  else op.cpu(in, out);
}

bool should_record(const TensorList& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

void record(std::shared_ptr<Op> op, const TensorList& inputs, TensorList& outputs) {
  Save what = op->saves();
  auto node = std::make_shared<OpNode>(op);
  SavedTensors& s = node->saved();
  s.op_name_ = op->name();
  for (const Tensor& in : inputs) {
    s.meta_.push_back(in.defined() ? metadata_of(in) : autograd::InputMetadata{{}, kFloat, kCPU});
    s.needs_grad_.push_back(in.defined() && in.requires_grad());
    node->mutable_next_edges().push_back(in.defined() ? autograd::gradient_edge(in) : autograd::Edge{});
    if (what == Save::kInputs || what == Save::kBoth) s.inputs.emplace_back(in, false);
  }
  for (uint32_t i = 0; i < outputs.size(); ++i) {
    node->input_metadata().push_back(metadata_of(outputs[i]));
    if (differentiable_dtype(outputs[i].dtype())) autograd::set_history(outputs[i], node, i);
  }
  // Outputs are saved after set_history so that they remember their grad_fn's output_nr.
  if (what == Save::kOutputs || what == Save::kBoth)
    for (const Tensor& o : outputs) s.outputs.emplace_back(o, true);
}

void record_view(std::shared_ptr<Op> op, const Tensor& base, Tensor& view) {
  TensorImpl* b = base.unsafeGetTensorImpl();
  AutogradMeta& vm = view.unsafeGetTensorImpl()->ensure_autograd_meta();
  AutogradMeta* bm = b->autograd_meta();
  vm.view_base = (bm && bm->view_base.defined()) ? bm->view_base : base;
  if (op) {
    TensorList outs{view};
    record(std::move(op), {base}, outs);
  }
}

void check_inplace(const Tensor& self, const char* op_name) {
  (void)op_name;
  AutogradMeta* m = self.unsafeGetTensorImpl()->autograd_meta();
  if (!GradMode::is_enabled() || !m) return;
  EMBER_CHECK(!(m->requires_grad && !m->grad_fn && !m->view_base.defined()),
              "a leaf Variable that requires grad is being used in an in-place operation.");
  if (m->view_base.defined()) {
    const Tensor& base = m->view_base;
    EMBER_CHECK(!(base.requires_grad() && base.is_leaf()),
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

bool can_compute_in_place(const Tensor& self, const TensorList& inputs, const Op& op) {
  if (!op.elementwise()) return false;
  for (const Tensor& t : inputs) {
    if (!t.defined() || t.is_same(self)) continue;
    if (t.dtype() != self.dtype()) return false;
    if (t.is_alias_of(self) && !(t.sizes() == self.sizes() && t.strides() == self.strides() &&
                                 t.storage_offset() == self.storage_offset()))
      return false;  // partial overlap: compute out of place, then copy
  }
  for (int64_t i = 0; i < self.dim(); ++i)
    if (self.strides()[i] == 0 && self.sizes()[i] > 1) return false;
  return true;
}

/// Note [In-place ops]
/// With autograd recording, an in-place op runs out of place, its result is copied into
/// self, and self takes the result's place in the graph (PyTorch's "rebase history"). If
/// self is a view, its base is rebased instead through CopySlices (Note [In-place on a view]).
Tensor& commit_inplace(Tensor& self, const Tensor& result) {
  copy_into(self, result);
  rebase_history(self, result);
  return self;
}

void rebase_history(Tensor& self, const Tensor& result) {
  if (!result.requires_grad() || !result.grad_fn()) return;
  AutogradMeta& m = self.unsafeGetTensorImpl()->ensure_autograd_meta();
  if (!m.view_base.defined()) {
    autograd::set_history(self, result.grad_fn(), result.output_nr());
    return;
  }
  Tensor base = m.view_base;
  EMBER_CHECK(base.is_contiguous(), "in-place operation on a view of a non-contiguous tensor "
              "that requires grad is not supported");
  ViewGeometry g{DimVector(self.sizes()), DimVector(self.strides()),
                 self.storage_offset() - base.storage_offset()};
  auto copy_slices = std::make_shared<CopySlices>(g);
  copy_slices->mutable_next_edges() = {autograd::gradient_edge(base), autograd::gradient_edge(result)};
  copy_slices->input_metadata().push_back(metadata_of(base));
  autograd::set_history(base, copy_slices, 0);
  auto view_fn = std::make_shared<AsStridedBackward>(g, DimVector(base.sizes()));
  view_fn->mutable_next_edges() = {autograd::gradient_edge(base)};
  view_fn->input_metadata().push_back(metadata_of(self));
  autograd::set_history(self, view_fn, 0);
}

}  // namespace detail
}  // namespace ember
