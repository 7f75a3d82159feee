// Every class of malformed safetensors file is rejected with an ember::Error naming the file
// and the class (the Rust `safetensors` crate's SafeTensorError variant), before any tensor
// is built. Each file is assembled byte by byte here, independent of ember's writer.
#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/serialize.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_error;

namespace {

using Bytes = std::vector<uint8_t>;

/// The 8-byte little-endian length, written one byte at a time.
void put_u64(Bytes& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

/// A file: the declared header length, the header's bytes, then `data` bytes of value 0.
Bytes file_of(uint64_t declared, const std::string& header, size_t data = 0) {
  Bytes out;
  put_u64(out, declared);
  for (char c : header) out.push_back(static_cast<uint8_t>(c));
  out.insert(out.end(), data, 0);
  return out;
}
Bytes file_of(const std::string& header, size_t data = 0) { return file_of(header.size(), header, data); }

/// One tensor entry's JSON.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, uint64_t begin,
                  uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + shape + "],\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

/// Rejected with "safetensors file 'bad': <kind>: ..." containing `text`.
void check_rejected(const Bytes& f, const std::string& kind, const std::string& text) {
  INFO("class " << kind);
  check_error([&] { deserialize_safetensors(f, "bad"); }, "safetensors file 'bad': " + kind + ": ");
  check_error([&] { deserialize_safetensors(f, "bad"); }, text);
  check_error([&] { deserialize_safetensors_metadata(f, "bad"); }, kind);
}

const std::string kW = entry("w", "F32", "2", 0, 8);  // 8 bytes of data

}  // namespace

TEST_CASE("test_safetensors_rejects: the base file is valid (each case below breaks one thing)") {
  OrderedDict<std::string, Tensor> d = deserialize_safetensors(file_of("{" + kW + "}", 8));
  REQUIRE(d.size() == 1);
  CHECK(d["w"].sizes().vec() == std::vector<int64_t>{2});
  CHECK(d["w"].dtype() == kFloat);
}

TEST_CASE("test_safetensors_rejects: HeaderTooSmall: fewer than 8 bytes") {
  for (size_t n = 0; n < 8; ++n)
    check_rejected(
        Bytes(n, 0), "HeaderTooSmall",
        "file is " + std::to_string(n) + " bytes; a safetensors file starts with an 8-byte header length");
}

TEST_CASE("test_safetensors_rejects: HeaderTooLarge: a header length over 100,000,000") {
  check_rejected(file_of(100000001, "{}"), "HeaderTooLarge",
                 "header length 100000001 is larger than the limit of 100000000 bytes");
  check_rejected(file_of(UINT64_MAX, "{}"), "HeaderTooLarge", "header length 18446744073709551615");
  // At the limit the length is allowed, and this file is then too short for it.
  check_rejected(file_of(100000000, "{}"), "InvalidHeaderLength",
                 "header length 100000000 is larger than the file");
}

TEST_CASE("test_safetensors_rejects: InvalidHeaderLength: a header past the end of the file") {
  check_rejected(file_of(3, "{}"), "InvalidHeaderLength",
                 "header length 3 is larger than the file (10 bytes)");
  check_rejected(file_of(1, "{"), "InvalidHeaderLength", "header length 1 is too small for a JSON object");
  check_rejected(file_of(0, ""), "InvalidHeaderLength", "header length 0 is too small");
}

TEST_CASE("test_safetensors_rejects: InvalidHeader: a header that is not UTF-8") {
  // Each byte string is invalid UTF-8 (RFC 3629), placed inside a metadata string.
  const std::vector<std::pair<std::string, const char*>> bad = {
      {"\xff", "a byte that never starts a sequence"},     {"\xc0\xaf", "an overlong '/'"},
      {"\xe0\x80\xaf", "an overlong 3-byte form"},         {"\xed\xa0\x80", "a UTF-16 surrogate (U+D800)"},
      {"\xf4\x90\x80\x80", "a code point above U+10FFFF"}, {"\xc3", "a 2-byte sequence cut short"},
      {"\xe2\x82", "a 3-byte sequence cut short"},         {"\x80", "a lone continuation byte"},
  };
  for (const auto& item : bad) {
    const std::string& bytes =
        item.first;  // (no structured binding: INFO captures it, which Clang 14 cannot)
    INFO(item.second);
    std::string header = "{\"__metadata__\":{\"k\":\"a" + bytes + "\"}}";
    size_t at = header.find(bytes);
    check_rejected(file_of(header), "InvalidHeader",
                   "the header is not valid UTF-8 (at byte " + std::to_string(at) + ")");
  }
  // Valid multi-byte UTF-8 (2, 3 and 4 bytes) passes: a tensor named "wé€😀".
  std::string name = "w\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  OrderedDict<std::string, Tensor> d =
      deserialize_safetensors(file_of("{" + entry(name, "F32", "2", 0, 8) + "}", 8));
  CHECK(d.contains(name));
}

TEST_CASE("test_safetensors_rejects: InvalidHeaderStart and InvalidHeaderDeserialization: not JSON") {
  check_rejected(file_of("[1]"), "InvalidHeaderStart", "the header must be a JSON object at byte 0");
  check_rejected(file_of("  xy"), "InvalidHeaderStart", "the header must be a JSON object at byte 2");
  check_rejected(file_of("{\"w\"}"), "InvalidHeaderDeserialization",
                 "invalid JSON header: expected ':' at byte 4");
  check_rejected(file_of("{\"w\":{}"), "InvalidHeaderDeserialization", "invalid JSON header: expected '}'");
  check_rejected(file_of("{\"w\":1.5}"), "InvalidHeaderDeserialization", "numbers must be integers");
  check_rejected(file_of("{\"w\":{}} {}"), "InvalidHeaderDeserialization",
                 "unexpected text after the JSON object");
}

TEST_CASE("test_safetensors_rejects: InvalidHeaderDeserialization: unknown dtype") {
  check_rejected(file_of("{" + entry("w", "F31", "2", 0, 8) + "}", 8), "InvalidHeaderDeserialization",
                 "unknown dtype 'F31' for tensor 'w'");
  check_rejected(file_of("{" + entry("w", "f32", "2", 0, 8) + "}", 8), "InvalidHeaderDeserialization",
                 "unknown dtype 'f32'");  // names are case-sensitive, as in the format
}

TEST_CASE("test_safetensors_rejects: InvalidHeaderDeserialization: duplicate names") {
  check_rejected(file_of("{" + kW + "," + entry("w", "F32", "2", 8, 16) + "}", 16),
                 "InvalidHeaderDeserialization", "duplicate key 'w'");
  // Equal after escape decoding: "w" and "\u0077" name the same tensor.
  check_rejected(file_of("{" + kW + "," + entry("\\u0077", "F32", "2", 8, 16) + "}", 16),
                 "InvalidHeaderDeserialization", "duplicate key 'w'");
  check_rejected(file_of("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}"), "InvalidHeaderDeserialization",
                 "duplicate key 'a'");
}

TEST_CASE("test_safetensors_rejects: InvalidHeaderDeserialization: arrays longer than 1024 entries") {
  // A shape of 1024 ones is a valid 1024-dimensional tensor of one element; 1025 entries are
  // refused while parsing, before anything is allocated for them.
  std::string ones;
  for (int i = 0; i < 1024; ++i) ones += i ? ",1" : "1";
  CHECK(deserialize_safetensors(file_of("{" + entry("w", "F32", ones, 0, 4) + "}", 4))["w"].dim() == 1024);
  check_rejected(file_of("{" + entry("w", "F32", ones + ",1", 0, 4) + "}", 4), "InvalidHeaderDeserialization",
                 "an array longer than 1024 entries");
}

TEST_CASE("test_safetensors_rejects: InvalidOffset: gaps, overlaps and offsets out of order") {
  // A gap between two tensors, and one before the first.
  check_rejected(file_of("{" + kW + "," + entry("v", "F32", "1", 12, 16) + "}", 16), "InvalidOffset",
                 "bytes [8, 12) of the data buffer belong to no tensor (before 'v')");
  check_rejected(file_of("{" + entry("w", "F32", "2", 4, 12) + "}", 12), "InvalidOffset",
                 "bytes [0, 4) of the data buffer belong to no tensor (before 'w')");
  // Overlapping tensors.
  check_rejected(file_of("{" + kW + "," + entry("v", "F32", "2", 4, 12) + "}", 12), "InvalidOffset",
                 "tensors 'w' and 'v' overlap in the data buffer");
  // begin after end.
  check_rejected(file_of("{" + entry("w", "F32", "0", 8, 0) + "}", 8), "InvalidOffset",
                 "tensor 'w' has data_offsets [8, 0] with begin > end");
  // Header order need not be data order (the format's JSON object is unordered): valid.
  CHECK(deserialize_safetensors(file_of("{" + entry("v", "F32", "1", 8, 12) + "," + kW + "}", 12)).size() ==
        2);
}

TEST_CASE("test_safetensors_rejects: TensorInvalidInfo: byte size not matching the shape") {
  check_rejected(file_of("{" + entry("w", "F32", "3", 0, 8) + "}", 8), "TensorInvalidInfo",
                 "tensor 'w' of dtype F32 and shape [3] needs 12 bytes but its data_offsets span 8");
  check_rejected(file_of("{" + entry("w", "F64", "2,0", 0, 8) + "}", 8), "TensorInvalidInfo",
                 "needs 0 bytes but its data_offsets span 8");
}

TEST_CASE("test_safetensors_rejects: ValidationOverflow: shapes whose byte size overflows") {
  // 2^32 * 2^32 elements: the product wraps to 0 in unchecked 64-bit arithmetic, which would
  // match data_offsets [0, 0].
  check_rejected(file_of("{" + entry("w", "U8", "4294967296,4294967296", 0, 0) + "}"), "ValidationOverflow",
                 "the shape of tensor 'w' is too large");
  // 2^62 float32 elements: the element count fits, the byte count (2^64) does not.
  check_rejected(file_of("{" + entry("w", "F32", "4611686018427387904", 0, 0) + "}"), "ValidationOverflow",
                 "its byte size overflows 64 bits");
  // A zero size makes the tensor empty, but the other sizes must still give int64 strides.
  check_rejected(file_of("{" + entry("w", "U8", "0,4294967296,4294967296", 0, 0) + "}"), "ValidationOverflow",
                 "the shape of tensor 'w' is too large");
}

TEST_CASE("test_safetensors_rejects: MetadataIncompleteBuffer: data missing or trailing bytes") {
  check_rejected(file_of("{" + kW + "}", 7), "MetadataIncompleteBuffer",
                 "data_offsets [0, 8] of tensor 'w' are out of range: the data buffer has 7 bytes");
  check_rejected(file_of("{" + kW + "}", 9), "MetadataIncompleteBuffer",
                 "the data buffer has 9 bytes but the tensors cover 8 (trailing bytes after the data)");
  check_rejected(file_of("{}", 1), "MetadataIncompleteBuffer",
                 "the data buffer has 1 bytes but the tensors cover 0");
}

TEST_CASE("test_safetensors_rejects: every truncation of a valid file is rejected, never a crash") {
  Bytes whole =
      file_of("{\"__metadata__\":{\"k\":\"v\"}," + kW + "," + entry("b", "BOOL", "2", 8, 10) + "}", 10);
  REQUIRE(deserialize_safetensors(whole).size() == 2);
  for (size_t n = 0; n < whole.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    check_error([&] { deserialize_safetensors(cut, "cut"); }, "safetensors file 'cut': ");
  }
}
