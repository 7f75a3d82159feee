// SummaryWriter's event files read back record by record (tfrecord_reader.h checks every CRC)
// and parsed with the protobuf classes generated from tools/tensorboard/tensorboard_events.proto:
// the file-version record first, then scalars, histograms and text with their exact values,
// steps and walltimes; add_scalars' sub-directories; flush, close and purge_step as PyTorch's.
#include <doctest/doctest.h>

#include <cmath>
#include <ctime>
#include <regex>
#include <thread>

#include "ember/ember.h"
#include "ember/tools/tensorboard/event_file_writer.h"
#include "ember/tools/tensorboard/histogram.h"
#include "ember/tools/tensorboard/summary_writer.h"
#include "tensorboard_events.pb.h"
#include "tfrecord_reader.h"

namespace fs = std::filesystem;
namespace tb = ember::tensorboard;
using tfrecord_test::event_files;
using tfrecord_test::read_records;
using tfrecord_test::TempDir;

namespace {

// The events of the only event file in `dir`.
std::vector<tensorboard::Event> read_events(const fs::path& dir) {
  const auto files = event_files(dir);
  REQUIRE(files.size() == 1);
  std::vector<tensorboard::Event> events;
  for (const std::string& bytes : read_records(files[0])) {
    tensorboard::Event e;
    REQUIRE(e.ParseFromString(bytes));
    events.push_back(e);
  }
  return events;
}

void check_file_version(const tensorboard::Event& e) {
  CHECK(e.file_version() == "brain.Event:2");
  CHECK(e.step() == 0);
  CHECK(std::abs(e.wall_time() - static_cast<double>(std::time(nullptr))) < 60);
}

}  // namespace

TEST_CASE("SummaryWriter is available in this build") { CHECK(tb::is_available()); }

TEST_CASE("add_scalar records read back with their tags, values, steps and walltimes") {
  TempDir tmp("sw_scalar");
  {
    tb::SummaryWriter w(tmp.path.string());
    CHECK(w.get_logdir() == tmp.path.string());
    w.add_scalar("loss", 0.25, 3, 1234.5);
    w.add_scalar("loss", 0.1, 4);  // stored as float32, like PyTorch's simple_value
    w.add_scalar("acc", ember::tensor({0.75}), 7, 99.0);
    w.add_scalar("nostep", 2.0);
    w.add_scalar("new", 1.0 / 3.0, 1, 5.0, /*new_style=*/true);
    w.add_scalar("new64", 1.0 / 3.0, 2, 6.0, /*new_style=*/true, /*double_precision=*/true);
  }  // the destructor writes the queue
  const auto events = read_events(tmp.path);
  REQUIRE(events.size() == 7);
  check_file_version(events[0]);

  const auto& s = events[1];
  CHECK(s.step() == 3);
  CHECK(s.wall_time() == 1234.5);
  REQUIRE(s.summary().value_size() == 1);
  CHECK(s.summary().value(0).tag() == "loss");
  CHECK(s.summary().value(0).simple_value() == 0.25f);
  CHECK_FALSE(s.summary().value(0).has_metadata());

  CHECK(events[2].summary().value(0).simple_value() == 0.1f);
  CHECK(events[2].step() == 4);
  CHECK(std::abs(events[2].wall_time() - static_cast<double>(std::time(nullptr))) < 60);
  CHECK(events[3].summary().value(0).tag() == "acc");
  CHECK(events[3].summary().value(0).simple_value() == 0.75f);
  CHECK(events[3].step() == 7);
  CHECK(events[3].wall_time() == 99.0);
  CHECK(events[4].step() == 0);
  CHECK(events[4].summary().value(0).simple_value() == 2.0f);

  const auto& n = events[5].summary().value(0);
  CHECK(n.value_case() == tensorboard::Summary::Value::kTensor);
  CHECK(n.tensor().dtype() == tensorboard::DT_FLOAT);
  CHECK(n.tensor().tensor_shape().dim_size() == 0);  // rank 0
  REQUIRE(n.tensor().float_val_size() == 1);
  CHECK(n.tensor().float_val(0) == static_cast<float>(1.0 / 3.0));
  CHECK(n.metadata().plugin_data().plugin_name() == "scalars");
  const auto& d = events[6].summary().value(0);
  CHECK(d.tensor().dtype() == tensorboard::DT_DOUBLE);
  REQUIRE(d.tensor().double_val_size() == 1);
  CHECK(d.tensor().double_val(0) == 1.0 / 3.0);
}

TEST_CASE("add_scalar of a tensor needs one element") {
  TempDir tmp("sw_scalar_bad");
  tb::SummaryWriter w(tmp.path.string());
  CHECK_THROWS_WITH_AS(w.add_scalar("x", ember::zeros({2, 3})),
                       "Tensor should contain one element (0 dimensions). Was given size: 6 and 2 dimensions.",
                       ember::Error);
}

TEST_CASE("add_histogram writes PyTorch's HistogramProto") {
  TempDir tmp("sw_hist");
  const std::vector<double> values = {-1.5, 0.0, 0.0, 2.0, 2.0, 2.0, 7.25};
  {
    tb::SummaryWriter w(tmp.path.string());
    w.add_histogram("w", ember::tensor(values, ember::kFloat).reshape({7, 1}), 5, "tensorflow", 42.0);
    w.add_histogram("w3", values, 6, 3);                         // 3 equal-width bins
    w.add_histogram("we", values, 7, std::vector<double>{-2, 0, 2, 4, 8}, std::nullopt, 2);  // edges, max_bins
    w.add_histogram_raw("raw", -1, 1, 4, 0.5, 2.5, {0, 1}, {3, 1}, 8);
    CHECK_THROWS_WITH_AS(w.add_histogram_raw("bad", 0, 1, 1, 1, 1, {1, 2}, {1}),
                         "len(bucket_limits) != len(bucket_counts), see the document.", ember::Error);
    CHECK_THROWS_WITH_AS(w.add_histogram("e", std::vector<double>{}), "The input has no element.", ember::Error);
    CHECK_THROWS_AS(w.add_histogram("a", values, 0, "auto"), ember::Error);
  }
  const auto events = read_events(tmp.path);
  REQUIRE(events.size() == 5);
  check_file_version(events[0]);

  const auto& e = events[1];
  CHECK(e.step() == 5);
  CHECK(e.wall_time() == 42.0);
  const auto& v = e.summary().value(0);
  CHECK(v.tag() == "w");
  REQUIRE(v.value_case() == tensorboard::Summary::Value::kHisto);
  const auto& h = v.histo();
  CHECK(h.min() == -1.5);
  CHECK(h.max() == 7.25);
  CHECK(h.num() == 7);
  CHECK(h.sum() == 11.75);
  CHECK(h.sum_squares() == 2.25 + 12 + 7.25 * 7.25);
  // The same histogram as the binning module computes (checked against numpy in
  // test_tensorboard_histogram.cpp), and sane by hand: counts add up, limits increase.
  const auto ref = tb::detail::make_histogram(values, tb::detail::tensorflow_bins());
  CHECK(std::vector<double>(h.bucket_limit().begin(), h.bucket_limit().end()) == ref.bucket_limit);
  CHECK(std::vector<double>(h.bucket().begin(), h.bucket().end()) == ref.bucket);
  double total = 0;
  for (double c : h.bucket()) total += c;
  CHECK(total == 7);
  for (int i = 1; i < h.bucket_limit_size(); ++i) CHECK(h.bucket_limit(i - 1) < h.bucket_limit(i));

  // 3 bins over [-1.5, 7.25]: edges -1.5, 1.41667, 4.33333, 7.25; counts 3, 3, 1.
  const auto& h3 = events[2].summary().value(0).histo();
  REQUIRE(h3.bucket_size() == 4);
  CHECK(std::vector<double>(h3.bucket().begin(), h3.bucket().end()) == std::vector<double>{0, 3, 3, 1});
  CHECK(h3.bucket_limit(0) == -1.5);
  CHECK(h3.bucket_limit(3) == 7.25);
  CHECK(events[2].step() == 6);

  // Edges -2,0,2,4,8 (counts 1,2,3,1) in pairs: edges -2,2,8, counts 3,4.
  const auto& he = events[3].summary().value(0).histo();
  CHECK(std::vector<double>(he.bucket_limit().begin(), he.bucket_limit().end()) == std::vector<double>{-2, 2, 8});
  CHECK(std::vector<double>(he.bucket().begin(), he.bucket().end()) == std::vector<double>{0, 3, 4});

  const auto& hr = events[4].summary().value(0).histo();
  CHECK(events[4].summary().value(0).tag() == "raw");
  CHECK(hr.min() == -1);
  CHECK(hr.max() == 1);
  CHECK(hr.num() == 4);
  CHECK(hr.sum() == 0.5);
  CHECK(hr.sum_squares() == 2.5);
  CHECK(hr.bucket_limit_size() == 2);
  CHECK(hr.bucket(0) == 3);
}

TEST_CASE("add_text writes the text plugin's DT_STRING tensor") {
  TempDir tmp("sw_text");
  {
    tb::SummaryWriter w(tmp.path.string());
    w.add_text("notes", "lr **3e-4** \xC3\xA9t\xC3\xA9", 12, 7.5);
  }
  const auto events = read_events(tmp.path);
  REQUIRE(events.size() == 2);
  const auto& e = events[1];
  CHECK(e.step() == 12);
  CHECK(e.wall_time() == 7.5);
  const auto& v = e.summary().value(0);
  CHECK(v.tag() == "notes/text_summary");
  CHECK(v.metadata().plugin_data().plugin_name() == "text");
  CHECK(v.metadata().plugin_data().content().empty());
  REQUIRE(v.value_case() == tensorboard::Summary::Value::kTensor);
  CHECK(v.tensor().dtype() == tensorboard::DT_STRING);
  REQUIRE(v.tensor().tensor_shape().dim_size() == 1);
  CHECK(v.tensor().tensor_shape().dim(0).size() == 1);
  REQUIRE(v.tensor().string_val_size() == 1);
  CHECK(v.tensor().string_val(0) == "lr **3e-4** \xC3\xA9t\xC3\xA9");
}

TEST_CASE("add_scalars writes each tag to its own sub-directory, as PyTorch lays them out") {
  TempDir tmp("sw_scalars");
  {
    tb::SummaryWriter w(tmp.path.string());
    w.add_scalars("loss/all", {{"train", 1.5}, {"val", 2.5}}, 1, 10.0);
    w.add_scalars("loss/all", {{"train", 1.25}, {"val", 2.25}}, 2);
  }
  // The main directory holds the main writer's file (the version record only) and the two
  // sub-directories "<log_dir>/loss_all_train" and ".../loss_all_val".
  const auto main_events = read_events(tmp.path);
  REQUIRE(main_events.size() == 1);
  check_file_version(main_events[0]);
  size_t dirs = 0;
  for (const auto& entry : fs::directory_iterator(tmp.path)) dirs += entry.is_directory();
  CHECK(dirs == 2);
  for (const auto& [sub, first, second] :
       {std::tuple{"loss_all_train", 1.5f, 1.25f}, std::tuple{"loss_all_val", 2.5f, 2.25f}}) {
    CAPTURE(sub);
    const auto events = read_events(tmp.path / sub);
    REQUIRE(events.size() == 3);
    check_file_version(events[0]);
    CHECK(events[1].summary().value(0).tag() == "loss/all");  // the main tag, '/' kept
    CHECK(events[1].summary().value(0).simple_value() == first);
    CHECK(events[1].step() == 1);
    CHECK(events[1].wall_time() == 10.0);
    CHECK(events[2].summary().value(0).simple_value() == second);
    CHECK(events[2].step() == 2);
  }
  // Both values of one call share a walltime even when none is given.
  CHECK(read_events(tmp.path / "loss_all_train")[2].wall_time() == read_events(tmp.path / "loss_all_val")[2].wall_time());
}

TEST_CASE("records reach the file at max_queue or flush(), and after close() a new file opens") {
  TempDir tmp("sw_flush");
  tb::SummaryWriter w(tmp.path.string(), "", std::nullopt, /*max_queue=*/3, /*flush_secs=*/1e6);
  const fs::path file = event_files(tmp.path).at(0);
  CHECK(read_records(file).size() == 1);  // the version record is written at once
  w.add_scalar("a", 1, 1);
  w.add_scalar("a", 2, 2);
  CHECK(read_records(file).size() == 1);  // queued
  w.flush();
  CHECK(read_records(file).size() == 3);
  w.add_scalar("a", 3, 3);
  w.add_scalar("a", 4, 4);
  w.add_scalar("a", 5, 5);  // the third queued event writes all three
  CHECK(read_records(file).size() == 6);
  w.add_scalar("a", 6, 6);
  w.close();
  CHECK(read_records(file).size() == 7);
  w.close();  // a second close does nothing
  w.add_scalar("a", 7, 7);  // reopens: a new event file in the same directory, as PyTorch
  w.flush();
  const auto files = event_files(tmp.path);
  REQUIRE(files.size() == 2);
  const fs::path second = files[0] == file ? files[1] : files[0];
  const auto records = read_records(second);
  REQUIRE(records.size() == 2);
  tensorboard::Event e;
  REQUIRE(e.ParseFromString(records[1]));
  CHECK(e.step() == 7);
}

TEST_CASE("purge_step writes TensorBoard's restart marker after the version record") {
  TempDir tmp("sw_purge");
  {
    tb::SummaryWriter w(tmp.path.string(), "", /*purge_step=*/100);
    w.add_scalar("x", 1, 100);
  }
  const auto events = read_events(tmp.path);
  REQUIRE(events.size() == 4);
  check_file_version(events[0]);
  CHECK(events[1].file_version() == "brain.Event:2");
  CHECK(events[1].step() == 100);
  CHECK(events[2].what_case() == tensorboard::Event::kSessionLog);
  CHECK(events[2].session_log().status() == tensorboard::SessionLog::START);
  CHECK(events[2].step() == 100);
  CHECK(events[3].summary().value(0).simple_value() == 1.0f);
}

TEST_CASE("filename_suffix ends every file name, add_scalars' too") {
  TempDir tmp("sw_suffix");
  {
    tb::SummaryWriter w(tmp.path.string(), "", std::nullopt, 10, 120, ".ember");
    w.add_scalars("m", {{"t", 1}});
  }
  for (const fs::path& dir : {tmp.path, tmp.path / "m_t"}) {
    const auto files = event_files(dir);
    REQUIRE(files.size() == 1);
    CHECK(files[0].extension() == ".ember");
  }
}

TEST_CASE("the default log_dir is runs/<Mon><dd>_<HH-MM-SS>_<hostname><comment>") {
  TempDir tmp("sw_default");
  const fs::path old_cwd = fs::current_path();
  fs::current_path(tmp.path);
  std::string logdir;
  try {
    tb::SummaryWriter w("", "_lr0.1");
    logdir = w.get_logdir();
  } catch (...) {
    fs::current_path(old_cwd);
    throw;
  }
  fs::current_path(old_cwd);
  const std::regex pattern(R"(runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_(.+)_lr0\.1)");
  std::smatch m;
  REQUIRE(std::regex_match(logdir, m, pattern));
  CHECK(m[1].str() == tb::detail::hostname());
  CHECK(event_files(tmp.path / logdir).size() == 1);
}

TEST_CASE("a moved-from SummaryWriter raises, the moved-to one writes") {
  TempDir tmp("sw_move");
  tb::SummaryWriter a(tmp.path.string());
  tb::SummaryWriter b(std::move(a));
  CHECK_THROWS_AS(a.add_scalar("x", 1), ember::Error);  // NOLINT(bugprone-use-after-move)
  b.add_scalar("x", 1, 1);
  b.close();
  CHECK(read_events(tmp.path).size() == 2);
}

TEST_CASE("threads logging to one writer lose no record while the flush thread runs") {
  TempDir tmp("sw_threads");
  constexpr int kThreads = 4, kEach = 200;
  {
    tb::SummaryWriter w(tmp.path.string(), "", std::nullopt, /*max_queue=*/7, /*flush_secs=*/0.001);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&w, t] {
        for (int i = 0; i < kEach; ++i) {
          w.add_scalar("t" + std::to_string(t), i, i);
          if (i % 50 == 0) w.add_scalars("pair", {{"a", i}, {"b", t}}, i);
          if (i % 64 == 0) w.flush();
        }
      });
    for (auto& th : threads) th.join();
  }
  const auto events = read_events(tmp.path);
  REQUIRE(events.size() == 1 + kThreads * kEach);
  std::vector<int> next(kThreads, 0);  // each thread's records arrive in its own order
  for (size_t k = 1; k < events.size(); ++k) {
    const int t = std::stoi(events[k].summary().value(0).tag().substr(1));
    CHECK(events[k].step() == next[static_cast<size_t>(t)]++);
  }
  CHECK(read_events(tmp.path / "pair_a").size() == 1 + kThreads * 4);
}
