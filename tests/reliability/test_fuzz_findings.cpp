// Regression tests for what the libFuzzer targets in fuzz/ found (fuzz/run_fuzzers.sh), each
// with the input class that triggered it. (load_checkpoint's half-loaded model, found by
// fuzz_state_dict, is tested in tests/optim/test_checkpoint.cpp.)
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ember/core/serialize.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/linear.h"
#include "ember/optim/grad_scaler.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/sgd.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_error;

namespace {

template <class T>
std::vector<T> values_of(const Tensor& t) {
  Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

Tensor doubles(const std::vector<double>& v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kDouble);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t;
}

constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();

}  // namespace

// fuzz_ops: as_strided({0, 2}, {1, -1}) was accepted: the size loop stopped at the zero size
// before it reached the negative stride. PyTorch checks every stride, and the offset.
TEST_CASE("test_fuzz_findings: as_strided checks every stride, the offset and the extent's overflow") {
  Tensor base = zeros({8});
  check_error([&] { base.as_strided({0, 2}, {1, -1}); }, "Negative strides are not supported");
  check_error([&] { base.as_strided({2}, {1}, -1); }, "invalid storage offset -1");
  check_error([&] { base.as_strided({0}, {1}, -3); }, "invalid storage offset -3");
  // (2^62 + 1) * 2 elements past the start: wraps around int64 unchecked.
  check_error([&] { base.as_strided({3}, {int64_t{1} << 62}); },
              "need more storage than an int64 byte count");
  check_error(
      [&] {
        base.as_strided({2, 2}, {std::numeric_limits<int64_t>::max(), 1});
      },
      "need more storage than an int64 byte count");
  // What stays valid: an empty view (no storage needed) and one that ends at the last element:
  CHECK(base.as_strided({0, 5}, {100, 100}, 50).numel() == 0);
  CHECK(base.as_strided({2, 2}, {4, 3}, 0).sizes().vec() == std::vector<int64_t>{2, 2});  // 0 + 4 + 3 = 7
}

// fuzz_state_dict: a float64 1e300 stored under the int64 "1.num_batches_tracked" reached
// copy_'s float -> int64 cast, which C++ leaves undefined (UBSan: "outside the range of
// representable values"). See Note [Float to integer casts] for the values chosen (x86's).
TEST_CASE("test_fuzz_findings: float to integer casts of NaN, infinities and out-of-range values") {
  const double nan = std::nan(""), inf = INFINITY;
  CHECK(values_of<int64_t>(doubles({1e300, -1e300, nan, inf, -inf, 3.7, -3.7, 0x1p63, -0x1p63}).to(kLong)) ==
        std::vector<int64_t>{kMin64, kMin64, kMin64, kMin64, kMin64, 3, -3, kMin64, kMin64});
  CHECK(values_of<int32_t>(doubles({3e9, -3e9, nan, 2147483647.0, -2147483648.0, -2147483648.9}).to(kInt)) ==
        std::vector<int32_t>{kMin32, kMin32, kMin32, 2147483647, kMin32, kMin32});
  // The 8- and 16-bit types keep the low bits of the int32 result.
  CHECK(values_of<uint8_t>(doubles({300, -1, 1e10, nan, 255.9}).to(kByte)) ==
        std::vector<uint8_t>{44, 255, 0, 0, 255});
  CHECK(values_of<int8_t>(doubles({200, -129, 1e10}).to(kChar)) == std::vector<int8_t>{-56, 127, 0});
  CHECK(values_of<int16_t>(doubles({40000, -32769, inf}).to(kShort)) ==
        std::vector<int16_t>{-25536, 32767, 0});
  // float32 and float16 sources take the same path (float16 computes in float).
  CHECK(values_of<int32_t>(doubles({3e9, nan}).to(kFloat).to(kInt)) == std::vector<int32_t>{kMin32, kMin32});
  CHECK(values_of<int64_t>(doubles({inf, 65504}).to(kHalf).to(kLong)) == std::vector<int64_t>{kMin64, 65504});

  // The fuzzer's path: a state dict whose num_batches_tracked is a float64 1e300.
  nn::BatchNorm1d bn(2);
  OrderedDict<std::string, Tensor> dict = bn->state_dict();
  dict["num_batches_tracked"] = doubles({1e300}).reshape({});
  bn->load_state_dict(dict);
  CHECK(bn->num_batches_tracked.item<int64_t>() == kMin64);
}

// A variant of fuzz_state_dict's checkpoint seed with "scheduler.last_epoch" stored as a float64
// NaN reached LRScheduler::load_state_dict's double -> int64 cast (undefined: UBSan's "nan is
// outside the range of representable values"). The same cast read ReduceLROnPlateau's and
// GradScaler's counters. Each is now an error naming the entry, and nothing changes.
TEST_CASE("test_fuzz_findings: integer entries of scheduler and scaler state dicts must be whole numbers") {
  nn::Linear lin(2, 2);
  optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
  optim::StepLR step(opt, 2, 0.5);
  using Dict = OrderedDict<std::string, Tensor>;
  const Dict good = step.state_dict();
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), 1e300, 2.5}) {
    Dict d = good;
    d["last_epoch"] = scalar_tensor(bad, kDouble);
    check_error([&] { step.load_state_dict(d); },
                "expected a whole number for 'last_epoch' in scheduler state dict");
    d = good;
    d["_step_count"] = scalar_tensor(bad, kDouble);
    check_error([&] { step.load_state_dict(d); }, "'_step_count'");
  }
  CHECK(step.last_epoch() == 0);  // unchanged
  Dict ok = good;
  ok["last_epoch"] = scalar_tensor(7.0, kDouble);  // a whole number stored as a float is fine
  step.load_state_dict(ok);
  CHECK(step.last_epoch() == 7);

  optim::ReduceLROnPlateau plateau(opt);
  Dict p = plateau.state_dict();
  p["num_bad_epochs"] = scalar_tensor(std::nan(""), kDouble);
  check_error([&] { plateau.load_state_dict(p); }, "expected a whole number for 'num_bad_epochs'");

  amp::GradScaler scaler("cpu");
  Dict g = scaler.state_dict();
  REQUIRE(g.contains("growth_interval"));
  g["growth_interval"] = scalar_tensor(-INFINITY, kDouble);
  check_error([&] { scaler.load_state_dict(g); },
              "expected a whole number for 'growth_interval' in GradScaler state_dict");
  CHECK(scaler.get_growth_interval() == 2000);
}

// fuzz_ops (CI of 2026-12-01): slice with a step near INT64_MAX overflowed `stride * step` and
// `end - start + step - 1` (UBSan: 4611686018427387903 * 3). The result is the one element at
// start; ordinary steps keep PyTorch's strides.
TEST_CASE("fuzz findings: slice with a huge step takes one element, without overflow") {
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  Tensor x = arange(12, kDouble).view({4, 3});
  Tensor cols = x.slice(1, 1, 3, huge);
  CHECK(cols.sizes().vec() == std::vector<int64_t>{4, 1});
  CHECK(values_of<double>(cols) == std::vector<double>{1, 4, 7, 10});
  Tensor rows = x.t().slice(1, 0, 4, std::numeric_limits<int64_t>::max());
  CHECK(rows.sizes().vec() == std::vector<int64_t>{3, 1});
  CHECK(values_of<double>(rows) == std::vector<double>{0, 1, 2});
  CHECK(x.slice(0, 4, 4, huge).numel() == 0);
  // An ordinary step: PyTorch's size and stride.
  Tensor s = x.slice(0, 0, 4, 3);
  CHECK(s.sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(s.stride(0) == 9);
  CHECK(values_of<double>(s) == std::vector<double>{0, 1, 2, 9, 10, 11});
}
