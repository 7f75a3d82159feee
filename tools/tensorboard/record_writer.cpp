// CRC32C and TFRecord framing (record_writer.h).
#include "ember/tools/tensorboard/record_writer.h"

#include <array>

namespace ember::tensorboard::detail {

namespace {

// The byte-at-a-time table of the reflected Castagnoli polynomial: entry b is the CRC
// register after shifting the byte b through it.
constexpr std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int k = 0; k < 8; ++k) r = (r & 1u) ? (r >> 1) ^ 0x82F63B78u : r >> 1;
    table[b] = r;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32cTable = make_crc32c_table();

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
}

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t r = ~crc;  // the register starts (and ends) inverted
  for (size_t i = 0; i < n; ++i) r = kCrc32cTable[(r ^ p[i]) & 0xFFu] ^ (r >> 8);
  return ~r;
}

std::string frame_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_le(out, data.size(), 8);
  put_le(out, mask_crc(crc32c(out.data(), 8)), 4);
  out.append(data);
  put_le(out, mask_crc(crc32c(data.data(), data.size())), 4);
  return out;
}

}  // namespace ember::tensorboard::detail
