// A TFRecord reader for the tests, written apart from tools/tensorboard/record_writer.cpp: it
// decodes the framing byte by byte (little-endian), checks both masked CRC32Cs of every record
// and returns the payloads. Failures throw std::runtime_error naming the record.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/tools/tensorboard/record_writer.h"

namespace tfrecord_test {

inline uint64_t read_le(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<size_t>(i)]);
  return v;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> read_records(const std::filesystem::path& path) {
  using ember::tensorboard::detail::crc32c;
  using ember::tensorboard::detail::unmask_crc;
  const std::string bytes = read_file(path);
  std::vector<std::string> records;
  size_t at = 0;
  while (at < bytes.size()) {
    const std::string where = path.filename().string() + " record " + std::to_string(records.size());
    if (bytes.size() - at < 12) throw std::runtime_error(where + ": truncated header");
    const uint64_t length = read_le(bytes, at, 8);
    if (unmask_crc(static_cast<uint32_t>(read_le(bytes, at + 8, 4))) != crc32c(bytes.data() + at, 8))
      throw std::runtime_error(where + ": bad length CRC");
    if (bytes.size() - at - 12 < length + 4) throw std::runtime_error(where + ": truncated data");
    std::string data = bytes.substr(at + 12, length);
    if (unmask_crc(static_cast<uint32_t>(read_le(bytes, at + 12 + length, 4))) != crc32c(data.data(), data.size()))
      throw std::runtime_error(where + ": bad data CRC");
    records.push_back(std::move(data));
    at += 12 + length + 4;
  }
  return records;
}

/// The event files directly in `dir`, sorted by name.
inline std::vector<std::filesystem::path> event_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// A fresh directory under the system's temporary directory, removed with the object.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("ember_test_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace tfrecord_test
