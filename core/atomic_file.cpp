// write_file_atomic: temp file + fsync + rename + directory fsync. See core/atomic_file.h.
#include "ember/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

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
  std::string tmp = str_cat(path, ".tmp.", ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "creating a temporary file", errno);
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
