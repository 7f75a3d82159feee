// The profiler on a GPU: CUDA ops get device times from their events, device memory, the
// table's CUDA columns, and device rows in the Chrome trace.
#include <string>

#include "cuda/parity.h"
#include "ember/core/profiler.h"

using namespace ember;
using namespace ember::profiler;

TEST_CASE("profiler: CUDA ops get device times and memory") {
  Tensor a = randn({256, 256}).to(test::cuda_device()), b = randn({256, 256}).to(test::cuda_device());
  Tensor cpu = ones({4});
  Profile prof({ProfilerActivity::CPU, ProfilerActivity::CUDA}, /*record_shapes=*/true, /*profile_memory=*/true);
  Tensor c = mm(a, b);
  Tensor d = relu(c);
  Tensor e = cpu + cpu;
  prof.stop();
  int64_t mm_count = 0;
  for (const FunctionEvent& ev : prof.events()) {
    CHECK(ev.device_time_ns >= 0);
    CHECK(ev.self_device_time_ns <= ev.device_time_ns);
    if (ev.name == "aten::mm") {
      ++mm_count;
      CHECK(ev.device_index == 0);
      CHECK(ev.device_time_ns > 0);
      CHECK(ev.device_start_ns >= 0);
      CHECK(ev.device_memory_usage >= 256 * 256 * 4);  // the output
    }
    if (ev.name == "aten::add") {  // a CPU op: no device figures
      CHECK(ev.device_index == -1);
      CHECK(ev.device_time_ns == 0);
    }
  }
  CHECK(mm_count == 1);
  std::string table = prof.key_averages().table("cuda_time_total");
  CHECK(table.find("Self CUDA %") != std::string::npos);
  CHECK(table.find("Self CUDA Mem") != std::string::npos);
  CHECK(table.find("Self CUDA time total: ") != std::string::npos);
  std::string trace = chrome_trace_json(prof.events());
  CHECK(trace.find("\"cat\": \"kernel\", \"name\": \"aten::mm\"") != std::string::npos);
}
