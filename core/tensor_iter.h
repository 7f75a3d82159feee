// TensorIter: the loop machinery of elementwise ops. It broadcasts the inputs to the output's
// shape, coalesces dimensions that are contiguous for every operand, and hands the kernel
// 1-d runs: loop(data, strides, n), with data/strides per operand (output first), strides
// in bytes. Work is split over OpenMP threads above a grain size; each element is computed
// by exactly one thread, so results never depend on the thread count.
#pragma once

#include <array>

#include "ember/core/tensor.h"

namespace ember {

/// Below this many elements an op runs on one thread (a tiny op must stay tiny).
constexpr int64_t kGrainSize = 32768;

class TensorIter {
 public:
  static constexpr int kMaxOperands = 8;

  /// Operands are {out, inputs...}; inputs broadcast to out's shape.
  TensorIter(const Tensor& out, const TensorList& inputs);
  /// Operands all of one shape (no output distinguished), e.g. for an in-place fill.
  static TensorIter nullary(const Tensor& out) { return TensorIter(out, {}); }

  int ntensors() const { return ntensors_; }
  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  /// True when every operand is one dense run (or a broadcast scalar) over all elements.
  bool is_1d() const { return shape_.size() <= 1; }
  /// Where the operands live (all on one device: the op checked that).
  Device device() const { return operands_[0].device(); }

  // The coalesced loop, for kernels that index it themselves (cuda/loops.cuh): the shape,
  // innermost dimension first; operand k's strides in bytes (0 where it broadcasts), same
  // order; and its first element.
  IntArrayRef shape() const { return shape_.ref(); }
  IntArrayRef strides(int k) const { return strides_[k].ref(); }
  char* data(int k) const { return base_[k]; }

  using Loop = void (*)(void* ctx, char** data, const int64_t* strides, int64_t n);
  /// Calls loop over all elements, in parallel above `grain` elements.
  template <class F>
  void for_each(F&& f, int64_t grain = kGrainSize) const {
    for_each_impl(&trampoline<std::remove_reference_t<F>>, &f, grain);
  }
  /// Same, on the calling thread only.
  template <class F>
  void serial_for_each(F&& f) const {
    serial_range(&trampoline<std::remove_reference_t<F>>, &f, 0, numel_);
  }

 private:
  template <class F>
  static void trampoline(void* ctx, char** data, const int64_t* strides, int64_t n) {
    (*static_cast<F*>(ctx))(data, strides, n);
  }
  void for_each_impl(Loop loop, void* ctx, int64_t grain) const;
  void serial_range(Loop loop, void* ctx, int64_t begin, int64_t end) const;
  void coalesce();

  int ntensors_ = 0;
  int64_t numel_ = 0;
  DimVector shape_;  // innermost dimension first
  std::array<DimVector, kMaxOperands> strides_;  // bytes, innermost first
  std::array<char*, kMaxOperands> base_{};
  // The operands stay alive as long as the iterator, so an iterator over a temporary
  // (TensorIter it(out, {x.to(kDouble)})) cannot read freed memory.
  std::array<Tensor, kMaxOperands> operands_;
};

/// Sets OpenMP's thread count for ember's kernels (torch::set_num_threads).
void set_num_threads(int n);
int get_num_threads();

/// Runs f(begin, end) over [0, n) split into chunks of at least `grain`, in parallel.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

}  // namespace ember
