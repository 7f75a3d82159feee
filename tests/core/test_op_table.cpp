// The sweeps the op table (tests/op_table.h) drives on the CPU: float64 gradcheck of every
// differentiable row on contiguous and transposed inputs, the dtype sweep, the coverage
// check against the op names recorded in core/ops/*.cpp, and docs/ops.md as the table's
// rendering.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "op_check.h"
#include "op_table.h"

using namespace ember;
using ember::test::accepts;
using ember::test::check_grad;
using ember::test::op_table;
using ember::test::OpRow;

namespace {

const std::vector<ScalarType> kEveryDtype = {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64,
                                             kHalf, kBFloat16, kFloat, kDouble};

/// A float64 leaf of `shape` sampled from r, requiring grad.
Tensor leaf(IntArrayRef shape, ember::test::Range r) { return ember::test::rand_leaf(shape, r.lo, r.hi); }

/// The row's inputs in dtype t (values in its ranges, then converted).
TensorList sample_inputs(const OpRow& row, ScalarType t) {
  TensorList in;
  for (int i = 0; i < row.arity; ++i) {
    Tensor x = rand({2, 3}, kDouble) * (row.in[i].hi - row.in[i].lo) + row.in[i].lo;
    in.push_back(t == kBool ? x > 0 : x.to(t));
  }
  return in;
}

std::string domain_text(MapDomain d) {
  switch (d) {
    case MapDomain::kFloating: return "floating";
    case MapDomain::kNumbers: return "all but bool";
    case MapDomain::kIntegral: return "bool and integers";
    case MapDomain::kBool: return "bool";
    case MapDomain::kAll: break;
  }
  return "all";
}

/// docs/ops.md: the table as a newcomer reads it.
std::string render_markdown() {
  std::ostringstream md;
  md << "# Op table\n\n"
        "Generated from tests/op_table.h by tests/core/test_op_table.cpp (run it with EMBER_UPDATE_DOCS=1\n"
        "to rewrite this page; the test fails while the page and the table differ). Every row is\n"
        "gradchecked in float64 (when differentiable), swept over every dtype (the accepted ones run,\n"
        "the others raise) and, on a machine with a GPU, compared between the CPU and CUDA.\n\n"
        "| op | family | dtypes | CPU | CUDA | autograd |\n"
        "|---|---|---|---|---|---|\n";
  for (const OpRow& r : op_table())
    md << "| `" << r.name << "` | " << r.family << " | " << domain_text(r.dtypes) << " | yes | "
       << (r.cuda ? "yes" : "no") << " | " << (r.differentiable ? "yes" : "no") << " |\n";
  return md.str();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The source checkout, which ctest passes (tests/CMakeLists.txt); empty when run by hand.
std::string source_dir() {
  const char* d = std::getenv("EMBER_SOURCE_DIR");
  return d ? d : "";
}

}  // namespace

TEST_CASE("test_op_table: float64 gradcheck of every differentiable row, contiguous and transposed") {
  for (const OpRow& row : op_table()) {
    if (!row.differentiable) continue;
    INFO(std::string(row.name));
    manual_seed(7);
    TensorList in;
    for (int i = 0; i < row.arity; ++i) in.push_back(leaf({2, 3}, row.in[i]));
    check_grad(row.fn, in);
    TensorList in_t;
    for (int i = 0; i < row.arity; ++i) in_t.push_back(leaf({3, 2}, row.in[i]));
    check_grad([&row](const TensorList& x) {
      TensorList t;
      for (const Tensor& v : x) t.push_back(v.t());
      return row.fn(t);
    }, in_t);
  }
}

TEST_CASE("test_op_table: every accepted dtype runs, every other raises an ember::Error") {
  for (const OpRow& row : op_table()) {
    for (ScalarType t : kEveryDtype) {
      INFO(std::string(row.name) << " on " << std::string(dtype_name(t)));
      TensorList in = sample_inputs(row, t);
      bool ran = true;
      try {
        Tensor out = row.fn(in);
        CHECK(out.sizes().vec() == std::vector<int64_t>{2, 3});
      } catch (const Error&) {
        ran = false;
      }
      CHECK(ran == accepts(row.dtypes, t));
    }
  }
}

TEST_CASE("test_op_table: every op name recorded in core/ops is a row or listed as not in the table yet") {
  std::string root = source_dir();
  if (root.empty()) {
    MESSAGE("EMBER_SOURCE_DIR is not set (ctest sets it): coverage not checked");
    return;
  }
  std::set<std::string> in_source;
  // name() returns a literal, or picks one of two (remainder or fmod, maximum or minimum, ...).
  std::regex name_re(R"re(const char\* name\(\) const override \{ return "([A-Za-z0-9_.]+)"; \})re");
  std::regex choice_re(R"re(const char\* name\(\) const override \{ return \w+ \? "([A-Za-z0-9_.]+)" : "([A-Za-z0-9_.]+)"; \})re");
  for (const auto& entry : std::filesystem::directory_iterator(root + "/core/ops")) {
    if (entry.path().extension() != ".cpp") continue;
    std::string text = read_file(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) in_source.insert((*it)[1]);
    for (std::sregex_iterator it(text.begin(), text.end(), choice_re), end; it != end; ++it) {
      in_source.insert((*it)[1]);
      in_source.insert((*it)[2]);
    }
  }
  REQUIRE(in_source.size() > 50);  // the pattern still finds the ops
  std::set<std::string> rows, waiting(ember::test::ops_not_in_table_yet().begin(),
                                      ember::test::ops_not_in_table_yet().end());
  for (const OpRow& r : op_table())
    if (*r.node) rows.insert(r.node);
  for (const std::string& n : in_source) {
    INFO("op \"" << n << "\" (core/ops/) has no row in tests/op_table.h");
    CHECK((rows.count(n) || waiting.count(n)));
  }
  for (const std::string& n : waiting) {
    INFO("\"" << n << "\" is listed as not in the table yet, but " << std::string(rows.count(n) ? "has a row" : "is not in core/ops/"));
    CHECK((!rows.count(n) && in_source.count(n)));
  }
  for (const std::string& n : rows) {
    INFO("row node \"" << n << "\" is not an op name recorded in core/ops/");
    CHECK(in_source.count(n));
  }
}

TEST_CASE("test_op_table: docs/ops.md is the table's rendering") {
  std::string root = source_dir();
  if (root.empty()) {
    MESSAGE("EMBER_SOURCE_DIR is not set (ctest sets it): docs/ops.md not checked");
    return;
  }
  std::string path = root + "/docs/ops.md", want = render_markdown();
  const char* update = std::getenv("EMBER_UPDATE_DOCS");
  if (update && std::string(update) == "1") std::ofstream(path) << want;
  INFO("docs/ops.md differs from tests/op_table.h: rerun this test with EMBER_UPDATE_DOCS=1");
  CHECK(read_file(path) == want);
}
