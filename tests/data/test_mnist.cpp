// MNIST / Fashion-MNIST reader: small synthetic IDX files (plain, and gzip written here with
// stored deflate blocks and a hand-computed CRC-32) read back value by value; every corruption
// gives an error naming the file; the real Fashion-MNIST files when they are installed.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ember/data/dataloader.h"
#include "ember/data/datasets/idx.h"
#include "ember/data/datasets/mnist.h"
#include "ember/data/transforms/stack.h"
#include "ember/data/transforms/tensor.h"
#include "op_check.h"

using namespace ember;
using namespace ember::data;
using ember::test::check_error;
using ember::test::shape;
using ember::test::values;
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

namespace {

void put_u32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

/// An IDX image file: magic, n, rows, cols, then pixel (k, r, c) = (k * 7 + r * 3 + c) % 256.
Bytes image_file(uint32_t n, uint32_t magic = 2051, uint32_t rows = 28, uint32_t cols = 28) {
  Bytes b;
  put_u32(b, magic);
  put_u32(b, n);
  put_u32(b, rows);
  put_u32(b, cols);
  for (uint32_t k = 0; k < n; ++k)
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t c = 0; c < cols; ++c) b.push_back(static_cast<uint8_t>((k * 7 + r * 3 + c) % 256));
  return b;
}

/// An IDX label file with the given labels.
Bytes label_file(const Bytes& labels, uint32_t magic = 2049) {
  Bytes b;
  put_u32(b, magic);
  put_u32(b, static_cast<uint32_t>(labels.size()));
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

uint32_t crc32(const Bytes& data) {  // the gzip CRC (reflected polynomial 0xEDB88320)
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// A valid gzip member holding `data` in stored (uncompressed) deflate blocks (RFC 1951/1952).
Bytes gzip(const Bytes& data) {
  Bytes g{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    size_t len = std::min<size_t>(65535, data.size() - pos);
    bool last = pos + len == data.size();
    g.push_back(last ? 1 : 0);
    g.push_back(static_cast<uint8_t>(len));
    g.push_back(static_cast<uint8_t>(len >> 8));
    g.push_back(static_cast<uint8_t>(~len));
    g.push_back(static_cast<uint8_t>(~len >> 8));
    g.insert(g.end(), data.begin() + static_cast<std::ptrdiff_t>(pos),
             data.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
  } while (pos < data.size());
  uint32_t crc = crc32(data), size = static_cast<uint32_t>(data.size());
  for (int s = 0; s < 32; s += 8) g.push_back(static_cast<uint8_t>(crc >> s));
  for (int s = 0; s < 32; s += 8) g.push_back(static_cast<uint8_t>(size >> s));
  return g;
}

/// A fresh empty directory under the temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / ("ember_test_mnist_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  void write(const std::string& name, const Bytes& b) const {
    std::ofstream(file(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
};

const Bytes kLabels{3, 0, 9};

void check_synthetic(const datasets::MNIST& m) {
  REQUIRE(m.size() == std::optional<size_t>(3));
  CHECK(shape(m.images()) == std::vector<int64_t>{3, 1, 28, 28});
  CHECK(m.images().dtype() == kFloat);
  CHECK(m.targets().dtype() == kLong);
  CHECK(values(m.targets()) == std::vector<double>{3, 0, 9});
  // Pixel (k, r, c) = ((7k + 3r + c) % 256) / 255 in float32.
  std::vector<double> v = values(m.images());
  for (int k : {0, 2})
    for (int r : {0, 5, 27})
      for (int c : {0, 13, 27}) {
        float expected = static_cast<float>((k * 7 + r * 3 + c) % 256) / 255.0f;
        CHECK(v[static_cast<size_t>(k * 784 + r * 28 + c)] == static_cast<double>(expected));
      }
}

}  // namespace

TEST_CASE("test_mnist: reads plain and gzip IDX files") {
  TempDir plain("plain");
  plain.write("train-images-idx3-ubyte", image_file(3));
  plain.write("train-labels-idx1-ubyte", label_file(kLabels));
  datasets::MNIST a(plain.path.string());
  CHECK(a.is_train());
  check_synthetic(a);
  Example<> e = a.get(2);
  CHECK(shape(e.data) == std::vector<int64_t>{1, 28, 28});
  CHECK(e.target.item<int64_t>() == 9);
  check_error([&] { a.get(3); }, "out of range");

  TempDir gz("gz");
  gz.write("t10k-images-idx3-ubyte.gz", gzip(image_file(3)));
  gz.write("t10k-labels-idx1-ubyte", label_file(kLabels));  // one compressed, one plain
  datasets::MNIST b(gz.path.string(), datasets::MNIST::Mode::kTest);
  CHECK_FALSE(b.is_train());
  check_synthetic(b);
  // Stacked straight from the dataset: the same values as get().
  Example<> stacked = b.map(transforms::Stack<>()).get_batch(std::vector<size_t>{2, 0});
  CHECK(values(stacked.data[0]) == values(b.get(2).data));
  CHECK(values(stacked.target) == std::vector<double>{9, 3});
  // Through the libtorch pipeline: normalize, stack, load.
  auto loader = make_data_loader(datasets::MNIST(gz.path.string(), datasets::MNIST::Mode::kTest)
                                     .map(transforms::Normalize<>(0.1307, 0.3081))
                                     .map(transforms::Stack<>()),
                                 DataLoaderOptions(2).shuffle(false));
  auto it = loader->begin();
  CHECK(shape(it->data) == std::vector<int64_t>{2, 1, 28, 28});
  CHECK(values(it->data)[1] == doctest::Approx((1 / 255.0 - 0.1307) / 0.3081).epsilon(1e-5));
}

TEST_CASE("test_mnist: missing and corrupt files name the file") {
  TempDir d("bad");
  check_error([&] { datasets::MNIST(d.path.string()); }, "cannot find train-images-idx3-ubyte (tried " +
                                                             d.file("train-images-idx3-ubyte") + " and " +
                                                             d.file("train-images-idx3-ubyte.gz") + ")");
  d.write("train-labels-idx1-ubyte", label_file(kLabels));
  const std::string img = d.file("train-images-idx3-ubyte");
  const std::string lbl = d.file("train-labels-idx1-ubyte");

  d.write("train-images-idx3-ubyte", image_file(3, 1234));
  check_error([&] { datasets::MNIST(d.path.string()); },
              img + ": bad magic number 1234, expected 2051 (images)");

  Bytes truncated = image_file(3);
  truncated.resize(16 + 1000);
  d.write("train-images-idx3-ubyte", truncated);
  check_error([&] { datasets::MNIST(d.path.string()); },
              img + ": truncated: expected 2352 bytes of image data, got 1000");

  d.write("train-images-idx3-ubyte", Bytes{0, 0, 8, 3, 0, 0});
  check_error([&] { datasets::MNIST(d.path.string()); },
              img + ": truncated: expected a 16-byte IDX header, got 6");

  d.write("train-images-idx3-ubyte", image_file(2, 2051, 28, 20));
  check_error([&] { datasets::MNIST(d.path.string()); }, img + ": expected 28x28 images, got 28x20");

  // A header claiming four billion images must fail as truncated, not try to allocate them.
  Bytes huge = image_file(1);
  huge[4] = huge[5] = huge[6] = huge[7] = 0xff;
  d.write("train-images-idx3-ubyte", huge);
  check_error([&] { datasets::MNIST(d.path.string()); }, img + ": truncated: expected");

  d.write("train-images-idx3-ubyte", image_file(4));
  check_error([&] { datasets::MNIST(d.path.string()); },
              "MNIST: " + img + " has 4 images but " + lbl + " has 3 labels");

  d.write("train-images-idx3-ubyte", image_file(3));
  d.write("train-labels-idx1-ubyte", label_file(kLabels, 2051));
  check_error([&] { datasets::MNIST(d.path.string()); },
              lbl + ": bad magic number 2051, expected 2049 (labels)");
  d.write("train-labels-idx1-ubyte", label_file({1, 12, 2}));
  check_error([&] { datasets::MNIST(d.path.string()); },
              lbl + ": label 12 at index 1 is out of range [0, 10)");
  Bytes short_labels = label_file(kLabels);
  short_labels.pop_back();
  d.write("train-labels-idx1-ubyte", short_labels);
  check_error([&] { datasets::MNIST(d.path.string()); },
              lbl + ": truncated: expected 3 bytes of label data, got 2");
}

TEST_CASE("test_mnist: corrupt gzip streams name the file") {
  TempDir d("badgz");
  d.write("train-labels-idx1-ubyte", label_file(kLabels));
  const std::string img = d.file("train-images-idx3-ubyte.gz");
  Bytes good = gzip(image_file(3));
  // A wrong CRC-32 in the trailer.
  Bytes bad_crc = good;
  bad_crc[bad_crc.size() - 8] ^= 0xff;
  d.write("train-images-idx3-ubyte.gz", bad_crc);
  check_error([&] { datasets::MNIST(d.path.string()); }, img + ": ");
  // Cut in the middle of the deflate data.
  Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
  d.write("train-images-idx3-ubyte.gz", cut);
  check_error([&] { datasets::MNIST(d.path.string()); }, img + ": ");
  // A valid gzip of a too-short file.
  Bytes short_img = image_file(3);
  short_img.resize(100);
  d.write("train-images-idx3-ubyte.gz", gzip(short_img));
  check_error([&] { datasets::MNIST(d.path.string()); },
              img + ": truncated: expected 2352 bytes of image data, got 84");
}

TEST_CASE("test_mnist: the installed Fashion-MNIST") {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(root + "/train-images-idx3-ubyte.gz")) {
    MESSAGE("skipped: Fashion-MNIST is not installed at " << root
                                                          << " (Debian package dataset-fashion-mnist)");
    return;
  }
  datasets::MNIST train(root, datasets::MNIST::Mode::kTrain);
  datasets::MNIST test(root, datasets::MNIST::Mode::kTest);
  CHECK(train.size() == std::optional<size_t>(60000));
  CHECK(test.size() == std::optional<size_t>(10000));
  CHECK(shape(train.images()) == std::vector<int64_t>{60000, 1, 28, 28});
  // Balanced classes: 6000 of each label in train, 1000 in test.
  for (const auto* ds : {&train, &test}) {
    std::vector<int> counts(10, 0);
    for (double l : values(ds->targets())) {
      REQUIRE(l >= 0);
      REQUIRE(l <= 9);
      counts[static_cast<size_t>(l)]++;
    }
    int expected = ds == &train ? 6000 : 1000;
    for (int c : counts) CHECK(c == expected);
  }
  // The well-known normalization constants of Fashion-MNIST's training images.
  CHECK(train.images().mean().item<double>() == doctest::Approx(0.2860).epsilon(0.002));
  CHECK(train.images().std().item<double>() == doctest::Approx(0.3530).epsilon(0.002));
  // Pixels span [0, 1] (checked on the first 1000 images to keep the Debug suite quick).
  Tensor head = train.images().narrow(0, 0, 1000);
  CHECK(head.min().item<double>() == 0.0);
  CHECK(head.max().item<double>() == 1.0);
}

TEST_CASE("test_mnist: the byte-level IDX parser checks sizes before reading") {
  namespace idx = datasets::detail;
  // Images: the pixels of image_file(2), scaled by 1/255, in (2, 1, 28, 28).
  Bytes img = image_file(2);
  Tensor images = idx::parse_idx_images(img.data(), img.size(), "mem");
  REQUIRE(shape(images) == std::vector<int64_t>{2, 1, 28, 28});
  std::vector<double> got = values(images);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(img[16 + i] / 255.0f));
  // Labels, and the bytes past the data ignored as the file reader ignores them.
  Bytes lbl;
  put_u32(lbl, 2049);
  put_u32(lbl, 3);
  for (uint8_t v : {7, 0, 9, 200}) lbl.push_back(v);
  CHECK(values(idx::parse_idx_labels(lbl.data(), lbl.size(), "mem")) == std::vector<double>{7, 0, 9});

  check_error([&] { idx::parse_idx_images(img.data(), 15, "mem"); },
              "mem: truncated: expected a 16-byte IDX header, got 15 bytes");
  check_error([&] { idx::parse_idx_labels(lbl.data(), 0, "mem"); },
              "mem: truncated: expected a 8-byte IDX header, got 0 bytes");
  check_error([&] { idx::parse_idx_images(img.data(), img.size() - 1, "mem"); },
              "mem: truncated: expected 1568 bytes of image data, got 1567");
  check_error([&] { idx::parse_idx_labels(img.data(), img.size(), "mem"); },
              "mem: bad magic number 2051, expected 2049");
  Bytes odd = image_file(0, 2051, 28, 27);
  check_error([&] { idx::parse_idx_images(odd.data(), odd.size(), "mem"); },
              "mem: expected 28x28 images, got 28x27");
  lbl[8 + 1] = 10;
  check_error([&] { idx::parse_idx_labels(lbl.data(), lbl.size(), "mem"); },
              "mem: label 10 at index 1 is out of range [0, 10)");
  // A count of 2^32 - 1 images: 3.4 TB announced, 16 bytes present; refused before allocating.
  Bytes huge = image_file(0);
  huge[4] = huge[5] = huge[6] = huge[7] = 0xff;
  CHECK(idx::parse_idx_image_header(huge.data(), huge.size(), "mem").data_bytes ==
        uint64_t{0xffffffff} * 784);
  check_error([&] { idx::parse_idx_images(huge.data(), huge.size(), "mem"); },
              "mem: truncated: expected 3367254359280 bytes of image data, got 0");
}
