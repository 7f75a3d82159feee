// The profiler's cost per op: a 1-element add (all dispatch, no arithmetic) with no profile
// running — the hook in run_op is one relaxed atomic load, which should not show against
// bench_overhead's BM_AddTiny from before the hook — and with a profile recording it.
#include <benchmark/benchmark.h>

#include <ember/core/profiler.h>
#include <ember/ember.h>

namespace {

void BM_AddTinyProfilerOff(benchmark::State& state) {
  ember::Tensor a = ember::ones({1}), b = ember::ones({1});
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_AddTinyProfilerOff);

// Recording (arg 1: with shapes and memory too). The profile restarts every 64k ops so its
// event list stays small, outside the timed region.
void BM_AddTinyProfilerOn(benchmark::State& state) {
  using namespace ember::profiler;
  const bool detail = state.range(0) != 0;
  ember::Tensor a = ember::ones({1}), b = ember::ones({1});
  auto prof = std::make_unique<Profile>(std::initializer_list<ProfilerActivity>{ProfilerActivity::CPU}, detail, detail);
  int64_t n = 0;
  for (auto _ : state) {
    ember::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
    if (++n % 65536 == 0) {
      state.PauseTiming();
      prof.reset();
      prof = std::make_unique<Profile>(std::initializer_list<ProfilerActivity>{ProfilerActivity::CPU}, detail, detail);
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_AddTinyProfilerOn)->ArgName("shapes_memory")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
