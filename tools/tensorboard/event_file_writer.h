// One TensorBoard event file being written: TensorBoard's EventFileWriter (the writer behind
// PyTorch's FileWriter) in plain C++. Takes serialized Event messages, frames them as
// TFRecords and appends them to events.out.tfevents.<time>.<hostname>.<pid>.<n><suffix>.
//
// Events wait in a queue and are written, each record whole and followed by a stdio flush, when
// max_queue of them are waiting, when flush() or close() is called, and every flush_secs from
// a background thread (so the last events of a quiet run still reach the disk). Write errors
// found by the thread are raised by the next add/flush/close.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ember::tensorboard::detail {

/// The machine's host name, as Python's socket.gethostname().
std::string hostname();

/// Seconds since the epoch, as Python's time.time().
double wall_time_now();

class EventFileWriter {
 public:
  /// Creates `log_dir` (and its parents) and a new, empty event file in it. The file name takes
  /// the next number of a process-wide counter, as TensorBoard's does, so two writers created
  /// in the same second never share a file. max_queue <= 1 writes every event as it is
  /// added; flush_secs <= 0 does too (and starts no thread).
  EventFileWriter(std::string log_dir, int64_t max_queue, double flush_secs, const std::string& filename_suffix);
  ~EventFileWriter();  // close(), errors swallowed
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  const std::string& log_dir() const { return log_dir_; }
  const std::string& file_name() const { return file_name_; }

  /// Queues one serialized Event. Raises once the writer is closed.
  void add_event(std::string serialized_event);
  /// Writes every queued event and flushes the file to the operating system.
  void flush();
  /// flush(), stops the thread and closes the file. A second close does nothing.
  void close();

 private:
  void write_pending_locked();  // mu_ held
  void raise_error_locked();    // mu_ held: throws the first write error, if any
  void run_flusher();

  std::string log_dir_;
  std::string file_name_;
  size_t max_queue_;
  double flush_secs_;
  std::FILE* file_ = nullptr;

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::string> pending_;  // framed records not yet written
  std::string error_;                 // first write error, raised by the next call
  bool closed_ = false;
  std::thread flusher_;
};

}  // namespace ember::tensorboard::detail
