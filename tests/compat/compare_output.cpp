// compare_output: runs a compat program and compares what it prints with the output libtorch
// gave for the same source (tests/compat/expected/<name>.txt).
//   compare_output [--wording wording.txt] <expected.txt> <program> [args...]
// Lines are split on whitespace. Tokens that are numbers on both sides must agree within
// 1e-6 absolute + 1e-5 relative (all NaNs are equal: their sign is not a result); every other
// token, and the number of lines and tokens, must match exactly. Exit status 0 means equal.
// wording.txt lists exact (libtorch line, ember line) pairs where ember prints Python
// PyTorch's error text and libtorch's C++ text differs; only those exact lines are accepted.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr double kAbsTol = 1e-6;
constexpr double kRelTol = 1e-5;
constexpr int kMaxReported = 40;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> tokens(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// A token is a number only if strtod consumes all of it ("3)" or "2x3" are text).
bool parse_number(const std::string& t, double& v) {
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  return end != t.c_str() && *end == '\0';
}

bool tokens_match(const std::string& got, const std::string& want) {
  if (got == want) return true;
  double g, w;
  if (!parse_number(got, g) || !parse_number(want, w)) return false;
  if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
  if (std::isinf(g) || std::isinf(w)) return g == w;
  return std::fabs(g - w) <= kAbsTol + kRelTol * std::fabs(w);
}

// Index of the first differing token, or -1 when the lines match.
int first_difference(const std::string& got, const std::string& want) {
  std::vector<std::string> g = tokens(got), w = tokens(want);
  size_t n = std::min(g.size(), w.size());
  for (size_t i = 0; i < n; ++i)
    if (!tokens_match(g[i], w[i])) return static_cast<int>(i);
  return g.size() == w.size() ? -1 : static_cast<int>(n);
}

bool read_file(const char* path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  out = s.str();
  return true;
}

using Wording = std::set<std::pair<std::string, std::string>>;

// Pairs of lines "libtorch: <expected line>" then "ember: <accepted line>"; # starts a comment.
bool read_wording(const char* path, Wording& out) {
  std::string text;
  if (!read_file(path, text)) return false;
  const std::string lt = "libtorch: ", em = "ember: ";
  std::string pending;
  for (const std::string& line : split_lines(text)) {
    if (line.rfind(lt, 0) == 0) {
      pending = line.substr(lt.size());
    } else if (line.rfind(em, 0) == 0 && !pending.empty()) {
      out.emplace(pending, line.substr(em.size()));
      pending.clear();
    }
  }
  return true;
}

// Runs the program, capturing stdout (stderr passes through); returns its exit status.
int run_program(int argc, char** argv, std::string& out) {
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " '" : "'") + std::string(argv[i]) + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  Wording wording;
  if (argc > 2 && std::string(argv[1]) == "--wording") {
    if (!read_wording(argv[2], wording)) {
      std::fprintf(stderr, "cannot read %s\n", argv[2]);
      return 2;
    }
    argc -= 2;
    argv += 2;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s [--wording wording.txt] <expected.txt> <program> [args...]\n", argv[0]);
    return 2;
  }
  std::string expected_text, got_text;
  if (!read_file(argv[1], expected_text)) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  int status = run_program(argc - 2, argv + 2, got_text);
  std::vector<std::string> want = split_lines(expected_text), got = split_lines(got_text);

  int reported = 0, differences = 0, accepted = 0;
  size_t n = std::max(want.size(), got.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string& w = i < want.size() ? want[i] : std::string("<no line>");
    const std::string& g = i < got.size() ? got[i] : std::string("<no line>");
    int at = (i < want.size() && i < got.size()) ? first_difference(g, w) : 0;
    if (at < 0) continue;
    if (wording.count({w, g})) {
      std::printf("line %zu: accepted wording difference (wording.txt)\n", i + 1);
      ++accepted;
      continue;
    }
    ++differences;
    if (reported++ < kMaxReported)
      std::printf("line %zu differs (token %d)\n  expected: %s\n  got:      %s\n", i + 1, at + 1, w.c_str(),
                  g.c_str());
  }
  if (status != 0) std::printf("program exited with status %d\n", status);
  if (differences == 0 && status == 0) {
    std::printf("%zu lines match (%d by wording.txt)\n", want.size(), accepted);
    return 0;
  }
  std::printf("%d of %zu lines differ\n", differences, n);
  return 1;
}
