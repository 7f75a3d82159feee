// The profiler (core/profiler.h): what a run records (ops, backward nodes, user scopes, with
// exact call counts and consistent times), nesting and self times, threads, independence of
// sequential profiles, nothing recorded while off, PyTorch's table layout (expected strings
// printed by PyTorch's own table code, fixtures/make_profiler_table.py) and a Chrome trace
// that parses back as JSON with the events in it.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/fixtures/profiler_table_fixtures.h"
#include "core/json_value.h"
#include "ember/core/profiler.h"
#include "op_check.h"

using namespace ember;
using namespace ember::profiler;

namespace {

int64_t count_of(const KeyAverages& avg, const std::string& key) {
  const FunctionEventAvg* g = avg.find(key);
  return g ? g->count : 0;
}

/// Every event's times are plausible, and the self times add up: the sum of all self times
/// is the sum of the top-level totals on each thread.
void check_times(const std::vector<FunctionEvent>& events) {
  std::map<uint64_t, int64_t> self_sum, top_sum;
  for (const FunctionEvent& e : events) {
    CHECK(e.start_ns >= 0);
    CHECK(e.end_ns >= e.start_ns);
    CHECK(e.self_cpu_time_ns >= 0);
    CHECK(e.self_cpu_time_ns <= e.cpu_time_total_ns());
    self_sum[e.thread_id] += e.self_cpu_time_ns;
    if (e.parent < 0) top_sum[e.thread_id] += e.cpu_time_total_ns();
    if (e.parent >= 0) {  // a child lies inside its parent, on the same thread
      const FunctionEvent& p = events[static_cast<size_t>(e.parent)];
      CHECK(p.thread_id == e.thread_id);
      CHECK(p.start_ns <= e.start_ns);
      CHECK(e.end_ns <= p.end_ns);
    }
  }
  CHECK(self_sum == top_sum);
}

const FunctionEvent& first_named(const std::vector<FunctionEvent>& events, const std::string& name) {
  for (const FunctionEvent& e : events)
    if (e.name == name) return e;
  FAIL("no event named " << name);
  throw std::logic_error("unreachable");
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

uint64_t this_thread_os_id() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

}  // namespace

TEST_CASE("profiler: a forward pass records each op once, with shapes, types and memory") {
  Tensor x = randn({2, 3}, requires_grad()), w = randn({3, 4}, requires_grad()), b = randn({4}, requires_grad());
  Profile prof({ProfilerActivity::CPU}, /*record_shapes=*/true, /*profile_memory=*/true);
  CHECK(is_enabled());
  Tensor y = relu(mm(x, w) + b);
  prof.stop();
  CHECK_FALSE(is_enabled());
  KeyAverages avg = prof.key_averages();
  CHECK(count_of(avg, "aten::mm") == 1);
  CHECK(count_of(avg, "aten::add") == 1);
  CHECK(count_of(avg, "aten::relu") == 1);
  const FunctionEvent& m = first_named(prof.events(), "aten::mm");
  CHECK(m.input_shapes == std::vector<std::vector<int64_t>>{{2, 3}, {3, 4}});
  CHECK(m.input_types == std::vector<std::string>{"float", "float"});
  CHECK(m.thread_id == this_thread_os_id());
  CHECK(m.device_index == -1);
  CHECK(m.cpu_memory_usage >= 2 * 4 * 4);  // its [2, 4] float output, at least
  CHECK(first_named(prof.events(), "aten::add").input_shapes == std::vector<std::vector<int64_t>>{{2, 4}, {4}});
  check_times(prof.events());
  // The table lists them, with PyTorch's header.
  std::string table = avg.table("cpu_time_total", 10);
  CHECK(table.find("Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg       CPU Mem  "
                   "Self CPU Mem    # of Calls") != std::string::npos);
  for (const char* name : {"aten::mm", "aten::add", "aten::relu"}) CHECK(table.find(name) != std::string::npos);
  CHECK(table.find("Self CPU time total: ") != std::string::npos);
}

TEST_CASE("profiler: backward records the engine's nodes, PyTorch's names, nested") {
  Tensor x = randn({2, 3}, requires_grad()), w = randn({3, 4}, requires_grad()), b = randn({4}, requires_grad());
  Profile prof({ProfilerActivity::CPU}, true, true);
  Tensor loss = relu(mm(x, w) + b).sum();
  loss.backward();
  KeyAverages avg = prof.key_averages();  // stops the profile
  CHECK_FALSE(prof.running());
  const std::string eval = "autograd::engine::evaluate_function: ";
  for (const char* node : {"SumBackward0", "ReluBackward0", "AddBackward0", "MmBackward0"}) {
    CHECK_MESSAGE(count_of(avg, eval + node) == 1, node);
    CHECK_MESSAGE(count_of(avg, node) == 1, node);
  }
  CHECK(count_of(avg, eval + "torch::autograd::AccumulateGrad") == 3);  // x, w, b
  CHECK(count_of(avg, "torch::autograd::AccumulateGrad") == 3);
  CHECK(count_of(avg, "aten::mm") == 3);  // forward, and dA = G B^T, dB = A^T G
  CHECK(count_of(avg, "aten::sum") == 2);  // the loss, and b's gradient summed down from [2, 4] to [4]
  check_times(prof.events());
  // MmBackward0 sits inside its evaluate_function range, and the two backward mms inside it.
  const auto& events = prof.events();
  int64_t mm_inside_backward = 0;
  for (const FunctionEvent& e : events) {
    if (e.name == "MmBackward0") {
      REQUIRE(e.parent >= 0);
      CHECK(events[static_cast<size_t>(e.parent)].name == eval + "MmBackward0");
    }
    if (e.name != "aten::mm") continue;
    for (int64_t p = e.parent; p >= 0; p = events[static_cast<size_t>(p)].parent)
      if (events[static_cast<size_t>(p)].name == "MmBackward0") ++mm_inside_backward;
  }
  CHECK(mm_inside_backward == 2);
  // Grouped by shapes, the three mms are three groups.
  KeyAverages by_shape = prof.key_averages(/*group_by_input_shape=*/true);
  int64_t mm_groups = 0;
  for (const FunctionEventAvg& g : by_shape.events()) mm_groups += g.key == "aten::mm";
  CHECK(mm_groups == 3);
}

TEST_CASE("profiler: record_function scopes nest, and self time excludes the children") {
  Tensor a = ones({8}), b = ones({8});
  Profile prof;
  {
    RecordFunction outer("outer");
    Tensor c = a + b;
    {
      RecordFunction inner("inner");
      Tensor d = a * b;
    }
  }
  Tensor after = a - b;  // outside any scope
  prof.stop();
  const auto& ev = prof.events();
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].name == "outer");
  CHECK(ev[0].kind == EventKind::kUserAnnotation);
  CHECK(ev[1].name == "aten::add");
  CHECK(ev[2].name == "inner");
  CHECK(ev[3].name == "aten::mul");
  CHECK(ev[4].name == "aten::sub");
  CHECK(ev[1].parent == 0);
  CHECK(ev[2].parent == 0);
  CHECK(ev[3].parent == 2);
  CHECK(ev[4].parent == -1);
  CHECK(ev[1].kind == EventKind::kOp);
  CHECK(ev[0].self_cpu_time_ns == ev[0].cpu_time_total_ns() - ev[1].cpu_time_total_ns() - ev[2].cpu_time_total_ns());
  CHECK(ev[2].self_cpu_time_ns == ev[2].cpu_time_total_ns() - ev[3].cpu_time_total_ns());
  CHECK(ev[3].input_shapes.empty());  // record_shapes was off
  check_times(ev);
}

TEST_CASE("profiler: in-place ops and views are recorded, in-place ones named as in PyTorch") {
  Tensor a = ones({2, 3}), b = ones({2, 3});
  Profile prof;
  a.add_(b);
  Tensor t = a.t();
  prof.stop();
  KeyAverages avg = prof.key_averages();
  CHECK(count_of(avg, "aten::add_") == 1);
  CHECK(count_of(avg, "aten::add") == 0);  // written straight into a: no out-of-place add inside
  CHECK(count_of(avg, "aten::permute") == 1);  // ember's t() is the view op permute
}

TEST_CASE("profiler: off records nothing, and sequential profiles are independent") {
  Tensor a = ones({4}), b = ones({4});
  CHECK_FALSE(is_enabled());
  Tensor before = a + b;  // no profile: nothing to record into
  {
    Profile first;
    Tensor c = a * b;
    first.stop();
    Tensor not_recorded = a + b;  // after stop
    REQUIRE(first.events().size() == 1);
    CHECK(first.events()[0].name == "aten::mul");
    {
      Profile second;
      CHECK_THROWS_WITH_AS(Profile third, doctest::Contains("Profiler is already enabled"), Error);
      Tensor d = a - b;
      Tensor e = a - b;
      KeyAverages avg = second.key_averages();
      REQUIRE(avg.size() == 1);
      CHECK(avg[0].key == "aten::sub");
      CHECK(avg[0].count == 2);
    }
    CHECK(first.events().size() == 1);  // the second profile did not touch the first's results
  }
  Profile empty;
  empty.stop();
  CHECK(empty.events().empty());
  CHECK(empty.key_averages().table() == "");
}

TEST_CASE("profiler: ops on two threads are recorded with both thread ids") {
  Tensor a = ones({16}), b = ones({16});
  Profile prof;
  uint64_t worker_id = 0;
  Tensor main_result = a + b;
  std::thread worker([&] {
    worker_id = this_thread_os_id();
    RecordFunction scope("worker scope");
    Tensor c = a * b;
  });
  worker.join();
  prof.stop();
  const auto& ev = prof.events();
  REQUIRE(ev.size() == 3);
  std::map<std::string, uint64_t> tid;
  for (const FunctionEvent& e : ev) tid[e.name] = e.thread_id;
  CHECK(tid["aten::add"] == this_thread_os_id());
  CHECK(tid["aten::mul"] == worker_id);
  CHECK(tid["worker scope"] == worker_id);
  CHECK(worker_id != this_thread_os_id());
  CHECK(ev[static_cast<size_t>(first_named(ev, "aten::mul").parent)].name == "worker scope");
  check_times(ev);
}

TEST_CASE("profiler: the Chrome trace parses as JSON and holds the events") {
  Tensor x = randn({2, 3}, requires_grad()), w = randn({3, 4}, requires_grad());
  const std::string odd = "a \"quoted\" \\ name\twith a tab";
  Profile prof({ProfilerActivity::CPU}, /*record_shapes=*/true);
  {
    RecordFunction scope(odd);
    mm(x, w).sum().backward();
  }
  std::string path = (std::filesystem::temp_directory_path() / ("ember_trace_" + std::to_string(::getpid()) + ".json")).string();
  prof.export_chrome_trace(path);
  test::JsonValue trace = test::parse_json(read_file(path));
  std::filesystem::remove(path);
  REQUIRE(trace.has("traceEvents"));
  const auto& list = trace["traceEvents"].array;
  size_t complete = 0, mm = 0, scopes = 0, engine = 0;
  for (const test::JsonValue& e : list) {
    REQUIRE(e.has("ph"));
    if (e["ph"].string != "X") continue;
    ++complete;
    CHECK(e["ts"].number >= 0);
    CHECK(e["dur"].number >= 0);
    CHECK(e["pid"].number == double(::getpid()));
    CHECK(e["tid"].number == double(this_thread_os_id()));
    const std::string& name = e["name"].string;
    if (name == odd) {
      ++scopes;
      CHECK(e["cat"].string == "user_annotation");
    }
    if (name.rfind("autograd::engine::evaluate_function: ", 0) == 0) ++engine;
    if (name == "aten::mm") {
      CHECK(e["cat"].string == "cpu_op");
      const auto& dims = e["args"]["Input Dims"].array;
      REQUIRE(dims.size() == 2);
      if (mm++ == 0) {  // the forward mm: [2, 3] x [3, 4]
        CHECK(dims[0].array.size() == 2);
        CHECK(dims[0].array[0].number == 2);
        CHECK(dims[1].array[1].number == 4);
        CHECK(e["args"]["Input type"].array[0].string == "float");
      }
    }
  }
  CHECK(complete == prof.events().size());
  CHECK(scopes == 1);
  CHECK(mm == 3);
  CHECK(engine == 4);  // SumBackward0, MmBackward0, two AccumulateGrad
}

// Hand-made events whose groups have the figures of fixtures/make_profiler_table.py, so the
// table must match PyTorch's own layout character for character.
namespace {

FunctionEvent made(const std::string& name, int64_t total, int64_t self, int64_t mem = 0, int64_t self_mem = 0,
                   std::vector<std::vector<int64_t>> shapes = {}) {
  FunctionEvent e;
  e.name = name;
  e.start_ns = 100;
  e.end_ns = 100 + total;
  e.self_cpu_time_ns = self;
  e.cpu_memory_usage = mem;
  e.self_cpu_memory_usage = self_mem;
  e.input_shapes = std::move(shapes);
  return e;
}

std::vector<FunctionEvent> cpu_events() {
  const std::string acc = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad";
  return {made("aten::mm", 3000, 3000, 40, 40, {{2, 3}, {3, 4}}), made("my_scope", 10000, 4000, 80, 0),
          made(acc, 1000000, 500, -1024, -1024), made("aten::mm", 3000, 3000, 40, 40, {{2, 3}, {3, 4}}),
          made(acc, 1000000, 500, -1024, -1024), made(acc, 500000, 500)};
}

}  // namespace

TEST_CASE("profiler: table layout, sorting and row_limit are PyTorch's") {
  KeyAverages avg = key_averages(cpu_events(), /*group_by_input_shape=*/false, /*profile_memory=*/true, false);
  REQUIRE(avg.size() == 3);
  CHECK(avg.table("cpu_time_total") == profiler_fixtures::kTableByTotal);
  KeyAverages no_mem = key_averages(cpu_events(), false, /*profile_memory=*/false, false);
  CHECK(no_mem.table("self_cpu_time_total", 2) == profiler_fixtures::kTableBySelfLimit2);
  KeyAverages shapes = key_averages(cpu_events(), /*group_by_input_shape=*/true, true, false);
  REQUIRE(shapes.size() == 3);  // the two mms have the same shapes
  CHECK(shapes.table("count") == profiler_fixtures::kTableShapes);
  CHECK_THROWS_WITH_AS(avg.table("wall_time"), doctest::Contains("unknown sort_by key 'wall_time'"), Error);
}

TEST_CASE("profiler: the CUDA columns, from device times and memory") {
  auto dev = [](const std::string& name, int64_t total, int64_t dev_ns, int64_t dev_mem) {
    FunctionEvent e = made(name, total, total);
    e.device_index = 0;
    e.device_time_ns = e.self_device_time_ns = dev_ns;
    e.device_memory_usage = e.self_device_memory_usage = dev_mem;
    return e;
  };
  std::vector<FunctionEvent> events = {dev("aten::mm", 3000, 2500, 1536 * 1024), dev("aten::relu", 1500000, 250, 512),
                                       dev("aten::mm", 3000, 2500, 1536 * 1024)};
  KeyAverages avg = key_averages(events, false, /*profile_memory=*/true, /*use_cuda=*/true);
  CHECK(avg.table("cuda_time_total") == profiler_fixtures::kTableCuda);
  CHECK(avg.table("device_time_total") == profiler_fixtures::kTableCuda);
  // Without the CUDA activity the same figures print no CUDA columns.
  CHECK(key_averages(events, false, true, false).table().find("CUDA") == std::string::npos);
}
