// The JSON the safetensors header parser (core/serialize.cpp) reads and writes: a minimal
// reader that accepts exactly what safetensors writes (objects, arrays, strings, integers) and
// nothing else, its string writer, and the UTF-8 check the header passes first. Separate from
// serialize.cpp so the file format's rules and the text syntax can each be read alone; errors
// are safetensors file errors (bad_file), worded as before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::detail::safetensors {

/// Throws "safetensors file '<name>': <what>".
[[noreturn]] void bad_file(const std::string& name, const std::string& what);
/// As above, prefixed with the fault's class (the Rust crate's SafeTensorError variant).
[[noreturn]] void bad_file(const std::string& name, const char* kind, const std::string& what);

// A malformed header (bad JSON, or JSON that is not a safetensors header), as the Rust crate's
// serde step reports it.
inline constexpr const char* kDeser = "InvalidHeaderDeserialization";

/// The byte offset of the first invalid UTF-8 sequence in [p, p + n), or n when there is
/// none. Strict RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
size_t invalid_utf8_at(const uint8_t* p, size_t n);

struct Json {
  enum Kind { kString, kInt, kArray, kObject } kind = kString;
  std::string str;
  int64_t num = 0;
  std::vector<Json> arr;
  struct Member;
  std::vector<Member> obj;  // in text order; duplicates are rejected
};
// A separate struct, not std::pair<std::string, Json>: a pair may not hold the still
// incomplete Json (Clang with libstdc++ refuses it); a vector of an incomplete type may.
struct Json::Member {
  std::string key;
  Json value;
};

/// Parses a safetensors header's JSON text [text, text + n) of the file `name` into a tree;
/// any fault raises bad_file (InvalidHeaderStart or InvalidHeaderDeserialization).
Json parse_json_header(const char* text, size_t n, const std::string& name);

/// Appends s to out as a JSON string literal (quotes and control characters escaped).
void write_json_string(std::string& out, const std::string& s);

}  // namespace ember::detail::safetensors
