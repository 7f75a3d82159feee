// The IDX reader behind MNIST / Fashion-MNIST. Every file goes through zlib's gz* functions,
// which read plain files unchanged, so one path handles "x-ubyte" and "x-ubyte.gz". The
// byte-level parser (idx.h) validates each header before any data is trusted, and the file
// readers read only the bytes a valid header announces; errors name the file and what is wrong.
#include "ember/data/datasets/mnist.h"
#include "ember/data/datasets/idx.h"
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

  /// Exactly n bytes; fails naming the file when it ends first.
  std::vector<uint8_t> read_exact(size_t n, const char* what) {
    std::vector<uint8_t> raw(n);
    size_t got = read(raw.data(), n);
    EMBER_CHECK(got == n, path_, ": truncated: expected a ", n, "-byte ", what, ", got ", got, " bytes");
    return raw;
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

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

/// The header's magic and count; `words` is the header's length in 32-bit words.
detail::IdxHeader parse_header(const uint8_t* data, size_t size, size_t words, uint32_t magic,
                               const char* what, const std::string& name) {
  EMBER_CHECK(size >= words * 4, name, ": truncated: expected a ", words * 4, "-byte IDX header, got ", size,
              " bytes");
  uint32_t got = big_endian_u32(data);
  EMBER_CHECK(got == magic, name, ": bad magic number ", got, ", expected ", magic, " (", what, ")");
  detail::IdxHeader h;
  h.count = big_endian_u32(data + 4);
  return h;
}

/// The data bytes must be all there; any beyond them are not read (see mnist.h).
void check_data_size(const detail::IdxHeader& h, size_t data_size, const char* what,
                     const std::string& name) {
  EMBER_CHECK(data_size >= h.data_bytes, name, ": truncated: expected ", h.data_bytes, " bytes of ", what,
              " data, got ", data_size);
}

}  // namespace

namespace detail {

IdxHeader parse_idx_image_header(const uint8_t* data, size_t size, const std::string& name) {
  IdxHeader h = parse_header(data, size, 4, kImageMagic, "images", name);
  h.rows = big_endian_u32(data + 8);
  h.cols = big_endian_u32(data + 12);
  EMBER_CHECK(h.rows == kRows && h.cols == kCols, name, ": expected ", kRows, "x", kCols, " images, got ",
              h.rows, "x", h.cols);
  // count < 2^32 and rows * cols = 784: cannot overflow 64 bits, checked all the same so a
  // future change of the image size stays safe.
  EMBER_CHECK(!__builtin_mul_overflow(uint64_t{h.count}, uint64_t{h.rows} * h.cols, &h.data_bytes), name,
              ": ", h.count, " images of ", h.rows, "x", h.cols, " overflow the byte count");
  return h;
}

IdxHeader parse_idx_label_header(const uint8_t* data, size_t size, const std::string& name) {
  IdxHeader h = parse_header(data, size, 2, kLabelMagic, "labels", name);
  h.data_bytes = h.count;
  return h;
}

Tensor decode_idx_images(const IdxHeader& h, const uint8_t* data, size_t data_size, const std::string& name) {
  check_data_size(h, data_size, "image", name);
  // Scale as libtorch does (x / 255 in float32).
  Tensor images = empty({int64_t{h.count}, 1, int64_t{h.rows}, int64_t{h.cols}}, kFloat);
  float* out = images.data_ptr<float>();
  parallel_for(static_cast<int64_t>(h.data_bytes), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<float>(data[i]) / 255.0f;
  });
  return images;
}

Tensor decode_idx_labels(const IdxHeader& h, const uint8_t* data, size_t data_size, const std::string& name,
                         int64_t num_classes) {
  check_data_size(h, data_size, "label", name);
  Tensor labels = empty({int64_t{h.count}}, kLong);
  int64_t* p = labels.data_ptr<int64_t>();
  for (uint32_t i = 0; i < h.count; ++i) {
    EMBER_CHECK(data[i] < num_classes, name, ": label ", int{data[i]}, " at index ", i,
                " is out of range [0, ", num_classes, ")");
    p[i] = data[i];
  }
  return labels;
}

Tensor parse_idx_images(const uint8_t* data, size_t size, const std::string& name) {
  IdxHeader h = parse_idx_image_header(data, size, name);
  return decode_idx_images(h, data + 16, size - 16, name);
}

Tensor parse_idx_labels(const uint8_t* data, size_t size, const std::string& name, int64_t num_classes) {
  IdxHeader h = parse_idx_label_header(data, size, name);
  return decode_idx_labels(h, data + 8, size - 8, name, num_classes);
}

// The file readers: the header first, then exactly the data it announces, read in chunks so a
// corrupt count says "truncated" instead of allocating what the count claims.
Tensor read_idx_images(const std::string& path) {
  GzFile f(path);
  std::vector<uint8_t> head = f.read_exact(16, "IDX header");
  IdxHeader h = parse_idx_image_header(head.data(), head.size(), path);
  std::vector<uint8_t> raw = f.read_up_to(h.data_bytes);
  return decode_idx_images(h, raw.data(), raw.size(), path);
}

Tensor read_idx_labels(const std::string& path, int64_t num_classes) {
  GzFile f(path);
  std::vector<uint8_t> head = f.read_exact(8, "IDX header");
  IdxHeader h = parse_idx_label_header(head.data(), head.size(), path);
  std::vector<uint8_t> raw = f.read_up_to(h.data_bytes);
  return decode_idx_labels(h, raw.data(), raw.size(), path, num_classes);
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
