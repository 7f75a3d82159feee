// Resuming a run: training stopped at step k, checkpointed (model with BatchNorm buffers,
// AdamW or SGD-momentum state, OneCycleLR, a CPU GradScaler that grows and backs off, the
// RNG behind dropout) and continued in freshly built objects is bit-identical on the CPU to
// the run that never stopped: every parameter, buffer, optimizer/scheduler/scaler state, the
// RNG and the order of the samples seen. k covers step 1, mid-epoch, an epoch's end and a
// skipped (inf) step.
//
// The DataLoader keeps no resumable position (like PyTorch's): the loader's seed fixes every
// epoch's order, so a resumed run sets the epoch and skips the batches already trained, as
// users do, saving (epoch, batch) in the checkpoint's metadata.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>

#include "ember/core/generator.h"
#include "ember/core/serialize.h"
#include "ember/cuda/runtime/device.h"
#include "ember/data/dataloader.h"
#include "ember/data/datasets/base.h"
#include "ember/data/transforms/stack.h"
#include "ember/nn/functional.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/linear.h"
#include "ember/optim/adamw.h"
#include "ember/optim/checkpoint.h"
#include "ember/optim/grad_scaler.h"
#include "ember/optim/one_cycle_lr.h"
#include "ember/optim/sgd.h"
#include "op_check.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::data;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

constexpr int64_t kSamples = 40, kBatch = 8, kTotalSteps = 13;  // 5 batches an epoch
constexpr int64_t kInfStep = 6;  // this step's loss is made inf: the scaler must skip it

/// 40 fixed 1x6x6 images; the target is the sample's index (the class is index % 3), so
/// the training loop can record which samples it saw.
struct Images : datasets::Dataset<Images> {
  Tensor x;
  Images() {
    manual_seed(4242);  // the same images in every run (each Run seeds again afterwards)
    x = randn({kSamples, 1, 6, 6});
  }
  Example<> get(size_t i) override {
    return {x[static_cast<int64_t>(i)], scalar_tensor(static_cast<int64_t>(i), kLong)};
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(kSamples); }
};
using Loader = DataLoader<decltype(Images().map(transforms::Stack<>()))>;

struct NetImpl : nn::Module {
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Dropout drop{nullptr};
  nn::Linear fc{nullptr};
  NetImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 4, 3)));
    bn = register_module("bn", nn::BatchNorm2d(4));
    drop = register_module("drop", nn::Dropout(0.3));
    fc = register_module("fc", nn::Linear(4 * 4 * 4, 3));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = relu(bn->forward(conv->forward(x)));
    return fc->forward(drop->forward(h.flatten(1)));
  }
};
EMBER_MODULE(Net);

struct Setup {
  bool adamw;
  size_t workers;
};

/// One training run and where it is: the loader's epoch and the batches of it trained.
struct Run {
  Net net{nullptr};
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<optim::OneCycleLR> sched;
  amp::GradScaler scaler{"cpu", amp::GradScalerOptions().init_scale(1024.0).growth_interval(3)};
  std::unique_ptr<Loader> loader;
  int64_t step = 0;
  uint64_t epoch = 0;
  int64_t batch_in_epoch = 0;
  std::vector<int64_t> seen;  // sample indices in the order trained on

  Run(const Setup& s, uint64_t init_seed) {
    loader = make_data_loader(Images().map(transforms::Stack<>()),
                              DataLoaderOptions(kBatch).shuffle(true).seed(77).workers(s.workers));
    manual_seed(init_seed);  // a resumed run starts from other weights and another RNG state
    net = Net();
    if (s.adamw)
      opt = std::make_unique<optim::AdamW>(net->parameters(), optim::AdamWOptions(1e-2).weight_decay(0.05));
    else
      opt = std::make_unique<optim::SGD>(net->parameters(),
                                         optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
    sched = std::make_unique<optim::OneCycleLR>(*opt, 0.05, kTotalSteps);
  }

  void train_step(const Example<>& batch) {
    opt->zero_grad();
    Tensor loss = nn::functional::cross_entropy(net->forward(batch.data), batch.target.remainder(3));
    if (step + 1 == kInfStep) loss = loss * std::numeric_limits<double>::infinity();
    scaler.scale(loss).backward();
    scaler.step(*opt);
    scaler.update();
    sched->step();
    auto idx = ember::test::values(batch.target);
    seen.insert(seen.end(), idx.begin(), idx.end());
  }

  /// Trains until `stop` steps are done, from wherever the run is.
  void train_until(int64_t stop) {
    while (step < stop) {
      loader->set_epoch(epoch);
      int64_t b = 0;
      for (auto& batch : *loader) {
        if (b++ < batch_in_epoch) continue;  // resumed mid-epoch: these were trained already
        train_step(batch);
        ++batch_in_epoch;
        if (++step == stop) return;
      }
      ++epoch;
      batch_in_epoch = 0;
    }
  }

  void save(const std::string& path) const {
    optim::CheckpointInfo info;
    info.step(step).epoch(static_cast<int64_t>(epoch));
    info.metadata()["batch_in_epoch"] = std::to_string(batch_in_epoch);
    optim::save_checkpoint(path, *net, *opt, *sched, scaler, info);
  }

  void load(const std::string& path) {
    optim::CheckpointInfo info = optim::load_checkpoint(path, *net, *opt, *sched, scaler);
    step = info.step();
    epoch = static_cast<uint64_t>(info.epoch());
    batch_in_epoch = std::stoll(info.metadata().at("batch_in_epoch"));
  }
};

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes().vec() != b.sizes().vec()) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

bool same_dict(const Dict& a, const Dict& b) {
  if (a.keys() != b.keys()) return false;
  for (const auto& item : a)
    if (!bitwise_equal(item.value(), b[item.key()])) return false;
  return true;
}

/// Checks two state dicts key by key, bit for bit; returns whether all matched.
bool check_same(const Dict& a, const Dict& b, const char* what) {
  INFO(what);
  CHECK(a.keys() == b.keys());
  for (const auto& item : a) {
    INFO(item.key());
    CHECK((b.contains(item.key()) && bitwise_equal(item.value(), b[item.key()])));
  }
  return same_dict(a, b);
}

std::vector<uint8_t> rng_state() {
  Generator& g = default_cpu_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  return g.get_state();
}

/// Everything a run's future depends on, compared bit for bit.
bool check_same_run(Run& a, Run& b) {
  bool same = check_same(a.net->state_dict(), b.net->state_dict(), "model");
  same = check_same(a.opt->state_dict(), b.opt->state_dict(), "optimizer") && same;
  same = check_same(a.sched->state_dict(), b.sched->state_dict(), "scheduler") && same;
  same = check_same(a.scaler.state_dict(), b.scaler.state_dict(), "scaler") && same;
  CHECK(a.seen == b.seen);
  CHECK(a.step == b.step);
  return same && a.seen == b.seen;
}

struct TempFile {
  std::string path =
      (fs::temp_directory_path() / ("ember_resume_" + std::to_string(::getpid()) + ".safetensors")).string();
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("test_resume: stopped at step k and resumed in fresh objects, training is bit-identical") {
  TempFile file;
  for (Setup s : {Setup{true, 0}, Setup{false, 0}, Setup{true, 2}}) {
    INFO((s.adamw ? "AdamW" : "SGD momentum") << ", " << s.workers << " workers");
    Run whole(s, 1);
    whole.train_until(kTotalSteps);
    const std::vector<uint8_t> whole_rng = rng_state();
    // The run really exercised what it claims: steps skipped by the scaler, growth after
    // clean steps, and BatchNorm statistics counted.
    CHECK(whole.scaler.get_scale() != 1024.0);
    CHECK(whole.net->bn->num_batches_tracked.item<int64_t>() == kTotalSteps);

    for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{5}, kInfStep, int64_t{8}, kTotalSteps - 1}) {
      INFO("stopped after step " << k);
      Run first(s, 1);
      first.train_until(k);
      first.save(file.path);
      std::vector<int64_t> seen_before = first.seen;

      Run resumed(s, 999);
      resumed.load(file.path);
      resumed.seen = seen_before;
      resumed.train_until(kTotalSteps);
      CHECK(check_same_run(whole, resumed));
      CHECK(rng_state() == whole_rng);  // the dropout masks drew the same numbers
    }
  }
}

TEST_CASE("test_resume: the comparison can fail: without the RNG state or the skipped batches, runs differ") {
  TempFile file;
  Setup s{true, 0};
  Run whole(s, 1);
  whole.train_until(kTotalSteps);

  Run first(s, 1);
  first.train_until(7);
  first.save(file.path);
  {
    Run resumed(s, 999);
    resumed.load(file.path);
    manual_seed(5);  // dropout now draws other numbers
    resumed.seen = first.seen;
    resumed.train_until(kTotalSteps);
    CHECK_FALSE(same_dict(whole.net->state_dict(), resumed.net->state_dict()));
  }
  {
    Run resumed(s, 999);
    resumed.load(file.path);
    resumed.batch_in_epoch = 0;  // forgets the position: retrains the epoch's first batches
    resumed.seen = first.seen;
    resumed.train_until(kTotalSteps);
    CHECK(resumed.seen != whole.seen);
  }
}

TEST_CASE(
    "test_resume: CUDA generator states ride in the checkpoint; a GPU run's file loads on any machine") {
  // A file holds "rng.cuda.<d>" for each visible device (none here without a GPU). One written
  // on a machine with two GPUs loads anywhere: the CPU stream resumes, the devices this
  // machine has get their state, the others are skipped.
  TempFile file;
  manual_seed(3);
  Net net;
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  optim::save_checkpoint(file.path, *net, opt);
  Dict d;
  int cuda_keys = 0;
  for (const auto& item : load_file(file.path)) {
    if (item.key().rfind("rng.cuda.", 0) == 0)
      ++cuda_keys;  // replaced below by two devices' states
    else
      d.insert(item.key(), item.value());
  }
  CHECK(cuda_keys == cuda::device_count());

  const Tensor expected = rand({4});  // the CPU stream right after the saved state
  Tensor gpu_state = d["rng.cpu"].clone();
  gpu_state[8].fill_(123);  // another offset (bytes 8..15 of Generator::get_state())
  d.insert("rng.cuda.0", gpu_state);
  d.insert("rng.cuda.1", gpu_state);
  SafetensorsMetadata meta = load_file_metadata(file.path);
  save_file(d, file.path, meta);
  manual_seed(99);
  optim::load_checkpoint(file.path, *net, opt);
  CHECK(ember::test::values(rand({4})) == ember::test::values(expected));
  if (cuda::device_count() > 0) {
    Generator& g = default_cuda_generator(0);
    std::lock_guard<std::mutex> lock(g.mutex());
    CHECK(g.get_state() == std::vector<uint8_t>(static_cast<const uint8_t*>(gpu_state.data_ptr()),
                                                static_cast<const uint8_t*>(gpu_state.data_ptr()) + 16));
  }
  // Malformed entries are refused before anything is restored.
  Dict bad = d;
  bad.insert("rng.cuda.x", gpu_state);
  save_file(bad, file.path, meta);
  ember::test::check_error([&] { optim::load_checkpoint(file.path, *net, opt); },
                           "unexpected tensor 'rng.cuda.x'");
  bad = d;
  bad.insert("rng.cuda.2", gpu_state.to(kFloat));
  save_file(bad, file.path, meta);
  ember::test::check_error([&] { optim::load_checkpoint(file.path, *net, opt); },
                           "'rng.cuda.2' must be a 1-D uint8 tensor");
}
