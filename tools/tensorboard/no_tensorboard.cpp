// Stands in for event_encoding.cpp when ember is built without protobuf
// (EMBER_TENSORBOARD=OFF, or AUTO with no protobuf found): programs that use SummaryWriter
// still compile and link, and creating one raises ember::Error saying why.
#include "ember/core/error.h"
#include "ember/tools/tensorboard/event_encoding.h"

namespace ember::tensorboard::detail {

namespace {
[[noreturn]] void unavailable() {
  throw Error(
      "SummaryWriter: this ember was built without TensorBoard support (configured with EMBER_TENSORBOARD=OFF, "
      "or protobuf was not found). Install protobuf (Debian: libprotobuf-dev protobuf-compiler) and reconfigure "
      "with -DEMBER_TENSORBOARD=ON.");
}
}  // namespace

bool protobuf_available() { return false; }
// Called first by SummaryWriter's constructor, before it creates any directory or file.
void require_protobuf() { unavailable(); }
std::string file_version_event(EventHeader) { unavailable(); }
std::string session_start_event(EventHeader) { unavailable(); }
std::string scalar_event(EventHeader, const std::string&, double, bool, bool) { unavailable(); }
std::string histogram_event(EventHeader, const std::string&, const HistogramData&) { unavailable(); }
std::string text_event(EventHeader, const std::string&, const std::string&) { unavailable(); }

}  // namespace ember::tensorboard::detail
