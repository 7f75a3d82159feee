// Variable-length sequences for the recurrent layers, as libtorch's torch::nn::utils::rnn:
// PackedSequence holds a batch of sequences of different lengths as one [sum of lengths, *]
// tensor ordered time step by time step (batch_sizes[t]: how many sequences are still running
// at step t, longest first), so an RNN runs each step on the sequences that have one and
// never on padding. pack_padded_sequence / pad_packed_sequence convert from / to a padded
// [T, B, *] tensor, pad_sequence pads a list, pack_sequence packs one. All are tensor ops, so
// gradients flow through packing and unpacking.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include "ember/core/array_ref.h"
#include "ember/core/tensor.h"

namespace ember::nn::utils::rnn {

/// The inverse of a permutation (invert_permutation(p)[p[i]] = i); undefined in, undefined out.
Tensor invert_permutation(const Tensor& permutation);

class PackedSequence {
 public:
  /// data [sum of lengths, *]; batch_sizes int64 [max length] on the CPU; sorted_indices: the
  /// batch order the data is in (undefined when the batch was already sorted by length).
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {},
                          Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }

  PackedSequence pin_memory() const;
  /// The data moved or cast; batch_sizes stay on the CPU, the indices follow the data's device.
  PackedSequence to(TensorOptions options) const;
  PackedSequence cuda() const;
  PackedSequence cpu() const;
  bool is_cuda() const { return data_.is_cuda(); }
  bool is_pinned() const { return data_.is_pinned(); }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

/// Packs a padded batch input [T, B, *] ([B, T, *] with batch_first) of sequences with the given
/// lengths (a 1-d integer tensor on the CPU). With enforce_sorted the lengths must decrease;
/// otherwise the batch is sorted here and the order kept in sorted_indices.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                    bool enforce_sorted = true);

/// The padded batch [T, B, *] ([B, T, *] with batch_first) of a PackedSequence, in the original
/// batch order, and the lengths (int64). total_length pads T further (at least the longest).
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

/// Stacks sequences [L_i, *] into [max L, B, *] ([B, max L, *] with batch_first), padding each.
Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first = false, double padding_value = 0);

/// pack_padded_sequence(pad_sequence(sequences), their lengths, false, enforce_sorted).
PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted = true);

}  // namespace ember::nn::utils::rnn
