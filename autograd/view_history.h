// In-place ops and views in the autograd graph: the checks an in-place op must pass, how a
// tensor written in place becomes the output of a new node (rebase_history), and how views
// of a tensor changed in place get a grad_fn that reads the new history.
//
// Note [View history]
// A view shares its base's storage, so writing into one changes the other. Every view
// remembers its root base (AutogradMeta::view_base) and the version counter's value when its
// grad_fn was set (attr_version).
//  - An in-place op on a view rebases the *base* onto CopySlices, whose gradient splits into
//    the part outside the view (to the base's old history) and the part inside (to the node
//    that computed the new values); the view itself becomes AsStridedBackward0 of the base.
//  - Any other view of that base sees a new version on its next use and regenerates its
//    grad_fn the same way (as PyTorch does), so its gradient reaches the new history too.
// Geometry is taken relative to the base's storage offset, so any non-overlapping base works.
#pragma once

#include "ember/autograd/node.h"

namespace ember::autograd {

/// Records that `view` shares `base`'s storage (resolved to the root base).
void set_view_base(Tensor& view, const Tensor& base);

/// PyTorch's check_inplace: an in-place op may not write into a leaf that requires grad,
/// nor into a view of a leaf when gradients are wanted.
void check_inplace(const Tensor& self);

/// Makes `self`, just written in place, the output `edge` of the graph. For a view, the
/// base is rebased through CopySlices and the view reads the base (Note [View history]).
void rebase_history(Tensor& self, Edge edge);

/// Regenerates the grad_fn of a view whose storage changed since its grad_fn was set;
/// Tensor::grad_fn() calls it, so every reader of a view's history sees a current one.
void refresh_view_grad_fn(const Tensor& view);

}  // namespace ember::autograd
