// A strict JSON reader for tests that check JSON ember writes (the profiler's Chrome trace):
// RFC 8259's grammar (numbers, escapes, no trailing commas), into a small value tree.
// Throws std::runtime_error naming the byte offset of the first thing that is not JSON.
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::test {

struct JsonValue {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  bool has(const std::string& key) const { return kind == kObject && object.count(key) > 0; }
  const JsonValue& operator[](const std::string& key) const {
    auto it = object.find(key);
    if (kind != kObject || it == object.end()) throw std::runtime_error("no key " + key);
    return it->second;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}
  JsonValue parse() {
    JsonValue v = value();
    ws();
    if (p_ != s_.size()) fail("trailing text");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("invalid JSON: " + what + " at byte " + std::to_string(p_));
  }
  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\r' || s_[p_] == '\t')) ++p_;
  }
  char peek() { return p_ < s_.size() ? s_[p_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  bool digit() const { return p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9'; }
  JsonValue value() {
    ws();
    JsonValue v;
    char c = peek();
    if (c == '{') {
      v.kind = JsonValue::kObject;
      ++p_;
      ws();
      if (peek() == '}') { ++p_; return v; }
      for (;;) {
        ws();
        std::string key = str();
        ws();
        expect(':');
        v.object[key] = value();
        ws();
        if (peek() == ',') { ++p_; continue; }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = JsonValue::kArray;
      ++p_;
      ws();
      if (peek() == ']') { ++p_; return v; }
      for (;;) {
        v.array.push_back(value());
        ws();
        if (peek() == ',') { ++p_; continue; }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = JsonValue::kString;
      v.string = str();
      return v;
    }
    for (const char* lit : {"true", "false", "null"})
      if (s_.compare(p_, std::string(lit).size(), lit) == 0) {
        p_ += std::string(lit).size();
        v.kind = lit[0] == 'n' ? JsonValue::kNull : JsonValue::kBool;
        v.boolean = lit[0] == 't';
        return v;
      }
    return number();
  }
  JsonValue number() {
    size_t start = p_;
    if (peek() == '-') ++p_;
    if (peek() == '0') ++p_;
    else if (digit()) while (digit()) ++p_;
    else fail("expected a value");
    if (peek() == '.') {
      ++p_;
      if (!digit()) fail("expected a digit after '.'");
      while (digit()) ++p_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++p_;
      if (peek() == '+' || peek() == '-') ++p_;
      if (!digit()) fail("expected an exponent");
      while (digit()) ++p_;
    }
    JsonValue v;
    v.kind = JsonValue::kNumber;
    v.number = std::strtod(s_.substr(start, p_ - start).c_str(), nullptr);
    return v;
  }
  std::string str() {
    expect('"');
    std::string out;
    for (;;) {
      if (p_ >= s_.size()) fail("unterminated string");
      char c = s_[p_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') { out += c; continue; }
      char e = peek();
      ++p_;
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (p_ + 4 > s_.size()) fail("short \\u escape");
          unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(p_, 4), nullptr, 16));
          p_ += 4;
          if (cp < 0x80) out += static_cast<char>(cp);
          else out += '?';  // the tests need no non-ASCII escapes
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  const std::string& s_;
  size_t p_ = 0;
};

inline JsonValue parse_json(const std::string& text) { return JsonParser(text).parse(); }

}  // namespace ember::test
