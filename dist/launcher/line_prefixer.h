// ember-run's output handling: the per-worker line prefix (torchrun's "[default0]:" and its
// TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE) and the buffer that turns a worker's pipe bytes into
// whole prefixed lines, so two workers' output never mixes inside one line.
// Plain C++ without I/O, so tests/launcher/test_line_prefixer.cpp exercises it directly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ember::dist::launcher {

// torchrun's default prefix: "[${role_name}${local_rank}]:" (tail_log.py), role "default".
inline constexpr std::string_view kDefaultPrefixTemplate = "[${role_name}${local_rank}]:";

// Substitutes ${role_name}, ${rank}, ${local_rank} (and the $name spellings) the way Python's
// string.Template.safe_substitute does for torchrun's template: "$$" is a literal "$", and an
// unknown or malformed placeholder stays as written.
inline std::string expand_prefix_template(std::string_view tmpl, std::string_view role, int rank,
                                          int local_rank) {
  auto value_of = [&](std::string_view name, std::string& out) {
    if (name == "role_name") out = role;
    else if (name == "rank") out = std::to_string(rank);
    else if (name == "local_rank") out = std::to_string(local_rank);
    else return false;
    return true;
  };
  auto is_ident = [](char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
  };
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    char c = tmpl[i];
    if (c != '$' || i + 1 >= tmpl.size()) {
      out += c;
      ++i;
      continue;
    }
    char next = tmpl[i + 1];
    std::string value;
    if (next == '$') {
      out += '$';
      i += 2;
    } else if (next == '{') {
      size_t close = tmpl.find('}', i + 2);
      if (close != std::string_view::npos && value_of(tmpl.substr(i + 2, close - i - 2), value)) {
        out += value;
        i = close + 1;
      } else {
        out += c;
        ++i;
      }
    } else if (is_ident(next, true)) {
      size_t end = i + 1;
      while (end < tmpl.size() && is_ident(tmpl[end], end == i + 1)) ++end;
      if (value_of(tmpl.substr(i + 1, end - i - 1), value)) {
        out += value;
        i = end;
      } else {
        out += c;
        ++i;
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// Collects one stream's bytes and releases them as whole lines, each preceded by the prefix.
// A line longer than max_line is cut (with a newline) so a worker that never writes '\n'
// cannot grow the launcher's memory without bound.
class LinePrefixer {
 public:
  explicit LinePrefixer(std::string prefix, size_t max_line = size_t{1} << 20)
      : prefix_(std::move(prefix)), max_line_(max_line) {}

  // Appends to `out` every line completed by `data`; keeps the unfinished tail.
  void feed(std::string_view data, std::string& out) {
    while (!data.empty()) {
      size_t nl = data.find('\n');
      if (nl == std::string_view::npos) {
        pending_.append(data);
        while (pending_.size() >= max_line_) {
          emit(std::string_view(pending_).substr(0, max_line_), out);
          pending_.erase(0, max_line_);
        }
        return;
      }
      if (pending_.empty()) {
        emit(data.substr(0, nl), out);
      } else {
        pending_.append(data.substr(0, nl));
        emit(pending_, out);
        pending_.clear();
      }
      data.remove_prefix(nl + 1);
    }
  }

  // At end of stream: the unfinished last line, if any, closed with a newline (torchrun writes
  // it without one; the newline keeps the next worker's line from joining it).
  void finish(std::string& out) {
    if (!pending_.empty()) {
      emit(pending_, out);
      pending_.clear();
    }
  }

  bool has_pending() const { return !pending_.empty(); }

 private:
  void emit(std::string_view line, std::string& out) const {
    out.append(prefix_);
    out.append(line);
    out.push_back('\n');
  }

  std::string prefix_;
  size_t max_line_;
  std::string pending_;
};

}  // namespace ember::dist::launcher
