// TFRecord framing for TensorBoard event files: CRC32C (Castagnoli), its masked form, and the
// record layout. Plain C++ (no protobuf): SummaryWriter frames serialized Event messages with
// it, and tests check the CRC against published vectors.
//
// A record is   uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)
// with every integer little-endian, as TensorFlow's record_writer writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ember::tensorboard::detail {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `n` bytes, continuing from `crc`
/// (the CRC of the bytes before; 0 to start). crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

/// TFRecord's masked CRC: rotate right by 15 and add 0xa282ead8, so a CRC stored inside
/// CRC-protected data does not produce the CRC of zeros.
constexpr uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
constexpr uint32_t unmask_crc(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

/// `data` framed as one TFRecord (12-byte header, data, 4-byte footer).
std::string frame_record(std::string_view data);

}  // namespace ember::tensorboard::detail
