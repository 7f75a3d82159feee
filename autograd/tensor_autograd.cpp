// The autograd methods of Tensor: requires_grad, grad, backward, hooks, retain_grad, detach.
#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/autograd/view_history.h"
#include "ember/core/tensor.h"

namespace ember {

bool Tensor::requires_grad() const {
  AutogradMeta* m = impl_->autograd_meta();
  return m && (m->requires_grad || grad_fn());
}

Tensor& Tensor::requires_grad_(bool r) {
  AutogradMeta* m = impl_->autograd_meta();
  if (!r && grad_fn()) {
    detail::throw_error(
        "you can only change requires_grad flags of leaf variables. If you want to use a computed "
        "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  EMBER_CHECK(!r || ember::is_floating_point(dtype()),
              "only Tensors of floating point and complex dtype can require gradients");
  if ((!r && !m) || (r && grad_fn())) return *this;  // a non-leaf requires grad already
  impl_->ensure_autograd_meta().requires_grad = r;
  return *this;
}

bool Tensor::is_leaf() const { return !grad_fn(); }

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> kNone;
  AutogradMeta* m = impl_->autograd_meta();
  if (!m) return kNone;
  if (m->view_base.defined()) autograd::refresh_view_grad_fn(*this);  // Note [View history]
  return m->grad_fn;
}

Tensor Tensor::grad() const {
  AutogradMeta* m = impl_->autograd_meta();
  if (!m) return {};
  if (grad_fn()) return m->retained_grad ? *m->retained_grad : Tensor();
  return m->grad;
}

Tensor& Tensor::mutable_grad() {
  return impl_->ensure_autograd_meta().grad;
}

void Tensor::set_grad(const Tensor& g) {
  AutogradMeta& m = impl_->ensure_autograd_meta();
  if (g.defined()) {
    EMBER_CHECK(g.sizes().equals(sizes()), "assigned grad has data of a different size");
    EMBER_CHECK(g.dtype() == dtype(), "assigned grad has data of a different type");
    EMBER_CHECK(g.device() == device(), "assigned grad has data located on a different device");
  }
  m.grad = g;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const TensorList& inputs) const {
  autograd::backward({*this}, gradient.defined() ? TensorList{gradient} : TensorList{}, retain_graph,
                     create_graph, inputs);
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  const auto& fn = grad_fn();
  AutogradMeta& m = impl_->ensure_autograd_meta();
  if (!fn || m.retained_grad) return;  // leaves keep their grad anyway
  m.retained_grad = std::make_shared<Tensor>();
  fn->add_retained(m.output_nr, m.retained_grad);
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = impl_->autograd_meta();
  return m && m->retained_grad && grad_fn();
}

unsigned Tensor::register_hook(std::function<Tensor(const Tensor&)> fn) const {
  EMBER_CHECK(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = impl_->ensure_autograd_meta();
  if (const auto& node = grad_fn()) return node->add_pre_hook(m.output_nr, std::move(fn));
  unsigned h = autograd::next_hook_handle();
  m.leaf_hooks.emplace_back(h, std::move(fn));
  return h;
}

unsigned Tensor::register_hook(std::function<void(const Tensor&)> fn) const {
  return register_hook(std::function<Tensor(const Tensor&)>([fn = std::move(fn)](const Tensor& g) {
    fn(g);
    return Tensor();
  }));
}

void Tensor::remove_hook(unsigned handle) const {
  AutogradMeta* m = impl_->autograd_meta();
  if (!m) return;
  if (const auto& node = grad_fn(); node && node->remove_pre_hook(handle)) return;
  std::erase_if(m->leaf_hooks, [&](const auto& p) { return p.first == handle; });
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(Tensor&)> fn) const {
  EMBER_CHECK(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  EMBER_CHECK(is_leaf(), "post accumulate grad hooks cannot be registered on non-leaf tensors");
  impl_->ensure_autograd_meta().post_accumulate_hooks.push_back(std::move(fn));
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = impl_->autograd_meta();
  return m ? m->output_nr : 0;
}

Tensor Tensor::detach() const {
  return Tensor(intrusive_ptr<TensorImpl>::make(impl_->storage(), dtype(), sizes(), strides(), storage_offset()));
}

Tensor& Tensor::detach_() {
  AutogradMeta* m = impl_->autograd_meta();
  EMBER_CHECK(!m || !m->view_base.defined(),
              "Can't detach views in-place. Use detach() instead. If you are using "
              "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
              "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
              "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
              "torch/optim/optimizer.py as the solution.");
  if (m) {
    m->grad_fn.reset();
    m->requires_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

const std::string& Tensor::name() const {
  static const std::string kEmpty;
  AutogradMeta* m = impl_->autograd_meta();
  return m ? m->name : kEmpty;
}

}  // namespace ember
