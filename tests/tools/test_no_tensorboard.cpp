// Built instead of test_summary_writer.cpp when ember has no protobuf: SummaryWriter still
// links, says it is unavailable, and creating one raises without touching the disk.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "ember/core/error.h"
#include "ember/tools/tensorboard/summary_writer.h"
#include "tfrecord_reader.h"

TEST_CASE("without protobuf, SummaryWriter raises a clear error on construction") {
  CHECK_FALSE(ember::tensorboard::is_available());
  tfrecord_test::TempDir tmp("sw_none");
  const auto dir = tmp.path / "run";
  std::string message;
  try {
    ember::tensorboard::SummaryWriter w(dir.string());
  } catch (const ember::Error& e) {
    message = e.what();
  }
  CHECK(message.find("built without TensorBoard support") != std::string::npos);
  CHECK(message.find("protobuf") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir));
}
