// TensorImpl geometry bookkeeping.
#include "ember/core/tensor_impl.h"

#include "ember/core/shape.h"
#include "ember/core/tensor.h"

namespace ember {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), sizes_(sizes), strides_(strides),
      storage_offset_(storage_offset), dtype_(dtype) {
  refresh();
}

void TensorImpl::set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_ = sizes;
  strides_ = strides;
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::shallow_copy_from(const TensorImpl& src) {
  storage_ = src.storage_;
  dtype_ = src.dtype_;
  set_geometry(src.sizes_, src.strides_, src.storage_offset_);
}

void Tensor::set_data(const Tensor& new_data) const {
  EMBER_CHECK(defined() && new_data.defined(), "set_data: both tensors must be defined");
  impl_->shallow_copy_from(*new_data.impl_);
}

TensorImpl::~TensorImpl() = default;

AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_) autograd_ = std::make_unique<AutogradMeta>();
  return *autograd_;
}

void TensorImpl::clear_autograd_meta() { autograd_.reset(); }

void TensorImpl::refresh() {
  // prod_of and is_contiguous_geometry in one pass (every new tensor comes through here).
  int64_t n = 1, expected = 1;
  bool contiguous = true;
  for (size_t i = sizes_.size(); i-- > 0;) {
    int64_t s = sizes_[i];
    n *= s;
    if (s == 1) continue;
    if (strides_[i] != expected) contiguous = false;
    expected *= s;
  }
  numel_ = n;
  // An empty tensor is contiguous whatever its strides (PyTorch's compute_contiguous).
  contiguous_ = contiguous || n == 0;
}

}  // namespace ember
