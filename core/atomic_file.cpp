// write_file_atomic: temp file + fsync + rename + directory fsync. See core/atomic_file.h.
#include "ember/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "ember/core/error.h"

namespace ember::detail {
namespace {

[[noreturn]] void fail(const std::string& path, const char* step, int err) {
  throw_error(str_cat("cannot write '", path, "': ", step, " failed: ", std::strerror(err)));
}

// Note [Test crash hook]: read once per write, so a test can set it in a forked child only.
int64_t crash_hook_bytes() {
  const char* v = std::getenv("EMBER_TEST_CRASH_AFTER_BYTES");
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0' && n >= 0) ? static_cast<int64_t>(n) : -1;
}

// Makes the rename durable: without this a power cut can forget the new directory entry.
void fsync_directory(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(path, "opening its directory", errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory; the data itself is already durable then.
  if (rc != 0 && err != EINVAL && err != ENOTSUP) fail(path, "fsync of its directory", err);
}

// Note [Temporary file names]
// A write goes to "<path>.tmp.<pid>"; a second thread of this process writing the same path
// at the same time takes "<path>.tmp.<pid>.<k>" (k = 1, 2, ...) instead, so two writers never
// share (and truncate) one temporary file. The names in use are kept here.
std::mutex g_temporaries_mu;
std::set<std::string> g_temporaries;

std::string claim_temporary(const std::string& path) {
  std::string base = str_cat(path, ".tmp.", ::getpid());
  std::lock_guard<std::mutex> lock(g_temporaries_mu);
  std::string name = base;
  for (int k = 1; !g_temporaries.insert(name).second; ++k) name = str_cat(base, ".", k);
  return name;
}

void release_temporary(const std::string& tmp) {
  std::lock_guard<std::mutex> lock(g_temporaries_mu);
  g_temporaries.erase(tmp);
}

// The length of the run of decimal digits at the start of `s`.
size_t digits(const char* s) {
  size_t n = 0;
  while (s[n] >= '0' && s[n] <= '9') ++n;
  return n;
}

// The pid in a temporary's file name "<file>.tmp.<pid>[.<k>]" after `prefix` ("<file>.tmp."),
// or -1 when the name is not of that form.
pid_t temporary_owner(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const char* p = name.c_str() + prefix.size();
  const size_t n = digits(p);
  if (n == 0 || n > 9) return -1;  // pids fit in 9 digits (pid_max is at most 2^22)
  const char* rest = p + n;
  if (*rest == '.') {  // the ".<k>" of a concurrent writer
    const size_t k = digits(rest + 1);
    if (k == 0) return -1;
    rest += 1 + k;
  }
  return *rest == '\0' ? static_cast<pid_t>(std::strtol(p, nullptr, 10)) : -1;
}

// Note [Stale temporary files]
// A process killed mid-write (SIGKILL, power loss) leaves its "<path>.tmp.<pid>" behind: the
// target is intact, but the partial file takes disk space (a checkpoint's size, every crash).
// Each write of `path` therefore removes the temporaries of `path` whose process no longer
// exists (kill(pid, 0) fails with ESRCH). A live owner, or one we may not signal (EPERM: it
// exists), keeps its file; so does this process's own, which another thread may be writing.
// Caveat: a pid is judged in this process's pid namespace, so on a directory shared with
// another machine (NFS) or container a live writer there could look dead and lose its
// temporary (its save then fails, the target stays whole); such setups should save to
// distinct file names.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;  // best effort: a directory we cannot list is no reason to fail a save
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    pid_t owner = temporary_owner(it->path().filename().string(), prefix);
    if (owner <= 0 || owner == ::getpid()) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;
    ::unlink(it->path().c_str());
  }
}

// Keeps the target's permission bits (a checkpoint made private with chmod 600 stays so);
// a new file gets 0644 less the umask, as open(2) gives it.
void copy_mode(int fd, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd, st.st_mode & 07777);
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(void* file, std::string path, int64_t crash_after)
    : file_(file), path_(std::move(path)), crash_after_(crash_after) {}

void AtomicFileWriter::write(const void* data, size_t n) {
  auto* f = static_cast<std::FILE*>(file_);
  if (crash_after_ >= 0 && written_ + n >= static_cast<uint64_t>(crash_after_)) {
    // Test hook: write up to the limit, make it visible in the temp file, and die.
    size_t part = static_cast<size_t>(static_cast<uint64_t>(crash_after_) - written_);
    std::fwrite(data, 1, part, f);
    std::fflush(f);
    ::_exit(kTestCrashExitCode);
  }
  if (n != 0 && std::fwrite(data, 1, n, f) != n) fail(path_, "write", errno);
  written_ += n;
}

void write_file_atomic(const std::string& path, const std::function<void(AtomicFileWriter&)>& writer) {
  remove_stale_temporaries(path);
  const std::string tmp = claim_temporary(path);
  struct Release {  // the name is free again however this function ends
    const std::string& tmp;
    ~Release() { release_temporary(tmp); }
  } release{tmp};
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "creating a temporary file", errno);
  copy_mode(fd, path);
  std::FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, "fdopen", err);
  }
  // Everything from here on removes the temporary file when it fails.
  try {
    AtomicFileWriter w(f, path, crash_hook_bytes());
    writer(w);
    if (std::fflush(f) != 0) fail(path, "flush", errno);
    if (::fsync(::fileno(f)) != 0) fail(path, "fsync", errno);
    int rc = std::fclose(f);
    f = nullptr;
    if (rc != 0) fail(path, "close", errno);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "rename", errno);
  } catch (...) {
    if (f != nullptr) std::fclose(f);
    ::unlink(tmp.c_str());
    throw;
  }
  fsync_directory(path);
}

}  // namespace ember::detail
