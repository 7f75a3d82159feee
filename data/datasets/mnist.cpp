// The IDX reader behind MNIST / Fashion-MNIST. Every file goes through zlib's gz* functions,
// which read plain files unchanged, so one path handles "x-ubyte" and "x-ubyte.gz". Headers
// are validated before any data is trusted; errors name the file and what is wrong.
#include "ember/data/datasets/mnist.h"
#include "ember/data/datasets/tensor.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/tensor_iter.h"

namespace ember::data::datasets {
namespace {

constexpr uint32_t kImageMagic = 2051, kLabelMagic = 2049;
constexpr uint32_t kRows = 28, kCols = 28;

/// An open gz stream that closes itself; reads report how many bytes really arrived.
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")) {
    EMBER_CHECK(f_ != nullptr, path, ": cannot open file: ", std::strerror(errno));
    gzbuffer(f_, 1 << 20);  // large reads: the default 8 KiB buffer makes inflate call-bound
  }
  ~GzFile() { gzclose(f_); }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  /// Reads up to n bytes into dst; returns the count read (short only at end of file).
  size_t read(uint8_t* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      auto chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
      int r = gzread(f_, dst + got, chunk);
      if (r < 0) {
        int code = 0;
        const char* msg = gzerror(f_, &code);
        ::ember::detail::throw_error(path_ + ": corrupt gzip data: " + (msg ? msg : "unknown zlib error"));
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }

  /// Reads up to n bytes, growing the buffer in chunks rather than trusting a header's count
  /// with one allocation: a corrupt count must say "truncated", not allocate terabytes.
  std::vector<uint8_t> read_up_to(size_t n) {
    std::vector<uint8_t> buf;
    size_t got = 0;
    while (got < n) {
      buf.resize(std::min(n, got + (size_t{64} << 20)));
      got += read(buf.data() + got, buf.size() - got);
      if (got < buf.size()) break;
    }
    buf.resize(got);
    return buf;
  }

  /// The big-endian 32-bit header words; fails naming the file if the header is short.
  std::vector<uint32_t> header(size_t words) {
    std::vector<uint8_t> raw(words * 4);
    size_t got = read(raw.data(), raw.size());
    EMBER_CHECK(got == raw.size(), path_, ": truncated: expected a ", raw.size(), "-byte IDX header, got ",
                got, " bytes");
    std::vector<uint32_t> out(words);
    for (size_t i = 0; i < words; ++i)
      out[i] = (uint32_t{raw[4 * i]} << 24) | (uint32_t{raw[4 * i + 1]} << 16) |
               (uint32_t{raw[4 * i + 2]} << 8) | uint32_t{raw[4 * i + 3]};
    return out;
  }

 private:
  std::string path_;
  gzFile f_;
};

/// `root`/name, or `root`/name.gz; a missing file names both paths tried.
std::string find_file(const std::string& root, const std::string& name) {
  std::filesystem::path plain = std::filesystem::path(root) / name;
  std::filesystem::path gz = plain;
  gz += ".gz";
  std::error_code ec;
  if (std::filesystem::is_regular_file(plain, ec)) return plain.string();
  if (std::filesystem::is_regular_file(gz, ec)) return gz.string();
  ::ember::detail::throw_error("MNIST: cannot find " + name + " (tried " + plain.string() + " and " +
                               gz.string() + ")");
}

void check_magic(const std::string& path, uint32_t got, uint32_t expected, const char* what) {
  EMBER_CHECK(got == expected, path, ": bad magic number ", got, ", expected ", expected, " (", what, ")");
}

}  // namespace

namespace detail {

Tensor read_idx_images(const std::string& path) {
  GzFile f(path);
  std::vector<uint32_t> h = f.header(4);
  check_magic(path, h[0], kImageMagic, "images");
  uint32_t n = h[1], rows = h[2], cols = h[3];
  EMBER_CHECK(rows == kRows && cols == kCols, path, ": expected ", kRows, "x", kCols, " images, got ", rows,
              "x", cols);
  size_t bytes = size_t{n} * rows * cols;
  std::vector<uint8_t> raw = f.read_up_to(bytes);
  size_t got = raw.size();
  EMBER_CHECK(got == bytes, path, ": truncated: expected ", bytes, " bytes of image data, got ", got);
  // Scale as libtorch does (x / 255 in float32).
  Tensor images = empty({static_cast<int64_t>(n), 1, int64_t{rows}, int64_t{cols}}, kFloat);
  float* out = images.data_ptr<float>();
  const uint8_t* in = raw.data();
  parallel_for(static_cast<int64_t>(bytes), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<float>(in[i]) / 255.0f;
  });
  return images;
}

Tensor read_idx_labels(const std::string& path, int64_t num_classes) {
  GzFile f(path);
  std::vector<uint32_t> h = f.header(2);
  check_magic(path, h[0], kLabelMagic, "labels");
  uint32_t n = h[1];
  std::vector<uint8_t> raw = f.read_up_to(n);
  size_t got = raw.size();
  EMBER_CHECK(got == n, path, ": truncated: expected ", n, " bytes of label data, got ", got);
  Tensor labels = empty({static_cast<int64_t>(n)}, kLong);
  int64_t* p = labels.data_ptr<int64_t>();
  for (uint32_t i = 0; i < n; ++i) {
    EMBER_CHECK(raw[i] < num_classes, path, ": label ", int{raw[i]}, " at index ", i, " is out of range [0, ",
                num_classes, ")");
    p[i] = raw[i];
  }
  return labels;
}

}  // namespace detail

MNIST::MNIST(const std::string& root, Mode mode) : mode_(mode) {
  const char* prefix = mode == Mode::kTrain ? "train" : "t10k";
  std::string images_path = find_file(root, std::string(prefix) + "-images-idx3-ubyte");
  std::string labels_path = find_file(root, std::string(prefix) + "-labels-idx1-ubyte");
  images_ = detail::read_idx_images(images_path);
  targets_ = detail::read_idx_labels(labels_path);
  EMBER_CHECK(images_.size(0) == targets_.size(0), "MNIST: ", images_path, " has ", images_.size(0),
              " images but ", labels_path, " has ", targets_.size(0), " labels");
}

Example<> MNIST::get(size_t index) {
  EMBER_CHECK(index < static_cast<size_t>(images_.size(0)), "MNIST: index ", index,
              " is out of range for a dataset of size ", images_.size(0));
  auto i = static_cast<int64_t>(index);
  return {images_.select(0, i), targets_.select(0, i)};
}

Example<> MNIST::get_batch_stacked(ArrayRef<size_t> indices) const {
  return {detail::gather_rows(images_, indices), detail::gather_rows(targets_, indices)};
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace ember::data::datasets
