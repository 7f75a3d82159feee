// TensorImpl: what a Tensor handle points at — storage, sizes, strides (in elements),
// storage offset, dtype, and the autograd slot.
//
// Note [Version counter]
// Every in-place write bumps a counter that lives in the Storage, so a tensor and all of its
// views (and detach()ed aliases, as in PyTorch) see one count. Autograd records the count
// when it saves a tensor for backward and refuses to use it if the count has moved.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/core/intrusive_ptr.h"
#include "ember/core/small_vector.h"
#include "ember/core/storage.h"

namespace ember {


/// Autograd state of one tensor (defined in tensor.h); absent for tensors that never
/// touched autograd.
struct AutogradMeta;

class TensorImpl final : public intrusive_target {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);

  const Storage& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return contiguous_; }
  /// Address of element 0 (storage data + offset).
  void* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  /// Re-points this tensor at new geometry (used by set_ / resize of outputs).
  void set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  void set_storage(Storage s) { storage_ = std::move(s); }
  /// Takes src's storage, dtype and geometry, keeping this tensor's autograd state (set_data).
  void shallow_copy_from(const TensorImpl& src);

  ~TensorImpl() override;
  AutogradMeta* autograd_meta() const { return autograd_.get(); }
  AutogradMeta& ensure_autograd_meta();
  void clear_autograd_meta();

 private:
  void refresh();
  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool contiguous_ = true;
  std::unique_ptr<AutogradMeta> autograd_;
};

}  // namespace ember
