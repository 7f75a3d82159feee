// Training checkpoints: resuming from one continues a run bit for bit (parameters, AdamW
// moments, StepLR's schedule, and the RNG behind dropout masks), plus the file's contents,
// its metadata and the errors for files that are not checkpoints.
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "ember/nn/modules/linear.h"
#include "ember/nn/serialize.h"
#include "ember/optim/adamw.h"
#include "ember/optim/checkpoint.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/sgd.h"
#include "op_check.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::test;
using namespace ember::optim;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

// Linear -> ReLU -> dropout drawn from the default CPU generator -> Linear, with a step
// counter buffer: every kind of state a checkpoint must carry.
struct NetImpl : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  Tensor calls;
  NetImpl() {
    fc1 = register_module("fc1", nn::Linear(4, 8));
    fc2 = register_module("fc2", nn::Linear(8, 3));
    calls = register_buffer("calls", scalar_tensor(0, kLong));
  }
  Tensor forward(const Tensor& x) {
    calls.add_(1);
    Tensor h = relu(fc1->forward(x));
    Tensor keep = (rand_like(h) > 0.3).to(h.dtype());  // dropout with p = 0.3
    return fc2->forward(h * keep / 0.7);
  }
};
EMBER_MODULE(Net);

/// The whole run's data, fixed up front so both runs see the same batches.
struct Data {
  std::vector<Tensor> x, y;
  explicit Data(int n) {
    manual_seed(1234);
    for (int i = 0; i < n; ++i) {
      x.push_back(randn({5, 4}));
      y.push_back(randn({5, 3}));
    }
  }
};

struct Run {
  Net net;
  AdamW opt;
  StepLR sched;
  Run()
      : net(),
        opt(net->parameters(), AdamWOptions(0.01).weight_decay(0.1)),
        sched(opt, /*step_size=*/2, /*gamma=*/0.5) {}
  void train(const Data& d, int from, int to) {
    for (int i = from; i < to; ++i) {
      opt.zero_grad();
      Tensor loss = (net->forward(d.x[i]) - d.y[i]).pow(2).mean();
      loss.backward();
      opt.step();
      sched.step();
    }
  }
};

bool same_parameters(const nn::Module& a, const nn::Module& b) {
  auto sa = a.state_dict();
  auto sb = b.state_dict();
  if (sa.keys() != sb.keys()) return false;
  for (const auto& item : sa)
    if (!equal(item.value(), sb[item.key()])) return false;
  return true;
}

}  // namespace

TEST_CASE("test_checkpoint: resuming from a checkpoint continues training bit for bit") {
  constexpr int k = 3, m = 4;
  Data data(k + m);
  TempDir tmp;
  std::string path = tmp / "ckpt.safetensors";

  manual_seed(1);
  Run a;
  a.train(data, 0, k);
  save_checkpoint(path, *a.net, a.opt, a.sched,
                  CheckpointInfo().epoch(3).step(k).best_metric(0.25).metadata({{"run", "a"}}));
  a.train(data, k, k + m);

  manual_seed(999);  // the resumed run starts from different weights and RNG state
  Run b;
  CHECK_FALSE(same_parameters(*a.net, *b.net));
  CheckpointInfo info = load_checkpoint(path, *b.net, b.opt, b.sched);
  CHECK(info.epoch() == 3);
  CHECK(info.step() == k);
  CHECK(info.best_metric() == 0.25);
  CHECK(info.metadata() == std::map<std::string, std::string>{{"run", "a"}});
  CHECK(b.sched.last_epoch() == k);
  b.train(data, k, k + m);

  CHECK(same_parameters(*a.net, *b.net));  // parameters and the "calls" buffer, exactly
  CHECK(b.net->calls.item<int64_t>() == k + m);
  CHECK(a.opt.param_groups()[0].options().get_lr() == b.opt.param_groups()[0].options().get_lr());
  CHECK(b.opt.param_groups()[0].options().get_lr() == 0.01 * 0.5 * 0.5 * 0.5);  // StepLR halved it at 2, 4, 6

  // The test can fail: without the RNG restored, the dropout masks (and so the weights) differ.
  Run c;
  load_checkpoint(path, *c.net, c.opt, c.sched);
  manual_seed(5);
  c.train(data, k, k + m);
  CHECK_FALSE(same_parameters(*a.net, *c.net));
}

TEST_CASE("test_checkpoint: the file holds prefixed state dicts, the RNG and metadata") {
  TempDir tmp;
  std::string path = tmp / "ckpt.safetensors";
  Data data(2);
  Run r;
  r.train(data, 0, 2);
  save_checkpoint(path, *r.net, r.opt, r.sched);
  Dict d = load_file(path);
  CHECK(d.contains("model.fc1.weight"));
  CHECK(d.contains("model.calls"));
  CHECK(d.contains("optimizer.state.0.exp_avg"));
  CHECK(d.contains("optimizer.param_groups.0.lr"));
  CHECK(d.contains("scheduler.last_epoch"));
  REQUIRE(d.contains("rng.cpu"));
  CHECK(d["rng.cpu"].dtype() == kByte);
  for (const auto& item : r.net->state_dict()) CHECK(equal(d["model." + item.key()], item.value()));
  SafetensorsMetadata meta = load_file_metadata(path);
  CHECK(meta.at("ember.checkpoint") == "1");
  CHECK(meta.at("ember.has_scheduler") == "1");
  CheckpointInfo info = load_checkpoint_info(path);
  CHECK(info.epoch() == 0);
  CHECK(std::isnan(info.best_metric()));  // unset
  CHECK(info.metadata().empty());

  // Only the weights, e.g. to evaluate a checkpoint.
  Net fresh;
  load_checkpoint_model(path, *fresh);
  CHECK(same_parameters(*r.net, *fresh));
}

TEST_CASE("test_checkpoint: best_metric round-trips exactly; ReduceLROnPlateau and no scheduler") {
  TempDir tmp;
  std::string path = tmp / "p.safetensors";
  Net net;
  SGD opt(net->parameters(), SGDOptions(0.1));
  ReduceLROnPlateau plateau(opt, ReduceLROnPlateau::max, 0.5, /*patience=*/0);
  for (double metric : {0.5, 0.7, 0.6, 0.6}) plateau.step(metric);
  double best = 0.1 + 0.2;  // 0.30000000000000004: needs all 17 digits
  save_checkpoint(path, *net, opt, plateau, CheckpointInfo().best_metric(best));
  Net net2;
  SGD opt2(net2->parameters(), SGDOptions(0.1));
  ReduceLROnPlateau plateau2(opt2, ReduceLROnPlateau::max, 0.5, 0);
  CheckpointInfo info = load_checkpoint(path, *net2, opt2, &plateau2);
  CHECK(info.best_metric() == best);
  CHECK(plateau2.best() == plateau.best());
  CHECK(plateau2.num_bad_epochs() == plateau.num_bad_epochs());
  CHECK(opt2.param_groups()[0].options().get_lr() == opt.param_groups()[0].options().get_lr());

  // Saved without a scheduler: loading without one works; asking for one is an error.
  save_checkpoint(path, *net, opt, CheckpointInfo().epoch(7));
  CHECK(load_checkpoint(path, *net2, opt2).epoch() == 7);
  check_error([&] { load_checkpoint(path, *net2, opt2, plateau2); }, "a scheduler was given but checkpoint");
  // A null scheduler pointer means none.
  ReduceLROnPlateau* none = nullptr;
  CHECK(load_checkpoint(path, *net2, opt2, none).epoch() == 7);
}

TEST_CASE("test_checkpoint: errors for files that are not checkpoints and bad metadata") {
  TempDir tmp;
  Net net;
  SGD opt(net->parameters(), SGDOptions(0.1));
  save(net, tmp / "weights.safetensors");
  check_error([&] { load_checkpoint(tmp / "weights.safetensors", *net, opt); }, "is not an ember checkpoint");
  check_error(
      [&] {
        save_checkpoint(tmp / "c.safetensors", *net, opt, CheckpointInfo().metadata({{"ember.epoch", "1"}}));
      },
      "metadata key 'ember.epoch' is reserved");
  CHECK_FALSE(fs::exists(tmp / "c.safetensors"));
  check_error([&] { load_checkpoint(tmp / "missing.safetensors", *net, opt); }, "cannot open");
  // A checkpoint of a different model is refused by the model's strict load.
  nn::Linear other(4, 8);
  SGD opt_other(other->parameters(), SGDOptions(0.1));
  save_checkpoint(tmp / "other.safetensors", *other, opt_other);
  check_error([&] { load_checkpoint(tmp / "other.safetensors", *net, opt); }, "Missing key(s) in state_dict");
}

TEST_CASE("test_checkpoint: libtorch's save/load spelling for an optimizer") {
  TempDir tmp;
  Data data(2);
  Run r;
  r.train(data, 0, 2);
  save(r.opt, tmp / "opt.safetensors");
  AdamW opt2(r.net->parameters(), AdamWOptions(0.5));
  load(opt2, tmp / "opt.safetensors");
  Dict a = r.opt.state_dict(), b = opt2.state_dict();
  REQUIRE(a.keys() == b.keys());
  for (const auto& item : a) CHECK(equal(item.value(), b[item.key()]));
}

namespace {

/// Two Linear layers with a chosen output width, so two instances can differ in one shape.
struct PairImpl : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  explicit PairImpl(int64_t out) {
    fc1 = register_module("fc1", nn::Linear(4, 8));
    fc2 = register_module("fc2", nn::Linear(8, out));
  }
};
EMBER_MODULE(Pair);

Dict deep_copy(const Dict& d) {
  Dict out;
  for (const auto& item : d) out.insert(item.key(), item.value().clone());
  return out;
}

bool same_dict(const Dict& a, const Dict& b) {
  if (a.keys() != b.keys()) return false;
  for (const auto& item : a)
    if (!equal(item.value(), b[item.key()])) return false;
  return true;
}

}  // namespace

// Found by fuzz/fuzz_state_dict.cpp's predecessor: load_checkpoint copied every model entry
// that fit before reporting the one that did not, and restored the model before the optimizer
// refused its state, so a mismatched file left a half-loaded model behind.
TEST_CASE("test_checkpoint: a checkpoint that does not fit changes nothing (model, optimizer, RNG)") {
  TempDir tmp;
  std::string path = tmp / "wide.safetensors";
  manual_seed(3);
  Pair wide(5);
  SGD wide_opt(wide->parameters(), SGDOptions(0.1));
  save_checkpoint(path, *wide, wide_opt);

  // fc1 fits, fc2 does not (5 outputs saved, 3 here): fc1 must keep its own weights.
  manual_seed(4);
  Pair narrow(3);
  SGD narrow_opt(narrow->parameters(), SGDOptions(0.7));
  Dict before = deep_copy(narrow->state_dict());
  manual_seed(77);
  std::vector<uint8_t> rng_before = default_cpu_generator().get_state();
  check_error([&] { load_checkpoint(path, *narrow, narrow_opt); },
              "size mismatch for fc2.weight: copying a param with shape torch.Size([5, 8]) from checkpoint, "
              "the shape in current model is torch.Size([3, 8]).");
  CHECK(same_dict(before, narrow->state_dict()));
  CHECK(narrow_opt.param_groups()[0].options().get_lr() == 0.7);
  CHECK(default_cpu_generator().get_state() == rng_before);
  // The same through load_checkpoint_model, strict or not (shapes must match either way).
  check_error([&] { load_checkpoint_model(path, *narrow); }, "size mismatch for fc2.weight");
  check_error([&] { load_checkpoint_model(path, *narrow, /*strict=*/false); }, "size mismatch for fc2.bias");
  CHECK(same_dict(before, narrow->state_dict()));
  // The test can fail: the file's fc1 differs from narrow's.
  CHECK_FALSE(equal(load_file(path)["model.fc1.weight"], narrow->fc1->weight));
}

TEST_CASE("test_checkpoint: an optimizer or scheduler that refuses its state rolls back the others") {
  TempDir tmp;
  std::string path = tmp / "adamw.safetensors";
  Data data(2);
  manual_seed(5);
  Run saved;
  saved.train(data, 0, 2);
  save_checkpoint(path, *saved.net, saved.opt, saved.sched);

  // The model fits, the optimizer does not (AdamW's state into SGD): nothing may change.
  manual_seed(6);
  Net net;
  Dict net_before = deep_copy(net->state_dict());
  SGD sgd(net->parameters(), SGDOptions(0.3));
  check_error([&] { load_checkpoint(path, *net, sgd); }, "missing key 'param_groups.0.momentum'");
  CHECK(same_dict(net_before, net->state_dict()));
  CHECK(sgd.param_groups()[0].options().get_lr() == 0.3);

  // The optimizer fits and loads, then the scheduler refuses (a StepLR's state into
  // CosineAnnealingWarmRestarts, which needs "T_cur"): the optimizer gets its state back.
  AdamW adamw(net->parameters(), AdamWOptions(0.5));
  CosineAnnealingWarmRestarts cosine(adamw, /*T_0=*/3);
  Dict opt_before = adamw.state_dict();
  Dict sched_before = deep_copy(cosine.state_dict());
  manual_seed(88);
  std::vector<uint8_t> rng_before = default_cpu_generator().get_state();
  check_error([&] { load_checkpoint(path, *net, adamw, cosine); }, "T_cur");
  CHECK(same_dict(opt_before, adamw.state_dict()));
  CHECK(same_dict(sched_before, cosine.state_dict()));
  CHECK(adamw.param_groups()[0].options().get_lr() == 0.5);
  CHECK(same_dict(net_before, net->state_dict()));
  CHECK(default_cpu_generator().get_state() == rng_before);

  // With matching objects the same file loads, and the optimizer's state is the file's.
  StepLR step(adamw, 2, 0.5);
  load_checkpoint(path, *net, adamw, step);
  CHECK(same_dict(adamw.state_dict(), saved.opt.state_dict()));
  CHECK(same_parameters(*net, *saved.net));
}
