// tools/tensorboard's TFRecord layer: CRC32C against published vectors, the masked CRC, the
// record layout, and EventFileWriter's file name, queue and flush rules (payloads are plain
// bytes here; test_summary_writer.cpp checks the protobuf records).
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <regex>
#include <thread>

#include "ember/core/error.h"
#include "ember/tools/tensorboard/event_file_writer.h"
#include "ember/tools/tensorboard/record_writer.h"
#include "tfrecord_reader.h"

using namespace ember::tensorboard::detail;
using tfrecord_test::read_records;
using tfrecord_test::TempDir;

TEST_CASE("crc32c matches the published CRC-32C check values") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);  // the Castagnoli check value
  CHECK(crc32c("", 0) == 0u);
  // RFC 3720 (iSCSI), appendix B.4.
  unsigned char buf[32];
  std::memset(buf, 0, sizeof(buf));
  CHECK(crc32c(buf, 32) == 0x8A9136AAu);
  std::memset(buf, 0xFF, sizeof(buf));
  CHECK(crc32c(buf, 32) == 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(i);
  CHECK(crc32c(buf, 32) == 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(31 - i);
  CHECK(crc32c(buf, 32) == 0x113FDB5Cu);
}

TEST_CASE("crc32c continues across pieces") {
  const char* s = "The quick brown fox jumps over the lazy dog";
  const size_t n = std::strlen(s);
  CHECK(crc32c(s, n) == 0x22620404u);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{17}, n}) CHECK(crc32c(s + cut, n - cut, crc32c(s, cut)) == crc32c(s, n));
}

TEST_CASE("the masked CRC rotates right by 15 and adds 0xa282ead8") {
  CHECK(mask_crc(0) == 0xa282ead8u);
  CHECK(mask_crc(0x12345678u) == 0x4f730f40u);  // worked by hand (Python)
  for (uint32_t c : {0u, 1u, 0x12345678u, 0xE3069283u, 0xFFFFFFFFu}) CHECK(unmask_crc(mask_crc(c)) == c);
}

TEST_CASE("frame_record lays out length, its CRC, the data and its CRC, little-endian") {
  const std::string data = "abc";
  const std::string rec = frame_record(data);
  REQUIRE(rec.size() == 8 + 4 + 3 + 4);
  const std::string len("\x03\0\0\0\0\0\0\0", 8);
  CHECK(rec.substr(0, 8) == len);
  CHECK(tfrecord_test::read_le(rec, 8, 4) == mask_crc(crc32c(len.data(), 8)));
  CHECK(rec.substr(12, 3) == "abc");
  CHECK(tfrecord_test::read_le(rec, 15, 4) == mask_crc(crc32c("abc", 3)));
  CHECK(frame_record("").size() == 16);
}

TEST_CASE("EventFileWriter names its file as TensorBoard and creates the directory") {
  TempDir tmp("tb_name");
  const auto dir = tmp.path / "a" / "b";
  EventFileWriter w(dir.string(), 10, 120, ".suffix");
  CHECK(std::filesystem::is_directory(dir));
  const std::string name = std::filesystem::path(w.file_name()).filename().string();
  // events.out.tfevents.<10-digit time>.<hostname>.<pid>.<n><suffix>
  std::smatch m;
  REQUIRE(std::regex_match(name, m, std::regex(R"(events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)\.suffix)")));
  CHECK(m[2].str() == hostname());
  CHECK(std::stoll(m[3].str()) == ::getpid());
  const long long t = std::stoll(m[1].str());
  CHECK(std::abs(t - static_cast<long long>(wall_time_now())) <= 2);
  // A second writer takes the next file number, even in the same second and directory.
  EventFileWriter w2(dir.string(), 10, 120, ".suffix");
  CHECK(w2.file_name() != w.file_name());
  std::smatch m2;
  const std::string name2 = std::filesystem::path(w2.file_name()).filename().string();
  REQUIRE(std::regex_match(name2, m2, std::regex(R"(.*\.(\d+)\.suffix)")));
  CHECK(std::stoll(m2[1].str()) == std::stoll(m[4].str()) + 1);
}

TEST_CASE("EventFileWriter writes queued records at max_queue, on flush and on close") {
  TempDir tmp("tb_queue");
  EventFileWriter w(tmp.path.string(), 3, 1e6, "");
  w.add_event("one");
  w.add_event("two");
  CHECK(read_records(w.file_name()).empty());  // queued, not yet written
  w.add_event("three");                         // the queue reaches max_queue: all written
  CHECK(read_records(w.file_name()) == std::vector<std::string>{"one", "two", "three"});
  w.add_event("four");
  CHECK(read_records(w.file_name()).size() == 3);
  w.flush();
  CHECK(read_records(w.file_name()).size() == 4);
  w.add_event("five");
  w.close();
  CHECK(read_records(w.file_name()) == std::vector<std::string>{"one", "two", "three", "four", "five"});
  w.close();  // a second close does nothing
  CHECK_THROWS_AS(w.add_event("six"), ember::Error);
}

TEST_CASE("EventFileWriter's thread writes waiting records every flush_secs") {
  TempDir tmp("tb_thread");
  EventFileWriter w(tmp.path.string(), 100, 0.05, "");
  w.add_event("late");
  // Written within a few periods without any further call (generous bound for a busy machine).
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    seen = read_records(w.file_name()).size() == 1;
  }
  CHECK(seen);
}

TEST_CASE("EventFileWriter with max_queue <= 1 or flush_secs <= 0 writes every record at once") {
  TempDir tmp("tb_eager");
  EventFileWriter a(tmp.path.string(), 0, 120, ".a");
  a.add_event("x");
  CHECK(read_records(a.file_name()).size() == 1);
  EventFileWriter b(tmp.path.string(), 10, 0, ".b");
  b.add_event("y");
  CHECK(read_records(b.file_name()).size() == 1);
}

TEST_CASE("EventFileWriter appends to its file and the destructor writes what is queued") {
  TempDir tmp("tb_dtor");
  std::string file;
  {
    EventFileWriter w(tmp.path.string(), 10, 1e6, "");
    file = w.file_name();
    w.add_event(std::string(100000, 'z'));  // larger than any stdio buffer
    w.add_event("tail");
  }
  const auto records = read_records(file);
  REQUIRE(records.size() == 2);
  CHECK(records[0] == std::string(100000, 'z'));
  CHECK(records[1] == "tail");
}

TEST_CASE("EventFileWriter reports a log directory it cannot create") {
  TempDir tmp("tb_bad");
  const auto blocker = tmp.path / "file";
  { std::ofstream(blocker) << "x"; }
  CHECK_THROWS_AS(EventFileWriter((blocker / "sub").string(), 10, 120, ""), ember::Error);
}
