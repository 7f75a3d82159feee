// The JSON reader and string writer of the safetensors header (see safetensors_json.h): a
// file of its own so that core/serialize.cpp holds the format's rules (dtypes, offsets,
// tiling) and this one the text syntax.
#include "ember/core/safetensors_json.h"

#include <unordered_set>

#include "ember/core/error.h"

namespace ember::detail::safetensors {

namespace {

constexpr int kMaxJsonDepth = 8;  // the format needs 3 (file, entry, shape/offsets)
// The longest JSON array accepted: shapes (and the 2 data_offsets) are the format's only
// arrays, so a crafted header of "[0,0,0,..." cannot allocate ~50 bytes per 2 header bytes.
constexpr size_t kMaxJsonArray = 1024;

}  // namespace

[[noreturn]] void bad_file(const std::string& name, const std::string& what) {
  detail::throw_error(detail::str_cat("safetensors file '", name, "': ", what));
}
[[noreturn]] void bad_file(const std::string& name, const char* kind, const std::string& what) {
  bad_file(name, detail::str_cat(kind, ": ", what));
}

size_t invalid_utf8_at(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0 || n - i < len) return i;
    // The second byte's range excludes overlong forms (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    uint8_t lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    uint8_t hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return n;
}

namespace {

class JsonReader {
 public:
  JsonReader(const char* text, size_t n, const std::string& name)
      : p_(text), begin_(text), end_(text + n), name_(name) {}

  Json parse_document() {
    skip_space();
    if (peek() != '{')
      bad_file(
          name_, "InvalidHeaderStart",
          detail::str_cat("invalid JSON header: the header must be a JSON object at byte ", p_ - begin_));
    Json v = parse_value(0);
    skip_space();
    if (p_ != end_) fail("unexpected text after the JSON object");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    bad_file(name_, kDeser, detail::str_cat("invalid JSON header: ", what, " at byte ", p_ - begin_));
  }
  char peek() const { return p_ < end_ ? *p_ : '\0'; }
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(detail::str_cat("expected '", c, "'"));
    ++p_;
  }

  Json parse_value(int depth) {
    if (depth > kMaxJsonDepth) fail("nesting too deep");
    skip_space();
    Json v;
    char c = peek();
    if (c == '{') {
      v.kind = Json::kObject;
      parse_object(v, depth);
    } else if (c == '[') {
      v.kind = Json::kArray;
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind = Json::kString;
      v.str = parse_string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::kInt;
      v.num = parse_int();
    } else {
      fail(p_ == end_ ? std::string("unexpected end") : detail::str_cat("unexpected character '", c, "'"));
    }
    return v;
  }

  void parse_object(Json& v, int depth) {
    ++p_;  // '{'
    skip_space();
    if (peek() == '}') return void(++p_);
    std::unordered_set<std::string> seen;  // a header may name many thousands of tensors
    while (true) {
      skip_space();
      if (peek() != '"') fail("expected a string key");
      std::string key = parse_string();
      if (!seen.insert(key).second) fail(detail::str_cat("duplicate key '", key, "'"));
      expect(':');
      v.obj.push_back(Json::Member{std::move(key), parse_value(depth + 1)});
      skip_space();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Json& v, int depth) {
    ++p_;  // '['
    skip_space();
    if (peek() == ']') return void(++p_);
    while (true) {
      if (v.arr.size() == kMaxJsonArray)
        fail(detail::str_cat("an array longer than ", kMaxJsonArray, " entries"));
      v.arr.push_back(parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      expect(']');
      return;
    }
  }

  int64_t parse_int() {
    bool neg = peek() == '-';
    if (neg) ++p_;
    if (!(peek() >= '0' && peek() <= '9')) fail("expected a digit");
    if (peek() == '0' && p_ + 1 < end_ && p_[1] >= '0' && p_[1] <= '9') fail("leading zero in a number");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      uint64_t d = static_cast<uint64_t>(*p_++ - '0');
      if (v > (static_cast<uint64_t>(INT64_MAX) - d) / 10) fail("integer out of range");
      v = v * 10 + d;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') fail("numbers must be integers");
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  unsigned hex4() {
    if (end_ - p_ < 4) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string parse_string() {
    ++p_;  // opening quote
    std::string s;
    while (true) {
      if (p_ >= end_) fail("unterminated string");
      char c = *p_++;
      if (c == '"') return s;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        s += c;
        continue;
      }
      if (p_ >= end_) fail("unterminated string");
      char e = *p_++;
      switch (e) {
        case '"':
          s += '"';
          break;
        case '\\':
          s += '\\';
          break;
        case '/':
          s += '/';
          break;
        case 'b':
          s += '\b';
          break;
        case 'f':
          s += '\f';
          break;
        case 'n':
          s += '\n';
          break;
        case 'r':
          s += '\r';
          break;
        case 't':
          s += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a UTF-16 surrogate pair encodes one code point
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("unpaired surrogate in \\u escape");
            p_ += 2;
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("unpaired surrogate in \\u escape");
          }
          append_utf8(s, cp);
          break;
        }
        default:
          fail(detail::str_cat("invalid escape '\\", e, "'"));
      }
    }
  }

  const char* p_;
  const char* begin_;
  const char* end_;
  const std::string& name_;
};

}  // namespace

Json parse_json_header(const char* text, size_t n, const std::string& name) {
  return JsonReader(text, n, name).parse_document();
}

void write_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 0xF];
    } else {
      out += c;  // UTF-8 passes through unchanged
    }
  }
  out += '"';
}

}  // namespace ember::detail::safetensors
