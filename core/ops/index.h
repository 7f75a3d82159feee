// Indexing: x.index({Slice(), 0, None, Ellipsis, mask, idx}) and index_put_ with libtorch's
// TensorIndex, index_select, masked_select, nonzero (gather/scatter: scatter.h).
#pragma once

#include <optional>

#include "ember/core/tensor.h"

namespace ember {
namespace indexing {

/// As in libtorch, None is std::nullopt, so Slice(None, 2) and x.index({None, 0}) both read
/// as in Python.
using NoneType = std::nullopt_t;
struct EllipsisType {};
constexpr NoneType None = std::nullopt;
constexpr EllipsisType Ellipsis{};

/// start:stop:step with Python's defaults and clamping.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

class TensorIndex {
 public:
  enum class Kind { None, Ellipsis, Integer, Boolean, Slice, Tensor };
  TensorIndex(NoneType) : kind_(Kind::None) {}                        // NOLINT
  TensorIndex(EllipsisType) : kind_(Kind::Ellipsis) {}                // NOLINT
  TensorIndex(const char* s);                                         // NOLINT: "..." as libtorch
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}        // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}            // NOLINT
  TensorIndex(bool b) : kind_(Kind::Boolean), boolean_(b) {}           // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}              // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_ellipsis() const { return kind_ == Kind::Ellipsis; }
  bool is_integer() const { return kind_ == Kind::Integer; }
  bool is_boolean() const { return kind_ == Kind::Boolean; }
  bool is_slice() const { return kind_ == Kind::Slice; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace indexing

/// Advanced indexing with a list of index tensors (torch.index with a tuple of tensors);
/// undefined entries mean ":". (TensorIndex lists go through Tensor::index / index_put_, as in
/// libtorch, so a braced list here is never ambiguous.)
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& value,
                   bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& value,
                 bool accumulate = false);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);

}  // namespace ember
