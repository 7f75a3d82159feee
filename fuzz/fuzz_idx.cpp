// fuzz_idx: arbitrary bytes into the IDX (MNIST) parser behind data/datasets/mnist.cpp's
// file readers. The first byte picks images or labels, the rest is the file. Every input is
// rejected with ember::Error or parsed; what parses must hold exactly the input's bytes
// (images scaled by 1/255, labels as int64) in the header's shape.
#include <cstdio>
#include <cstdlib>

#include "ember/data/datasets/idx.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_idx finding: %s\n", what);
  std::abort();
}

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void check_images(const ember::Tensor& t, const uint8_t* file) {
  int64_t n = be32(file + 4);
  if (t.dtype() != ember::kFloat || t.dim() != 4 || t.size(0) != n || t.size(1) != 1 || t.size(2) != 28 ||
      t.size(3) != 28 || !t.is_contiguous())
    finding("images: wrong dtype or shape");
  const float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] != static_cast<float>(file[16 + i]) / 255.0f) finding("images: a pixel differs from the file");
}

void check_labels(const ember::Tensor& t, const uint8_t* file) {
  int64_t n = be32(file + 4);
  if (t.dtype() != ember::kLong || t.dim() != 1 || t.size(0) != n) finding("labels: wrong dtype or shape");
  const int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    if (p[i] != file[8 + i] || p[i] >= 10)
      finding("labels: a label differs from the file or is out of range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool images = data[0] & 1;
  const uint8_t* file = data + 1;
  size_t n = size - 1;
  namespace ds = ember::data::datasets::detail;
  try {
    if (images)
      check_images(ds::parse_idx_images(file, n, "fuzz"), file);
    else
      check_labels(ds::parse_idx_labels(file, n, "fuzz"), file);
  } catch (const ember::Error&) {
    // rejected: fine
  }
  return 0;
}
