// View and in-place bookkeeping for autograd (Note [View history] in view_history.h):
// CopySlices, AsStridedBackward0, rebase_history and the regeneration of stale view grad_fns.
#include "ember/autograd/view_history.h"

#include <algorithm>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/core/ops/shape.h"

namespace ember::autograd {
namespace {

/// Where a tensor's elements sit in its storage, relative to some origin offset.
struct Geometry {
  DimVector sizes, strides;
  int64_t offset = 0;
};

Geometry geometry_of(const Tensor& t, int64_t origin) {
  return {DimVector(t.sizes()), DimVector(t.strides()), t.storage_offset() - origin};
}

/// One past the last storage element the geometry can address (offset if it is empty).
int64_t end_of(const Geometry& g) {
  int64_t last = g.offset;
  for (size_t d = 0; d < g.sizes.size(); ++d) {
    if (g.sizes[d] == 0) return g.offset;
    last += (g.sizes[d] - 1) * g.strides[d];
  }
  return last + 1;
}

/// Whether two index tuples of g may address one element (a sufficient test: dims sorted by
/// stride must each step over everything the smaller dims reach).
bool may_overlap(const Geometry& g) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims that vary
  for (size_t d = 0; d < g.sizes.size(); ++d)
    if (g.sizes[d] > 1) dims.emplace_back(g.strides[d], g.sizes[d]);
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;
  for (auto [stride, size] : dims) {
    if (stride <= reach) return true;
    reach += (size - 1) * stride;
  }
  return false;
}

/// An expanded view reads one element many times, so that element's gradient is the sum:
/// sum grad over the stride-0 dims and shrink them to size 1.
Tensor sum_broadcast_dims(const Tensor& grad, Geometry& view) {
  DimVector dims;
  for (size_t d = 0; d < view.sizes.size(); ++d)
    if (view.strides[d] == 0 && view.sizes[d] > 1) {
      dims.push_back(static_cast<int64_t>(d));
      view.sizes[d] = 1;
    }
  return dims.empty() ? grad : grad.sum(dims, /*keepdim=*/true);
}

/// A zero buffer that holds both geometries; shifts their offsets to index into it.
Tensor zero_buffer(Geometry& base, Geometry& view, const TensorOptions& options) {
  int64_t lo = std::min<int64_t>(0, view.offset);
  base.offset -= lo;
  view.offset -= lo;
  return zeros({std::max(end_of(base), end_of(view))}, options);
}

Tensor strided(const Tensor& buffer, const Geometry& g) { return buffer.as_strided(g.sizes, g.strides, g.offset); }

InputMetadata metadata_of(const Tensor& t) { return {DimVector(t.sizes()), t.dtype(), t.device()}; }

/// Gradient of a view read out of its base: zeros of the base's layout with the view's
/// region holding the view's gradient. Built from copy_ and views, so it is differentiable.
class AsStridedBackward final : public Node {
 public:
  AsStridedBackward(Geometry base, Geometry view) : base_(std::move(base)), view_(std::move(view)) {}
  std::string name() const override { return "AsStridedBackward0"; }
  TensorList apply(TensorList&& grads) override {
    Geometry base = base_, view = view_;
    Tensor grad = sum_broadcast_dims(grads[0], view);
    EMBER_CHECK(!may_overlap(view), "AsStridedBackward0: the gradient of a view whose elements overlap in "
                "memory (other than by broadcasting) cannot be computed");
    Tensor buffer = zero_buffer(base, view, grad.options());
    strided(buffer, view).copy_(grad);
    return {strided(buffer, base)};
  }

 private:
  Geometry base_, view_;
};

/// The base's grad_fn after an in-place op on one of its views. Input: the gradient of the
/// base. Outputs: [0] that gradient with the view's region zeroed (the old values there were
/// overwritten), to the base's previous history; [1] the region, to the node that computed
/// the values written into the view.
class CopySlices final : public Node {
 public:
  CopySlices(Geometry base, Geometry view) : base_(std::move(base)), view_(std::move(view)) {}
  std::string name() const override { return "CopySlices"; }
  TensorList apply(TensorList&& grads) override {
    Geometry base = base_, view = view_;
    Tensor buffer = zero_buffer(base, view, grads[0].options());
    Tensor base_grad = strided(buffer, base);
    base_grad.copy_(grads[0]);
    Tensor region = strided(buffer, view);
    Tensor view_grad = region.clone();
    region.zero_();
    return {base_grad, view_grad};
  }

 private:
  Geometry base_, view_;
};

std::shared_ptr<Node> as_strided_node(const Tensor& view, const Tensor& base) {
  int64_t origin = base.storage_offset();
  auto fn = std::make_shared<AsStridedBackward>(geometry_of(base, origin), geometry_of(view, origin));
  fn->mutable_next_edges().push_back(gradient_edge(base));
  fn->input_metadata().push_back(metadata_of(view));
  return fn;
}

/// retain_grad() follows a tensor to its new grad_fn (hooks stay with the old one, as in
/// PyTorch: they observe the gradient of the value they were registered on).
void move_retained(AutogradMeta& m, const std::shared_ptr<Node>& old_fn) {
  if (!m.retained_grad || old_fn == m.grad_fn) return;
  if (old_fn) old_fn->remove_retained(m.retained_grad);
  if (m.grad_fn) m.grad_fn->add_retained(m.output_nr, m.retained_grad);
}

void set_history_keeping_retained(Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = t.unsafeGetTensorImpl()->ensure_autograd_meta();
  std::shared_ptr<Node> old = m.grad_fn;
  set_history(t, fn, output_nr);
  move_retained(m, old);
}

}  // namespace

void set_view_base(Tensor& view, const Tensor& base) {
  AutogradMeta& vm = view.unsafeGetTensorImpl()->ensure_autograd_meta();
  AutogradMeta* bm = base.unsafeGetTensorImpl()->autograd_meta();
  vm.view_base = (bm && bm->view_base.defined()) ? bm->view_base : base;
  vm.attr_version = view._version();
}

void check_inplace(const Tensor& self) {
  AutogradMeta* m = self.unsafeGetTensorImpl()->autograd_meta();
  if (!GradMode::is_enabled() || !m) return;
  if (m->view_base.defined()) {
    const Tensor& base = m->view_base;
    EMBER_CHECK(!((self.requires_grad() || base.requires_grad()) && base.is_leaf()),
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  EMBER_CHECK(!(self.requires_grad() && self.is_leaf()),
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

void rebase_history(Tensor& self, Edge edge) {
  AutogradMeta& m = self.unsafeGetTensorImpl()->ensure_autograd_meta();
  if (m.view_base.defined()) {
    Tensor base = m.view_base;
    int64_t origin = base.storage_offset();
    Geometry base_geometry = geometry_of(base, origin);
    EMBER_CHECK(!may_overlap(base_geometry), "in-place operation on a view of a tensor whose elements "
                "overlap in memory; clone() the base first");
    auto copy_slices = std::make_shared<CopySlices>(base_geometry, geometry_of(self, origin));
    copy_slices->mutable_next_edges() = {gradient_edge(base), std::move(edge)};
    copy_slices->input_metadata().push_back(metadata_of(base));
    set_history_keeping_retained(base, copy_slices, 0);
    edge = {as_strided_node(self, base), 0};
    m.attr_version = self._version();
  }
  set_history_keeping_retained(self, edge.function, edge.input_nr);
}

void refresh_view_grad_fn(const Tensor& view) {
  AutogradMeta* m = view.unsafeGetTensorImpl()->autograd_meta();
  if (!m || !m->view_base.defined() || m->attr_version == view._version()) return;
  const Tensor& base = m->view_base;
  if (!m->grad_fn && !base.requires_grad()) return;  // nothing to differentiate through
  std::shared_ptr<Node> old = m->grad_fn;
  m->grad_fn = as_strided_node(view, base);
  m->output_nr = 0;
  m->attr_version = view._version();
  move_retained(*m, old);
}

}  // namespace ember::autograd
