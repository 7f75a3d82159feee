// ember::dist::FileStore: c10d's FileStore, a Store for processes on one machine (or on a
// shared file system) that rendezvous through one file: an append-only log of set/delete
// records, flock()ed while read or written. The file is removed when the last store closes.
#pragma once

#include "ember/dist/store.h"

#include <mutex>
#include <string>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace ember::dist {

class FileStore : public Store {
 public:
  /// Opens (creating) the store at `path`. `num_workers`: how many stores will use the file;
  /// the file is removed once that many have closed it, or when the last one open closes.
  FileStore(std::string path, int num_workers);
  ~FileStore() override;

  using Store::compare_set;
  using Store::set;
  using Store::wait;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  /// All keys in the file, the store's own "refcount/" counter included (as c10d counts).
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  const std::string& path() const { return path_; }

 private:
  class Locked;  // the file opened and flock()ed for one operation
  void refresh(int fd);
  void append(int fd, char kind, const std::string& key, const std::vector<uint8_t>& value);
  int64_t add_locked(int fd, const std::string& key, int64_t value);
  bool check_now(const std::vector<std::string>& keys);

  std::string path_;
  int num_workers_;
  std::mutex mutex_;  // the cache, between threads sharing this object
  std::unordered_map<std::string, std::vector<uint8_t>> cache_;  // the file replayed up to pos_
  off_t pos_ = 0;
};

}  // namespace ember::dist
