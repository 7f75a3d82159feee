// FileStore: every operation opens the file, takes flock() (shared to read, exclusive to
// change), replays the records appended since this store last looked, and appends its own.
//
// File format: records back to back, each
//   kind:u8 ('+' set, '-' delete), key length:u64, key, value length:u64, value
// (lengths little-endian). User keys carry c10d's "/" prefix; "refcount/" counts the stores
// that have the file open and "cleanup/" those that have closed it.
#include "ember/dist/file_store.h"

#include "ember/core/error.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

namespace ember::dist {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kKeyPrefix = "/";
const std::string kRefCountKey = "refcount/";
const std::string kCleanupKey = "cleanup/";
// How often a wait looks at the file again.
constexpr milliseconds kPollInterval(10);

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

// The file, open and locked for the lifetime of one operation.
class FileStore::Locked {
 public:
  Locked(const std::string& path, bool exclusive) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EMBER_CHECK(fd_ >= 0, "FileStore: cannot open ", path, ": ", std::strerror(errno));
    int rc;
    while ((rc = ::flock(fd_, exclusive ? LOCK_EX : LOCK_SH)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      int err = errno;
      ::close(fd_);
      ::ember::detail::throw_error(::ember::detail::str_cat("FileStore: flock ", path, ": ", std::strerror(err)));
    }
  }
  ~Locked() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

FileStore::FileStore(std::string path, int num_workers) : path_(std::move(path)), num_workers_(num_workers) {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, true);
  refresh(f.fd());
  add_locked(f.fd(), kRefCountKey, 1);
}

// c10d: the file goes once num_workers stores have closed it, or when none has it open.
FileStore::~FileStore() {
  try {
    std::lock_guard<std::mutex> guard(mutex_);
    Locked f(path_, true);
    refresh(f.fd());
    int64_t finished = add_locked(f.fd(), kCleanupKey, 1);
    int64_t open = add_locked(f.fd(), kRefCountKey, -1);
    if (finished >= num_workers_ || open == 0) ::unlink(path_.c_str());
  } catch (const Error&) {
    // A destructor must not throw; the file stays behind.
  }
}

// Replays the records appended since pos_. A file shorter than pos_ was removed and created
// again: start over.
void FileStore::refresh(int fd) {
  struct stat st {};
  EMBER_CHECK(::fstat(fd, &st) == 0, "FileStore: fstat ", path_, ": ", std::strerror(errno));
  if (st.st_size < pos_) {
    cache_.clear();
    pos_ = 0;
  }
  if (st.st_size == pos_) return;
  std::vector<uint8_t> buf(static_cast<size_t>(st.st_size - pos_));
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, pos_ + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    EMBER_CHECK(n > 0, "FileStore: read ", path_, ": ", n < 0 ? std::strerror(errno) : "unexpected end of file");
    got += static_cast<size_t>(n);
  }
  size_t i = 0;
  auto field = [&](std::vector<uint8_t>& out) {
    EMBER_CHECK(buf.size() - i >= 8, "FileStore: ", path_, " is corrupt");
    uint64_t len = get_u64(buf.data() + i);
    i += 8;
    EMBER_CHECK(buf.size() - i >= len, "FileStore: ", path_, " is corrupt");
    out.assign(buf.begin() + static_cast<ptrdiff_t>(i), buf.begin() + static_cast<ptrdiff_t>(i + len));
    i += len;
  };
  std::vector<uint8_t> key, value;
  while (i < buf.size()) {
    char kind = static_cast<char>(buf[i++]);
    field(key);
    field(value);
    std::string k(key.begin(), key.end());
    EMBER_CHECK(kind == '+' || kind == '-', "FileStore: ", path_, " is corrupt");
    if (kind == '+')
      cache_[k] = value;
    else
      cache_.erase(k);
  }
  pos_ = st.st_size;
}

// Appends one record at the end (the caller holds the exclusive lock and has refreshed).
void FileStore::append(int fd, char kind, const std::string& key, const std::vector<uint8_t>& value) {
  std::vector<uint8_t> rec;
  rec.push_back(static_cast<uint8_t>(kind));
  put_u64(rec, key.size());
  rec.insert(rec.end(), key.begin(), key.end());
  put_u64(rec, value.size());
  rec.insert(rec.end(), value.begin(), value.end());
  size_t put = 0;
  while (put < rec.size()) {
    ssize_t n = ::pwrite(fd, rec.data() + put, rec.size() - put, pos_ + static_cast<off_t>(put));
    if (n < 0 && errno == EINTR) continue;
    EMBER_CHECK(n > 0, "FileStore: write ", path_, ": ", std::strerror(errno));
    put += static_cast<size_t>(n);
  }
  pos_ += static_cast<off_t>(rec.size());
  if (kind == '+')
    cache_[key] = value;
  else
    cache_.erase(key);
}

int64_t FileStore::add_locked(int fd, const std::string& key, int64_t value) {
  int64_t now = 0;
  if (auto it = cache_.find(key); it != cache_.end()) {
    auto first = reinterpret_cast<const char*>(it->second.data());
    auto last = first + it->second.size();
    auto [ptr, ec] = std::from_chars(first, last, now);
    EMBER_CHECK(ec == std::errc() && ptr == last && first != last, "add: the value of key ", key,
                " is not an integer");
  }
  now += value;
  append(fd, '+', key, to_bytes(std::to_string(now)));
  return now;
}

void FileStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, true);
  refresh(f.fd());
  append(f.fd(), '+', kKeyPrefix + key, value);
}

std::vector<uint8_t> FileStore::get(const std::string& key) {
  auto start = Clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      Locked f(path_, false);
      refresh(f.fd());
      if (auto it = cache_.find(kKeyPrefix + key); it != cache_.end()) return it->second;
    }
    if (timeout_ != kNoTimeout && Clock::now() - start >= timeout_)
      ::ember::detail::throw_error(
          ::ember::detail::str_cat("Timeout waiting for key: ", key, " after ", timeout_.count(), " ms"));
    std::this_thread::sleep_for(kPollInterval);
  }
}

int64_t FileStore::add(const std::string& key, int64_t value) {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, true);
  refresh(f.fd());
  return add_locked(f.fd(), kKeyPrefix + key, value);
}

std::vector<uint8_t> FileStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                            const std::vector<uint8_t>& desired) {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, true);
  refresh(f.fd());
  auto it = cache_.find(kKeyPrefix + key);
  if (it == cache_.end() && !expected.empty()) return expected;
  if (it == cache_.end() || it->second == expected) {
    append(f.fd(), '+', kKeyPrefix + key, desired);
    return desired;
  }
  return it->second;
}

bool FileStore::check_now(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, false);
  refresh(f.fd());
  for (const auto& k : keys)
    if (!cache_.count(kKeyPrefix + k)) return false;
  return true;
}

bool FileStore::check(const std::vector<std::string>& keys) { return check_now(keys); }

bool FileStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, true);
  refresh(f.fd());
  if (!cache_.count(kKeyPrefix + key)) return false;
  append(f.fd(), '-', kKeyPrefix + key, {});
  return true;
}

int64_t FileStore::num_keys() {
  std::lock_guard<std::mutex> guard(mutex_);
  Locked f(path_, false);
  refresh(f.fd());
  return static_cast<int64_t>(cache_.size());
}

// Looks at the file every kPollInterval: processes sharing a file have no other channel.
void FileStore::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  auto start = Clock::now();
  while (!check_now(keys)) {
    if (timeout != kNoTimeout && Clock::now() - start >= timeout) ::ember::detail::throw_error("Wait timeout");
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace ember::dist
