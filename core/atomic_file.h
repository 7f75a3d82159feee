// Crash-safe file replacement: write a temporary file next to the target, flush it to disk,
// then rename it over the target. A reader (or a crash at any point) sees the old file or the
// complete new one, never a truncated mix. Checkpoints and safetensors files are written so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ember::detail {

/// The sink a write_file_atomic writer streams bytes into.
class AtomicFileWriter {
 public:
  /// Appends `n` bytes; throws ember::Error (naming the file and errno text) on failure.
  void write(const void* data, size_t n);
  /// Bytes written so far.
  uint64_t bytes_written() const { return written_; }

 private:
  friend void write_file_atomic(const std::string&, const std::function<void(AtomicFileWriter&)>&);
  AtomicFileWriter(void* file, std::string path, int64_t crash_after);
  void* file_;        // std::FILE*, kept opaque so this header stays light
  std::string path_;  // the target, named in errors
  uint64_t written_ = 0;
  int64_t crash_after_;  // -1: no test crash (see Note [Test crash hook])
};

/// Replaces `path` with the bytes `writer` streams, atomically: they go to
/// "<path>.tmp.<pid>" in the same directory (".<k>" appended for a second thread writing the
/// same path at once), which is flushed and fsync'ed, renamed over `path` (keeping the old
/// file's permission bits), and the directory fsync'ed. On any error (including one thrown
/// by `writer`) the temporary file is removed, `path` is left untouched, and an ember::Error
/// naming the path and the system's reason is thrown. Before writing, the temporaries of
/// `path` left by processes that no longer exist (killed mid-write) are deleted.
///
/// Note [Test crash hook]: when the environment variable EMBER_TEST_CRASH_AFTER_BYTES=N is
/// set as a write starts, the process calls _exit(77) once N bytes have been written (those
/// bytes are flushed to the temporary file first). Tests fork a child that saves with the
/// hook set and check that the previous file survives intact. Not for use outside tests.
void write_file_atomic(const std::string& path, const std::function<void(AtomicFileWriter&)>& writer);

/// Exit status of a process stopped by the test crash hook.
inline constexpr int kTestCrashExitCode = 77;

}  // namespace ember::detail
