// doctest's main for the CUDA test cases. Without a usable GPU (no device, or a build without
// CUDA) it runs nothing, says how many CUDA test cases that skips, and exits with 77, which
// ctest reports as "Skipped".
//
// For the GPU check (scripts/gpu_check.py), which runs one process per test file, several at
// once, it also:
//   - checks the device after every case: a sticky CUDA error (an illegal address, say) ends
//     the process with "first CUDA fault in <case>" and exit code 87, so one bad kernel does
//     not fail every later case of the process;
//   - EMBER_TEST_CASE_TIMEOUT=S: a case still running after S seconds ends the process with
//     "TIMEOUT in <case>" and exit code 88;
//   - EMBER_TEST_RESULTS=FILE: appends one line per case as it starts and ends
//     (event TAB seconds TAB file TAB case TAB first failure), flushed, so the results survive
//     a crash, a fault or a timeout;
//   - EMBER_TEST_EXCLUDE=FILE: leaves out the cases named in FILE, one per line (the rerun of a
//     file after a fault or a timeout);
//   - EMBER_GPU_CHECK_DRY=1: runs only the planted cases of test_gpu_check_dry.cpp (a pass, a
//     failure, a hang, a fault), GPU or not, so the check's own handling of each is tested on
//     a machine without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda/gpu_check_dry.h"
#include "ember/ember.h"

namespace {

constexpr int kExitFault = 87;
constexpr int kExitTimeout = 88;

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

/// One line per case start and end in EMBER_TEST_RESULTS, written through at once.
class ResultsFile {
 public:
  ResultsFile() {
    const char* path = std::getenv("EMBER_TEST_RESULTS");
    if (path != nullptr && *path != '\0') file_ = std::fopen(path, "a");
  }
  void write(const char* event, double seconds, const std::string& file, const std::string& name,
             const std::string& message = "") {
    if (file_ == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(file_, "%s\t%.3f\t%s\t%s\t%s\n", event, seconds, clean(file).c_str(), clean(name).c_str(),
                 clean(message).c_str());
    std::fflush(file_);
  }

 private:
  static std::string clean(std::string s) {  // one field: no tabs or newlines
    for (char& c : s)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
  }
  std::FILE* file_ = nullptr;
  std::mutex mutex_;
};

ResultsFile& results() {
  static ResultsFile* r = new ResultsFile;  // written until _exit, never destroyed
  return *r;
}

/// The case now running, for the watchdog and the fault message.
struct Running {
  std::mutex mutex;
  std::string file, name;
  std::chrono::steady_clock::time_point start;
  bool active = false;
};
Running& running() {
  static Running* r = new Running;
  return *r;
}

/// Before _exit: doctest writes through std::cout, the messages here through stdio.
void flush_all() {
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// A sticky CUDA error after a case (in the dry run: a planted one), "" when the device is well.
std::string device_fault() {
  if (ember::test::dry::take_planted_fault()) return "planted fault (EMBER_GPU_CHECK_DRY)";
  if (env_is("EMBER_GPU_CHECK_DRY", "1") || !ember::cuda::is_available()) return "";
  try {
    ember::cuda::synchronize();
    return "";
  } catch (const std::exception& first) {
    // A sticky error fails every call from now on; a second synchronize tells it apart from an
    // asynchronous error that the first call reported and cleared.
    try {
      ember::cuda::synchronize();
    } catch (const std::exception&) {
      return first.what();
    }
    return std::string("(cleared) ") + first.what();
  }
}

/// doctest listener: the results file, the running case, the device check after each case.
struct GpuCheckListener : doctest::IReporter {
  explicit GpuCheckListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    {
      std::lock_guard<std::mutex> lock(running().mutex);
      running().file = tc.m_file.c_str();
      running().name = tc.m_name;
      running().start = std::chrono::steady_clock::now();
      running().active = true;
    }
    first_failure_.clear();
    results().write("start", 0, tc.m_file.c_str(), tc.m_name);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& st) override {
    std::string file, name;
    double secs = 0;
    {
      std::lock_guard<std::mutex> lock(running().mutex);
      file = running().file, name = running().name;
      secs = seconds_since(running().start);
      running().active = false;
    }
    const std::string fault = device_fault();
    if (!fault.empty() && fault.rfind("(cleared) ", 0) != 0) {
      results().write("fault", secs, file, name, fault);
      std::fprintf(stderr, "\n[ember_cuda_tests] first CUDA fault in \"%s\" (%s): %s\n", name.c_str(), file.c_str(),
                   fault.c_str());
      flush_all();
      _exit(kExitFault);  // the context is unusable: every later case would fail for this one
    }
    const bool failed = !st.testCaseSuccess || !fault.empty();
    if (failed && first_failure_.empty()) first_failure_ = fault.empty() ? "failed" : fault;
    results().write(failed ? "fail" : "pass", secs, file, name, failed ? first_failure_ : "");
  }
  void test_case_exception(const doctest::TestCaseException& e) override {
    if (first_failure_.empty()) first_failure_ = std::string("exception: ") + e.error_string.c_str();
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override {
    if (!a.m_failed || !first_failure_.empty()) return;
    first_failure_ = std::string(a.m_file) + ":" + std::to_string(a.m_line) + ": " + a.m_expr;
    if (a.m_decomp.size() > 0) first_failure_ += std::string(" (") + a.m_decomp.c_str() + ")";
    if (a.m_threw) first_failure_ += std::string(" threw: ") + a.m_exception.c_str();
    first_failure_ += logged_context();
  }
  void log_message(const doctest::MessageData& m) override {
    if ((m.m_severity & doctest::assertType::is_warn) == 0 && first_failure_.empty())
      first_failure_ = std::string(m.m_file) + ":" + std::to_string(m.m_line) + ": " + m.m_string.c_str();
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  /// The INFO / CHECK_MESSAGE texts in scope of a failing assert, as doctest's "logged:" shows them.
  static std::string logged_context() {
    std::ostringstream os;
    const int n = doctest::IReporter::get_num_active_contexts();
    const doctest::IContextScope* const* contexts = doctest::IReporter::get_active_contexts();
    for (int i = 0; i < n; ++i) {
      os << (i == 0 ? " logged: " : "; ");
      contexts[i]->stringify(&os);
    }
    return os.str();
  }
  std::string first_failure_;
};
DOCTEST_REGISTER_LISTENER("ember_gpu_check", 1, GpuCheckListener);

/// EMBER_TEST_CASE_TIMEOUT: ends the process when one case runs too long.
void start_watchdog() {
  const char* v = std::getenv("EMBER_TEST_CASE_TIMEOUT");
  const double limit = v != nullptr ? std::atof(v) : 0.0;
  if (limit <= 0) return;
  std::thread([limit] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::lock_guard<std::mutex> lock(running().mutex);
      if (!running().active || seconds_since(running().start) < limit) continue;
      results().write("timeout", seconds_since(running().start), running().file, running().name,
                      "still running after " + std::to_string(static_cast<int>(limit)) + " s");
      std::fprintf(stderr, "\n[ember_cuda_tests] TIMEOUT in \"%s\" (%s): still running after %.0f s\n",
                   running().name.c_str(), running().file.c_str(), limit);
      flush_all();
      _exit(kExitTimeout);
    }
  }).detach();
}

/// doctest's filter syntax: commas separate patterns unless escaped with a backslash.
std::string escape_filter(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

/// The cases EMBER_TEST_EXCLUDE names, as one --test-case-exclude value.
std::string excluded_cases() {
  const char* path = std::getenv("EMBER_TEST_EXCLUDE");
  if (path == nullptr || *path == '\0') return "";
  std::ifstream in(path);
  std::string line, out;
  while (std::getline(in, line))
    if (!line.empty()) out += (out.empty() ? "" : ",") + escape_filter(line);
  return out;
}

bool has_arg(int argc, char** argv, const char* prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // NCCL at world size 1 still bootstraps over a socket; a machine with no network has only
  // the loopback interface, which NCCL does not pick by itself.
  setenv("NCCL_SOCKET_IFNAME", "lo", /*overwrite=*/0);
  std::vector<const char*> args(argv, argv + argc);
  const std::string exclude = excluded_cases();
  const std::string exclude_arg = "--test-case-exclude=" + exclude;
  if (!exclude.empty()) args.push_back(exclude_arg.c_str());
  const bool dry = env_is("EMBER_GPU_CHECK_DRY", "1");
  args.push_back(dry ? "--test-suite=gpu_check_dry" : "--test-suite-exclude=gpu_check_dry");
  const bool listing = has_arg(argc, argv, "--list-test-cases") || has_arg(argc, argv, "-ltc") ||
                       has_arg(argc, argv, "--count") || has_arg(argc, argv, "-c");
  if (!dry && !listing && !ember::cuda::is_available()) {
    // doctest's --count lists nothing and runs nothing: it prints how many cases match.
    args.push_back("--count");
    doctest::Context count(static_cast<int>(args.size()), args.data());
    count.run();
    std::printf("ember_cuda_tests: no CUDA device is available: the CUDA test cases counted above were skipped\n");
    return 77;
  }
  start_watchdog();
  doctest::Context context(static_cast<int>(args.size()), args.data());
  return context.run();
}
