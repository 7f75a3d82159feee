// amp::GradScaler on the CPU against torch.amp.GradScaler("cpu"): the scale trajectory,
// growth tracker, skipped steps and parameters of a scripted run with inf and NaN gradients
// (optim/fixtures/grad_scaler_trajectory.h, written by make_grad_scaler.py with PyTorch),
// the update rule the CUDA kernel shares (cuda/amp_math.h), the fused unscale-and-check,
// PyTorch's error messages, the disabled pass-through, state_dict and checkpoint round trips,
// and unscale_ before gradient clipping.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/cuda/amp_math.h"
#include "ember/cuda/runtime/device.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/utils.h"
#include "ember/optim/adam.h"
#include "ember/optim/checkpoint.h"
#include "ember/optim/grad_scaler.h"
#include "ember/optim/sgd.h"
#include "op_check.h"
#include "temp_dir.h"
#include "optim/fixtures/grad_scaler_trajectory.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::test;
using namespace ember::optim;
using amp::GradScaler;
using amp::GradScalerOptions;
namespace fx = ember::test::grad_scaler_fixture;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor floats(const std::vector<float>& v) { return tensor(v); }

std::vector<float> float_values(const Tensor& t) {
  Tensor c = t.detach().contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

/// Whether two CPU tensors hold the same bytes.
bool same_bits(const Tensor& a, const Tensor& b) {
  Tensor ca = a.detach().contiguous(), cb = b.detach().contiguous();
  return ca.dtype() == cb.dtype() && ca.numel() == cb.numel() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()) == 0;
}

GradScalerOptions fixture_options() {
  return GradScalerOptions()
      .init_scale(fx::kInitScale)
      .growth_factor(fx::kGrowthFactor)
      .backoff_factor(fx::kBackoffFactor)
      .growth_interval(fx::kGrowthInterval);
}

/// A scaler and an SGD optimizer with one (scaled) backward pass done: w's gradient is
/// c * scale.
struct Setup {
  Tensor w = floats({1.0f, -2.0f, 0.5f, 3.0f}).requires_grad_();
  SGD opt{std::vector<Tensor>{w}, SGDOptions(0.125)};
  GradScaler scaler;
  explicit Setup(const GradScalerOptions& o = GradScalerOptions().init_scale(8.0)) : scaler("cpu", o) {}
  void backward(const std::vector<float>& c) {
    opt.zero_grad();
    scaler.scale((w * floats(c)).sum()).backward();
  }
};

}  // namespace

TEST_CASE("test_grad_scaler: scale trajectory and skipped steps equal PyTorch's") {
  Tensor w = floats(std::vector<float>(fx::kW0.begin(), fx::kW0.end())).requires_grad_();
  SGD opt(std::vector<Tensor>{w}, SGDOptions(fx::kLr).momentum(fx::kMomentum));
  GradScaler scaler("cpu", fixture_options());
  for (size_t t = 0; t < fx::kSteps.size(); ++t) {
    const fx::Step& s = fx::kSteps[t];
    INFO("step " << t);
    opt.zero_grad();
    Tensor loss = (w * floats(std::vector<float>(s.coeffs.begin(), s.coeffs.end()))).sum();
    scaler.scale(loss).backward();
    const Tensor before = w.detach().clone();
    scaler.step(opt);
    CHECK(scaler.found_inf(opt) == s.found_inf);
    if (s.found_inf) CHECK(same_bits(w, before));  // skipped: not one bit changed
    if (static_cast<int>(t) == fx::kNewScaleStep)
      scaler.update(fx::kNewScale);
    else
      scaler.update();
    CHECK(scaler.get_scale() == s.scale);
    CHECK(scaler.state_dict()["_growth_tracker"].item<int64_t>() == s.growth_tracker);
    CHECK(float_values(w) == std::vector<float>(s.w.begin(), s.w.end()));
  }
  auto sd = scaler.state_dict();
  CHECK(sd.keys() == std::vector<std::string>{"scale", "growth_factor", "backoff_factor", "growth_interval",
                                              "_growth_tracker"});
  const char* keys[5] = {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"};
  for (int k = 0; k < 5; ++k) CHECK(sd[keys[k]].item<double>() == fx::kFinalState[k]);
}

TEST_CASE("test_grad_scaler: a grown scale that overflows float32 is kept, as PyTorch's") {
  Tensor w = floats({1.0f}).requires_grad_();
  SGD opt(std::vector<Tensor>{w}, SGDOptions(0.0));
  GradScaler scaler("cpu", GradScalerOptions().init_scale(std::ldexp(1.0, 126)).growth_interval(1));
  for (int t = 0; t < 3; ++t) {
    opt.zero_grad();
    scaler.scale((w * 0.5).sum()).backward();
    scaler.step(opt);
    scaler.update();
    CHECK(scaler.get_scale() == fx::kOverflowRun[t][0]);
    CHECK(scaler.state_dict()["_growth_tracker"].item<double>() == fx::kOverflowRun[t][1]);
  }
}

TEST_CASE("test_grad_scaler: the update rule (shared with the CUDA kernel)") {
  using amp_math::update_scale;
  float scale = 1024.f;
  int32_t tracker = 0;
  update_scale(scale, tracker, 0.f, 2.0, 0.5, 3);
  update_scale(scale, tracker, 0.f, 2.0, 0.5, 3);
  CHECK(scale == 1024.f);
  CHECK(tracker == 2);
  update_scale(scale, tracker, 0.f, 2.0, 0.5, 3);  // the third clean step grows
  CHECK(scale == 2048.f);
  CHECK(tracker == 0);
  update_scale(scale, tracker, 0.f, 2.0, 0.5, 3);
  update_scale(scale, tracker, 2.f, 2.0, 0.5, 3);  // two optimizers' flags summed: still an overflow
  CHECK(scale == 1024.f);
  CHECK(tracker == 0);
  // The product is taken in double and rounded to float once.
  float s = 3.f;
  int32_t g = 5;
  update_scale(s, g, 1.f, 2.0, 0.1, 3);
  CHECK(s == static_cast<float>(3.0 * 0.1));
  // Overflow on growth: the scale stays, the tracker restarts.
  float big = std::numeric_limits<float>::max();
  int32_t gb = 0;
  update_scale(big, gb, 0.f, 2.0, 0.5, 1);
  CHECK(big == std::numeric_limits<float>::max());
  CHECK(gb == 0);
  // A NaN flag counts as found (nonzero).
  float n = 8.f;
  int32_t gn = 1;
  update_scale(n, gn, kNaN, 2.0, 0.5, 3);
  CHECK(n == 4.f);
  CHECK(amp_math::is_finite(1.f));
  CHECK_FALSE(amp_math::is_finite(kInf));
  CHECK_FALSE(amp_math::is_finite(-kInf));
  CHECK_FALSE(amp_math::is_finite(kNaN));
  CHECK_FALSE(amp_math::is_finite(std::numeric_limits<double>::infinity()));
  CHECK(amp_math::is_finite(std::numeric_limits<double>::max()));
}

TEST_CASE("test_grad_scaler: update_scale_ on CPU tensors") {
  Tensor scale = full({}, 4.0, kFloat);
  Tensor tracker = full({}, 1, kInt);
  Tensor found = zeros({}, kFloat);
  amp::update_scale_(scale, tracker, found, 2.0, 0.5, 2);
  CHECK(scale.item<double>() == 8.0);
  CHECK(tracker.item<int64_t>() == 0);
  found.fill_(1.0);
  amp::update_scale_(scale, tracker, found, 2.0, 0.5, 2);
  CHECK(scale.item<double>() == 4.0);
  check_error([&] { amp::update_scale_(scale, tracker.to(kLong), found, 2.0, 0.5, 2); }, "growth_tracker");
}

TEST_CASE("test_grad_scaler: the fused unscale-and-check on the CPU") {
  const Tensor inv = full({}, 0.25, kFloat);
  SUBCASE("finite gradients of every floating dtype: unscaled, found_inf left at 0") {
    for (ScalarType dt : {kFloat, kDouble, kBFloat16, kHalf}) {
      Tensor g = floats({4.f, -8.f, 0.f, 2.f}).to(dt);
      Tensor found = zeros({}, kFloat);
      amp::non_finite_check_and_unscale_({g}, found, inv);
      CHECK(values(g) == std::vector<double>{1, -2, 0, 0.5});
      CHECK(found.item<double>() == 0.0);
    }
  }
  SUBCASE("one inf among many tensors sets found_inf; every tensor is still unscaled") {
    Tensor a = floats({4.f, 8.f}), b = floats({2.f, kInf}), c = full({3}, 16.0, kDouble);
    Tensor found = zeros({}, kFloat);
    amp::non_finite_check_and_unscale_({a, b, c}, found, inv);
    CHECK(found.item<double>() == 1.0);
    CHECK(values(a) == std::vector<double>{1, 2});
    CHECK(values(c) == std::vector<double>{4, 4, 4});
    CHECK(std::isinf(values(b)[1]));
  }
  SUBCASE("a NaN at the end of a large gradient (the parallel path)") {
    Tensor g = full({200001}, 2.0, kFloat);
    g.data_ptr<float>()[200000] = kNaN;
    Tensor found = zeros({}, kFloat);
    amp::non_finite_check_and_unscale_({g}, found, inv);
    CHECK(found.item<double>() == 1.0);
    CHECK(g.data_ptr<float>()[123456] == 0.5f);
  }
  SUBCASE("a strided gradient is unscaled in place") {
    Tensor base = floats({4.f, 8.f, 12.f, 16.f}).view({2, 2});
    Tensor g = base.t();
    Tensor found = zeros({}, kFloat);
    amp::non_finite_check_and_unscale_({g}, found, inv);
    CHECK(values(base) == std::vector<double>{1, 2, 3, 4});
  }
  SUBCASE("found_inf already set stays set; inv_scale 1 changes no bits") {
    Tensor g = floats({kNaN, 3.f});
    const Tensor before = g.clone();
    Tensor found = ones({}, kFloat);
    amp::non_finite_check_and_unscale_({floats({1.f})}, found, inv);
    CHECK(found.item<double>() == 1.0);
    Tensor f2 = zeros({}, kFloat);
    amp::non_finite_check_and_unscale_({g}, f2, ones({}, kFloat));
    CHECK(same_bits(g, before));
    CHECK(f2.item<double>() == 1.0);
  }
  SUBCASE("bad arguments") {
    Tensor g = floats({1.f});
    check_error([&] { amp::non_finite_check_and_unscale_({g}, zeros({}, kDouble), inv); },
                "found_inf must be a 1-element float32 tensor");
    check_error([&] { amp::non_finite_check_and_unscale_({g}, zeros({}, kFloat), zeros({2}, kFloat)); },
                "inv_scale must be a 1-element float32 tensor");
    check_error(
        [&] {
          amp::non_finite_check_and_unscale_({tensor({1, 2})}, zeros({}, kFloat), inv);
        },
        "floating tensors");
  }
}

TEST_CASE("test_grad_scaler: scale() of one tensor and of a list") {
  GradScaler scaler("cpu", GradScalerOptions().init_scale(4.0));
  CHECK(scaler.get_scale() == 4.0);  // before the first scale(): init_scale
  Tensor x = floats({1.f, 2.f});
  CHECK(values(scaler.scale(x)) == std::vector<double>{4, 8});
  std::vector<Tensor> ys = scaler.scale(std::vector<Tensor>{floats({1.f}), tensor({0.5}, kDouble)});
  REQUIRE(ys.size() == 2);
  CHECK(values(ys[0]) == std::vector<double>{4});
  CHECK(values(ys[1]) == std::vector<double>{2});
  CHECK(ys[1].dtype() == kDouble);
  CHECK(scaler.scale(std::vector<Tensor>{}).empty());
}

TEST_CASE("test_grad_scaler: PyTorch's error messages") {
  SUBCASE("before scale()") {
    Setup s;
    check_error([&] { s.scaler.unscale_(s.opt); },
                "Attempted unscale_ but _scale is None.  This may indicate your script did not use "
                "scaler.scale(loss or outputs) earlier in the iteration.");
    check_error([&] { s.scaler.step(s.opt); }, "Attempted step but _scale is None.");
    check_error([&] { s.scaler.update(); }, "Attempted update but _scale is None.");
  }
  SUBCASE("unscale_ twice, unscale_ after step, step twice") {
    Setup s;
    s.backward({1.f, 1.f, 1.f, 1.f});
    s.scaler.unscale_(s.opt);
    check_error([&] { s.scaler.unscale_(s.opt); },
                "unscale_() has already been called on this optimizer since the last update().");
    s.scaler.step(s.opt);
    check_error([&] { s.scaler.unscale_(s.opt); }, "unscale_() is being called after step().");
    check_error([&] { s.scaler.step(s.opt); }, "step() has already been called since the last update().");
    s.scaler.update();
    s.backward({1.f, 1.f, 1.f, 1.f});
    s.scaler.unscale_(s.opt);  // a new iteration starts fresh
  }
  SUBCASE("update or step with nothing checked; a closure") {
    Setup s;
    s.scaler.scale(floats({1.f}));
    check_error([&] { s.scaler.update(); }, "No inf checks were recorded prior to update.");
    check_error([&] { s.scaler.step(s.opt); }, "No inf checks were recorded for this optimizer.");
    Setup s2;
    s2.backward({1.f, 1.f, 1.f, 1.f});
    check_error([&] { s2.scaler.step(s2.opt, [] { return Tensor(); }); },
                "Closure use is not currently supported if GradScaler is enabled.");
  }
  SUBCASE("float16 gradients, bad factors, bad new_scale, empty state dict") {
    Tensor h = floats({1.f}).to(kHalf).requires_grad_();
    SGD opt(std::vector<Tensor>{h}, SGDOptions(0.1));
    GradScaler scaler("cpu");
    scaler.scale((h.to(kFloat) * 2.0).sum()).backward();
    check_error([&] { scaler.unscale_(opt); }, "Attempting to unscale FP16 gradients.");
    check_error([] { GradScaler("cpu", GradScalerOptions().growth_factor(1.0)); },
                "The growth factor must be > 1.0.");
    check_error([] { GradScaler("cpu", GradScalerOptions().backoff_factor(1.0)); },
                "The backoff factor must be < 1.0.");
    const std::string reason = "new_scale should be a float or a 1-element torch.cuda.FloatTensor";
    check_error([&] { scaler.update(floats({1.f, 2.f})); }, reason);
    check_error([&] { scaler.update(floats({1.f}).requires_grad_()); }, reason);
    check_error([&] { scaler.load_state_dict(OrderedDict<std::string, Tensor>()); },
                "The source state dict is empty, possibly because it was saved from a disabled instance of "
                "GradScaler.");
  }
}

TEST_CASE("test_grad_scaler: update(new_scale) from a float or a tensor keeps the growth tracker") {
  Setup s(GradScalerOptions().init_scale(8.0).growth_interval(5));
  s.backward({1.f, 1.f, 1.f, 1.f});
  s.scaler.step(s.opt);
  s.scaler.update();
  CHECK(s.scaler.state_dict()["_growth_tracker"].item<int64_t>() == 1);
  s.backward({1.f, 1.f, 1.f, 1.f});
  s.scaler.step(s.opt);
  s.scaler.update(floats({3.f}));
  CHECK(s.scaler.get_scale() == 3.0);
  CHECK(s.scaler.state_dict()["_growth_tracker"].item<int64_t>() == 1);
  s.scaler.update(5.0);
  CHECK(s.scaler.get_scale() == 5.0);
}

TEST_CASE("test_grad_scaler: a disabled scaler passes everything through") {
  Setup s(GradScalerOptions().enabled(false));
  CHECK_FALSE(s.scaler.is_enabled());
  Tensor loss = (s.w * floats({1.f, kInf, 1.f, 1.f})).sum();
  CHECK(s.scaler.scale(loss).is_same(loss));
  loss.backward();
  const Tensor grad = s.w.grad().clone();
  s.scaler.unscale_(s.opt);
  s.scaler.unscale_(s.opt);  // no once-per-step rule either
  CHECK(same_bits(s.w.grad(), grad));
  const Tensor before = s.w.detach().clone();
  s.scaler.step(s.opt);  // steps even with an inf gradient
  CHECK_FALSE(same_bits(s.w, before));
  s.scaler.update();
  s.scaler.update(4.0);
  CHECK(s.scaler.get_scale() == 1.0);
  CHECK(s.scaler.state_dict().is_empty());
  GradScaler enabled("cpu");
  s.scaler.load_state_dict(enabled.state_dict());  // no-op
  CHECK(s.scaler.get_scale() == 1.0);
  if (!cuda::is_available()) CHECK_FALSE(GradScaler("cuda").is_enabled());  // PyTorch: "Disabling."
}

TEST_CASE("test_grad_scaler: state_dict round trip") {
  Setup s(GradScalerOptions().init_scale(64.0).growth_factor(4.0).backoff_factor(0.25).growth_interval(7));
  s.backward({1.f, 1.f, 1.f, 1.f});
  s.scaler.step(s.opt);
  s.scaler.update();
  auto sd = s.scaler.state_dict();
  CHECK(sd["scale"].dtype() == kDouble);
  CHECK(sd["growth_interval"].dtype() == kLong);
  CHECK(sd["_growth_tracker"].dtype() == kLong);
  CHECK(sd["scale"].item<double>() == 64.0);
  CHECK(sd["growth_factor"].item<double>() == 4.0);
  CHECK(sd["backoff_factor"].item<double>() == 0.25);
  CHECK(sd["growth_interval"].item<int64_t>() == 7);
  CHECK(sd["_growth_tracker"].item<int64_t>() == 1);

  // Into a fresh scaler (applied when its scale is first made) and into a running one.
  GradScaler fresh("cpu");
  fresh.load_state_dict(sd);
  CHECK(fresh.get_scale() == 64.0);
  CHECK(fresh.get_growth_factor() == 4.0);
  CHECK(fresh.get_backoff_factor() == 0.25);
  CHECK(fresh.get_growth_interval() == 7);
  fresh.scale(floats({1.f}));
  CHECK(fresh.state_dict()["_growth_tracker"].item<int64_t>() == 1);
  Setup running(GradScalerOptions().init_scale(2.0));
  running.backward({1.f, 1.f, 1.f, 1.f});
  running.scaler.load_state_dict(sd);
  CHECK(running.scaler.get_scale() == 64.0);
  CHECK(running.scaler.state_dict()["_growth_tracker"].item<int64_t>() == 1);
  auto missing = sd;
  missing.erase("_growth_tracker");
  check_error([&] { GradScaler("cpu").load_state_dict(missing); }, "_growth_tracker");
}

TEST_CASE("test_grad_scaler: a skipped step leaves parameters and optimizer state untouched") {
  Tensor w = floats({0.5f, -1.5f, 2.f}).requires_grad_();
  Adam opt(std::vector<Tensor>{w}, AdamOptions(0.1));
  GradScaler scaler("cpu", GradScalerOptions().init_scale(16.0));
  scaler.scale((w * floats({1.f, kNaN, 1.f})).sum()).backward();
  const Tensor before = w.detach().clone();
  CHECK_FALSE(scaler.step(opt).defined());
  CHECK(scaler.found_inf(opt));
  CHECK(same_bits(w, before));
  CHECK(opt.state().empty());  // Adam never ran: no step count, no moments
  scaler.update();
  CHECK(scaler.get_scale() == 8.0);
}

TEST_CASE("test_grad_scaler: unscale_, clip_grad_norm_, then step unscales once") {
  Setup s(GradScalerOptions().init_scale(1024.0));
  s.backward({3.f, 4.f, 0.f, 0.f});
  s.scaler.unscale_(s.opt);
  CHECK(values(s.w.grad()) == std::vector<double>{3, 4, 0, 0});
  const double norm = nn::utils::clip_grad_norm_(std::vector<Tensor>{s.w}, 1.0);
  CHECK(norm == doctest::Approx(5.0));
  const std::vector<double> clipped = values(s.w.grad());
  const Tensor before = s.w.detach().clone();
  s.scaler.step(s.opt);
  CHECK(values(s.w.grad()) == clipped);  // not divided by the scale again
  check_close(s.w.detach() - before, {-0.125 * clipped[0], -0.125 * clipped[1], 0, 0}, 1e-7, 1e-6);
  s.scaler.update();
}

// A scaler has a scheduler's two methods but never passes for one.
static_assert(!std::is_constructible_v<SchedulerRef, GradScaler&>);

TEST_CASE("test_grad_scaler: checkpoints carry the scaler; old ones still load") {
  TempDir tmp;
  nn::Linear net(2, 2);
  SGD opt(net->parameters(), SGDOptions(0.1));
  GradScaler scaler("cpu", GradScalerOptions().init_scale(32.0).growth_interval(4));
  scaler.scale(net->forward(ones({1, 2})).sum()).backward();
  scaler.step(opt);
  scaler.update();
  scaler.update(96.0);

  const std::string with = tmp / "with_scaler.safetensors";
  save_checkpoint(with, *net, opt, nullptr, scaler, CheckpointInfo().step(1));
  const std::string without = tmp / "without_scaler.safetensors";
  save_checkpoint(without, *net, opt, CheckpointInfo().step(1));

  nn::Linear net2(2, 2);
  SGD opt2(net2->parameters(), SGDOptions(0.1));
  GradScaler scaler2("cpu");
  CHECK(load_checkpoint(with, *net2, opt2, nullptr, scaler2).step() == 1);
  CHECK(scaler2.get_scale() == 96.0);
  CHECK(scaler2.get_growth_interval() == 4);
  CHECK(scaler2.state_dict()["_growth_tracker"].item<int64_t>() == 1);
  load_checkpoint(with, *net2, opt2);  // saved with a scaler, loaded without: fine
  load_checkpoint(without, *net2, opt2);
  GradScaler scaler3("cpu");
  check_error([&] { load_checkpoint(without, *net2, opt2, nullptr, scaler3); },
              "a GradScaler was given but checkpoint");
}
