// TCPStore's wire format and the pieces its client (tcp_store.cpp) and server
// (tcp_store_server.cpp) share: commands, statuses, the payload writer and reader. Internal to
// dist/.
//
// Wire protocol. Every message, both ways, is one frame: a 4-byte little-endian payload
// length, then the payload. Inside a payload, integers are 8-byte little-endian two's
// complement and a byte string is its 8-byte length then its bytes.
//   request  = command:u8, then its arguments
//     SET key value              -> OK
//     GET key                    -> OK value | NOT_FOUND
//     ADD key delta:i64          -> OK new:i64 | ERROR message
//     COMPARE_SET key exp desired-> OK value
//     CHECK n:i64 key*n          -> OK present:u8
//     DELETE key                 -> OK existed:u8
//     NUM_KEYS                   -> OK count:i64
//     WAIT timeout_ms:i64 n key*n-> OK (all set) | TIMEOUT  (timeout_ms 0: none)
//   reply    = status:u8 (OK, ERROR, TIMEOUT, NOT_FOUND), then its results
// A client sends one request and reads its reply before the next (TCPStore's mutex).
#pragma once

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/dist/store.h"

namespace ember::dist::tcp_wire {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

enum Command : uint8_t { kSet = 1, kGet, kAdd, kCompareSet, kCheck, kDelete, kNumKeys, kWait };
enum Status : uint8_t { kOk = 0, kError, kTimeout, kNotFound };

// The key every process adds 1 to when the store waits for workers (c10d's "init/").
inline const std::string kInitKey = "init/";
// c10d's TCPStore puts "/" before user keys, so its messages name keys as "/k".
inline const std::string kKeyPrefix = "/";

inline std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// ---- payload encoding --------------------------------------------------------------------

class Writer {
 public:
  Writer& u8(uint8_t v) {
    buf_.push_back(v);
    return *this;
  }
  Writer& i64(int64_t v) {
    auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<uint8_t>(u >> (8 * i)));
    return *this;
  }
  Writer& bytes(const uint8_t* data, size_t n) {
    i64(static_cast<int64_t>(n));
    buf_.insert(buf_.end(), data, data + n);
    return *this;
  }
  Writer& bytes(const std::vector<uint8_t>& v) { return bytes(v.data(), v.size()); }
  Writer& bytes(const std::string& s) { return bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  // The payload with its 4-byte length in front.
  std::vector<uint8_t> frame() const {
    EMBER_CHECK(buf_.size() <= UINT32_MAX, "TCPStore: a message of ", buf_.size(),
                " bytes is over the protocol's limit of 4 GiB");
    auto n = static_cast<uint32_t>(buf_.size());
    std::vector<uint8_t> out(4 + buf_.size());
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
    if (n) std::memcpy(out.data() + 4, buf_.data(), n);
    return out;
  }

 private:
  std::vector<uint8_t> buf_;
};

// Reads a payload; a malformed one raises (the server drops that client).
class Reader {
 public:
  Reader(const uint8_t* data, size_t n) : p_(data), end_(data + n) {}
  uint8_t u8() {
    need(1);
    return *p_++;
  }
  int64_t i64() {
    need(8);
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += 8;
    return static_cast<int64_t>(u);
  }
  std::vector<uint8_t> bytes() {
    auto n = i64();
    EMBER_CHECK(n >= 0 && n <= end_ - p_, "TCPStore: malformed message");
    std::vector<uint8_t> v(p_, p_ + n);
    p_ += n;
    return v;
  }
  std::string string() { return Store::to_string(bytes()); }

 private:
  void need(ptrdiff_t n) const { EMBER_CHECK(end_ - p_ >= n, "TCPStore: malformed message"); }
  const uint8_t* p_;
  const uint8_t* end_;
};

inline uint32_t frame_length(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

inline std::optional<int64_t> parse_int(const std::vector<uint8_t>& v) {
  int64_t out = 0;
  auto first = reinterpret_cast<const char*>(v.data());
  auto [ptr, ec] = std::from_chars(first, first + v.size(), out);
  if (ec != std::errc() || ptr != first + v.size() || v.empty()) return std::nullopt;
  return out;
}

inline void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace ember::dist::tcp_wire
