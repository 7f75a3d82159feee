// The IDX format's byte-level parser (MNIST, Fashion-MNIST): the file readers of
// data/datasets/mnist.cpp and the fuzzer (fuzz/fuzz_idx.cpp) share it, so the format's checks
// are exercised without files. Internal: not included by ember.h. `name` is the source named
// in error messages; bytes past the data are ignored (the file readers never read them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/core/tensor.h"

namespace ember::data::datasets::detail {

/// An IDX header: the item count and, for images, the rows and columns of one image.
struct IdxHeader {
  uint32_t count = 0, rows = 1, cols = 1;
  /// Bytes of data after the header: count * rows * cols, overflow-checked.
  uint64_t data_bytes = 0;
};

/// The 16-byte image header (magic 2051, count, 28, 28).
IdxHeader parse_idx_image_header(const uint8_t* data, size_t size, const std::string& name);
/// The 8-byte label header (magic 2049, count).
IdxHeader parse_idx_label_header(const uint8_t* data, size_t size, const std::string& name);
/// Float32 (count, 1, rows, cols) in [0, 1] (x / 255, as libtorch) from the `data_size`
/// pixel bytes after the header; fewer than h.data_bytes is "truncated".
Tensor decode_idx_images(const IdxHeader& h, const uint8_t* data, size_t data_size, const std::string& name);
/// Int64 (count) from the label bytes after the header; each must be below `num_classes`.
Tensor decode_idx_labels(const IdxHeader& h, const uint8_t* data, size_t data_size, const std::string& name,
                         int64_t num_classes = 10);
/// A whole IDX image file held in memory (header, then pixels).
Tensor parse_idx_images(const uint8_t* data, size_t size, const std::string& name = "<memory>");
/// A whole IDX label file held in memory (header, then labels).
Tensor parse_idx_labels(const uint8_t* data, size_t size, const std::string& name = "<memory>",
                        int64_t num_classes = 10);

}  // namespace ember::data::datasets::detail
