// Packing and padding of variable-length sequences (torch.nn.utils.rnn), built from tensor ops
// so autograd runs through them.
#include "ember/nn/utils/rnn.h"

#include <algorithm>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/index.h"
#include "ember/core/ops/padding.h"
#include "ember/core/ops/scatter.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/sort.h"

namespace ember::nn::utils::rnn {

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return {};
  Tensor positions = arange(permutation.numel(), TensorOptions().dtype(kInt64).device(permutation.device()));
  return scatter(empty_like(positions), 0, permutation, positions);
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
  EMBER_CHECK(batch_sizes_.defined() && batch_sizes_.is_cpu(),
              "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. "
              "They should be instantiated by functions like pack_sequence and pack_padded_sequences in "
              "nn::utils::rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence");
}

PackedSequence PackedSequence::pin_memory() const {
  return PackedSequence(data_.pin_memory(), batch_sizes_,
                        sorted_indices_.defined() ? sorted_indices_.pin_memory() : Tensor(),
                        unsorted_indices_.defined() ? unsorted_indices_.pin_memory() : Tensor());
}

PackedSequence PackedSequence::to(TensorOptions options) const {
  Tensor data = data_.to(options);
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(data.device()) : Tensor(); };
  return PackedSequence(data, batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}

PackedSequence PackedSequence::cuda() const { return to(TensorOptions().device(Device(kCUDA, 0))); }
PackedSequence PackedSequence::cpu() const { return to(TensorOptions().device(Device(kCPU))); }

namespace {

/// The lengths as int64 values, checked to be a 1-d tensor.
std::vector<int64_t> length_values(const Tensor& lengths) {
  EMBER_CHECK(lengths.defined() && lengths.dim() == 1 && !lengths.is_floating_point(),
              "'lengths' argument should be a 1D CPU int64 tensor");
  Tensor l = lengths.to(TensorOptions().dtype(kInt64).device(Device(kCPU))).contiguous();
  const int64_t* p = l.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + l.numel());
}

/// ATen's _pack_padded_sequence: time-major input [T, B, *] with decreasing lengths.
std::pair<Tensor, Tensor> pack_time_major(const Tensor& input, const std::vector<int64_t>& lengths) {
  EMBER_CHECK(input.numel() > 0, "Cannot pack empty tensors.");
  const int64_t T = input.size(0), B = input.size(1);
  EMBER_CHECK(static_cast<int64_t>(lengths.size()) == B, "Expected `len(lengths)` to be equal to batch_size, but got ",
              lengths.size(), " (batch_size=", B, ")");
  EMBER_CHECK(lengths.back() > 0,
              "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
  for (size_t i = 0; i + 1 < lengths.size(); ++i)
    EMBER_CHECK(lengths[i + 1] <= lengths[i],
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                "you do not need ONNX exportability.");
  EMBER_CHECK(lengths[0] <= T, "pack_padded_sequence: a sequence length (", lengths[0],
              ") is longer than the input's ", T, " time steps");
  std::vector<Tensor> steps;
  std::vector<int64_t> batch_sizes;
  for (int64_t t = 0; t < lengths[0]; ++t) {
    int64_t running = static_cast<int64_t>(
        std::count_if(lengths.begin(), lengths.end(), [t](int64_t l) { return l > t; }));
    batch_sizes.push_back(running);
    steps.push_back(input.select(0, t).narrow(0, 0, running));
  }
  return {cat(steps, 0), tensor(batch_sizes, kInt64)};
}

}  // namespace

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first, bool enforce_sorted) {
  std::vector<int64_t> l = length_values(lengths);
  EMBER_CHECK(input.dim() >= 2, "pack_padded_sequence: expected the input to have at least 2 dimensions, got ",
              input.dim());
  Tensor sorted_indices;
  if (!enforce_sorted) {
    Tensor lengths64 = tensor(l, kInt64);
    std::tie(lengths64, sorted_indices) = sort(lengths64, -1, /*descending=*/true);
    l = length_values(lengths64);
    sorted_indices = sorted_indices.to(input.device());
    input = input.index_select(batch_first ? 0 : 1, sorted_indices);
  }
  if (batch_first) input = input.transpose(0, 1);
  auto [data, batch_sizes] = pack_time_major(input, l);
  return PackedSequence(data, batch_sizes, sorted_indices, Tensor());
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  std::vector<int64_t> batch_sizes = length_values(sequence.batch_sizes());
  int64_t max_seq_length = static_cast<int64_t>(batch_sizes.size());
  if (total_length) {
    EMBER_CHECK(*total_length >= max_seq_length,
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                "total_length=",
                *total_length, " and max sequence length being ", max_seq_length);
    max_seq_length = *total_length;
  }
  EMBER_CHECK(!batch_sizes.empty() && batch_sizes[0] > 0, "pad_packed_sequence: the sequence is empty");
  const Tensor& data = sequence.data();
  const int64_t B = batch_sizes[0];
  // Each step's rows, padded to the whole batch, stacked along time, then padded to the length.
  std::vector<Tensor> steps;
  int64_t offset = 0;
  const int64_t trailing_dims = data.dim() - 1;
  for (int64_t bs : batch_sizes) {
    EMBER_CHECK(bs > 0 && bs <= B && offset + bs <= data.size(0), "pad_packed_sequence: invalid batch_sizes");
    Tensor rows = data.narrow(0, offset, bs);
    std::vector<int64_t> pad(static_cast<size_t>(2 * trailing_dims), 0);
    pad.push_back(0);
    pad.push_back(B - bs);  // constant_pad_nd pads the last dims first: dim 0 comes last
    steps.push_back(constant_pad_nd(rows, pad, padding_value));
    offset += bs;
  }
  EMBER_CHECK(offset == data.size(0), "pad_packed_sequence: batch_sizes sum to ", offset, " but the data has ",
              data.size(0), " rows");
  Tensor padded = stack(steps, 0);  // [T, B, *]
  if (max_seq_length > static_cast<int64_t>(batch_sizes.size())) {
    std::vector<int64_t> pad(static_cast<size_t>(2 * (trailing_dims + 1)), 0);
    pad.push_back(0);
    pad.push_back(max_seq_length - static_cast<int64_t>(batch_sizes.size()));
    padded = constant_pad_nd(padded, pad, padding_value);
  }
  std::vector<int64_t> lengths(static_cast<size_t>(B), 0);
  for (int64_t bs : batch_sizes)
    for (int64_t b = 0; b < bs; ++b) lengths[static_cast<size_t>(b)] += 1;
  Tensor lengths_t = tensor(lengths, kInt64);
  if (batch_first) padded = padded.transpose(0, 1);
  if (sequence.unsorted_indices().defined()) {
    padded = padded.index_select(batch_first ? 0 : 1, sequence.unsorted_indices());
    lengths_t = lengths_t.index_select(0, sequence.unsorted_indices().cpu());
  }
  return {padded, lengths_t};
}

Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first, double padding_value) {
  EMBER_CHECK(!sequences.empty(), "received an empty list of sequences");
  int64_t max_len = 0;
  for (const Tensor& s : sequences) {
    EMBER_CHECK(s.defined() && s.dim() >= 1, "pad_sequence: every sequence needs at least one dimension");
    max_len = std::max(max_len, s.size(0));
  }
  std::vector<Tensor> padded;
  padded.reserve(sequences.size());
  for (const Tensor& s : sequences) {
    std::vector<int64_t> pad(static_cast<size_t>(2 * (s.dim() - 1)), 0);
    pad.push_back(0);
    pad.push_back(max_len - s.size(0));
    padded.push_back(constant_pad_nd(s, pad, padding_value));
  }
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  lengths.reserve(sequences.size());
  for (const Tensor& s : sequences) lengths.push_back(s.size(0));
  return pack_padded_sequence(pad_sequence(sequences), tensor(lengths, kInt64), false, enforce_sorted);
}

}  // namespace ember::nn::utils::rnn
