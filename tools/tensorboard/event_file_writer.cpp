// EventFileWriter (event_file_writer.h): the event file, its queue and its flush thread.
#include "ember/tools/tensorboard/event_file_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "ember/core/error.h"
#include "ember/tools/tensorboard/record_writer.h"

namespace ember::tensorboard::detail {

namespace {
// TensorBoard's _global_uid: the <n> of every event file name in this process.
std::atomic<int64_t> next_file_number{0};
}  // namespace

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

double wall_time_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

EventFileWriter::EventFileWriter(std::string log_dir, int64_t max_queue, double flush_secs,
                                 const std::string& filename_suffix)
    : log_dir_(std::move(log_dir)),
      max_queue_(max_queue > 1 ? static_cast<size_t>(max_queue) : 1),
      flush_secs_(flush_secs) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir_, ec);
  EMBER_CHECK(!ec, "SummaryWriter: cannot create the log directory '", log_dir_, "': ", ec.message());
  char name[128];
  std::snprintf(name, sizeof(name), "events.out.tfevents.%010" PRId64 ".", static_cast<int64_t>(wall_time_now()));
  file_name_ = (std::filesystem::path(log_dir_) /
                (name + hostname() + "." + std::to_string(getpid()) + "." + std::to_string(next_file_number++) +
                 filename_suffix))
                   .string();
  // Append mode: a record is only ever added after the ones already there.
  file_ = std::fopen(file_name_.c_str(), "ab");
  EMBER_CHECK(file_ != nullptr, "SummaryWriter: cannot open the event file '", file_name_, "': ", std::strerror(errno));
  if (flush_secs_ > 0) flusher_ = std::thread([this] { run_flusher(); });
}

EventFileWriter::~EventFileWriter() {
  try {
    close();
  } catch (const std::exception&) {
    // A destructor cannot report it; flush() and close() do, for callers who want to know.
  }
}

void EventFileWriter::add_event(std::string serialized_event) {
  std::string record = frame_record(serialized_event);
  std::lock_guard<std::mutex> lock(mu_);
  EMBER_CHECK(!closed_, "SummaryWriter: the event file '", file_name_, "' is closed");
  raise_error_locked();
  pending_.push_back(std::move(record));
  if (pending_.size() >= max_queue_ || flush_secs_ <= 0) write_pending_locked();
  raise_error_locked();
}

void EventFileWriter::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!closed_) write_pending_locked();
  raise_error_locked();
}

void EventFileWriter::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    write_pending_locked();
    closed_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fclose(file_) != 0 && error_.empty())
    error_ = std::string("cannot close '") + file_name_ + "': " + std::strerror(errno);
  file_ = nullptr;
  raise_error_locked();
}

void EventFileWriter::write_pending_locked() {
  if (pending_.empty() || !error_.empty()) return;
  for (const std::string& record : pending_) {
    if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
      error_ = std::string("cannot write to '") + file_name_ + "': " + std::strerror(errno);
      return;
    }
  }
  pending_.clear();
  // Records reach the file whole: a reader never sees a record cut at a stdio buffer edge.
  if (std::fflush(file_) != 0) error_ = std::string("cannot write to '") + file_name_ + "': " + std::strerror(errno);
}

void EventFileWriter::raise_error_locked() {
  if (!error_.empty()) {
    std::string e = std::move(error_);
    error_ = "an earlier write failed: " + e;
    throw Error("SummaryWriter: " + e);
  }
}

void EventFileWriter::run_flusher() {
  // At most a year between flushes: a longer wait would overflow the clock's nanoseconds.
  const auto period = std::chrono::duration<double>(std::min(flush_secs_, 365.0 * 86400.0));
  std::unique_lock<std::mutex> lock(mu_);
  while (!closed_) {
    // Wakes every flush_secs, or at once when close() sets closed_.
    if (wake_.wait_for(lock, period, [this] { return closed_; })) return;
    write_pending_locked();
  }
}

}  // namespace ember::tensorboard::detail
