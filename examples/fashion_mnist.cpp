// fashion_mnist: ember's main job. Trains a small CNN (or an MLP) on Fashion-MNIST with AdamW
// and a one-cycle learning-rate schedule, the way a libtorch program would, and leaves a run
// folder a person can inspect: metrics.csv, metrics.svg (loss and accuracy per epoch),
// best_model.safetensors (PyTorch's key names, so examples/fashion_mnist.py loads it) and one
// checkpoint per epoch that --resume continues from exactly.
//
//   build/examples/fashion_mnist                      # defaults: CNN, 6 epochs, ~92% test, ~2.5 min on 2 cores
//   build/examples/fashion_mnist --model mlp --epochs 10
//   build/examples/fashion_mnist --resume runs/fashion_mnist/checkpoint_epoch2.safetensors
//   build/examples/fashion_mnist --eval runs/fashion_mnist/best_model.safetensors
//   build/examples/fashion_mnist --device cuda        # the same job on the GPU
//   build/examples/fashion_mnist --device cuda --amp fp16   # mixed precision (also bf16; CPU too)
//   build/ember-run --nproc-per-node 2 --standalone build/examples/fashion_mnist --dist gloo
//
// On CUDA the loader pins its batches and the copies to the device are asynchronous; when a
// training step runs out of device memory the trainer halves its batch size, empties the
// CUDA cache, says so and runs the step again (examples/oom_retry.h).
//
// --amp bf16|fp16 trains with mixed precision as a PyTorch AMP loop does: the forward pass
// and the loss run inside an AutocastGuard for the run's device type with that dtype (the
// weights stay float32; autocast casts them per op), backward runs outside it; fp16 adds a
// GradScaler (scale the loss, unscale and skip overflowing steps, adapt the scale), bf16 has
// float32's range and needs none. Evaluation runs under the same autocast.
//
// --dist gloo|nccl trains data-parallel under ember-run (or torchrun), one process per CPU
// share or per GPU (examples/data_parallel.h): the model in DistributedDataParallel, each rank
// on its own shard of the training split (DistributedSampler, reshuffled per epoch), and
// --batch-size per process, as in PyTorch. Every rank seeds the same way, so they hold the same
// split and the same dropout stream; only rank 0 evaluates, logs and writes files, and the
// others take its validation score so they stop at the same epoch. With the launcher's
// --max-restarts, `--resume auto` continues a restarted group from the newest checkpoint.
//
// Data: the IDX files (plain or .gz) of the Debian package dataset-fashion-mnist, installed
// by scripts/setup.sh under /usr/share/datasets/fashion-mnist.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "data_parallel.h"
#include "fashion_mnist_options.h"
#include "oom_retry.h"
#include "training_log.h"

namespace torch = ember;
namespace nn = ember::nn;
namespace F = ember::nn::functional;
namespace fs = std::filesystem;

// ---- the models (the same modules, in the same order, as examples/fashion_mnist.py) ---------

// conv-bn-relu-pool twice, then a small classifier: ~420k parameters, ~92% in a few epochs.
struct CnnImpl : nn::Module {
  CnnImpl()
      : features(register_module(
            "features",
            nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32), nn::ReLU(),
                           nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                           nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2))))),
        classifier(register_module(
            "classifier", nn::Sequential(nn::Flatten(), nn::Dropout(0.25), nn::Linear(64 * 7 * 7, 128), nn::ReLU(),
                                         nn::Dropout(0.25), nn::Linear(128, 10)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return classifier->forward(features->forward(x)); }
  nn::Sequential features, classifier;
};
EMBER_MODULE(Cnn);

/// The network as the trainer needs it: a module (parameters, state dict, train/eval), its
/// forward, and the forward training steps call (through DistributedDataParallel under
/// --dist; the plain forward otherwise).
struct Model {
  std::shared_ptr<nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::function<torch::Tensor(const torch::Tensor&)> train_forward = forward;
};

Model make_model(const std::string& kind) {
  if (kind == "mlp") {
    nn::Sequential mlp(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Dropout(0.2), nn::Linear(256, 128),
                       nn::ReLU(), nn::Linear(128, 10));
    auto forward = [mlp](const torch::Tensor& x) mutable { return mlp->forward(x); };
    return {mlp.ptr(), forward, forward};
  }
  Cnn cnn;
  auto forward = [cnn](const torch::Tensor& x) mutable { return cnn->forward(x); };
  return {cnn.ptr(), forward, forward};
}

// ---- data -----------------------------------------------------------------------------------

// Fashion-MNIST train-set mean and standard deviation (also in examples/fashion_mnist.py).
constexpr double kMean = 0.2860, kStd = 0.3530;

struct Split {
  torch::Tensor images, labels;  // (N, 1, 28, 28) float32 normalised, (N) int64
  int64_t size() const { return images.size(0); }
};

Split load_split(const Options& o, bool train) {
  using torch::data::datasets::MNIST;
  MNIST mnist(o.data_dir, train ? MNIST::Mode::kTrain : MNIST::Mode::kTest);
  Split s{(mnist.images() - kMean) / kStd, mnist.targets()};
  int64_t limit = train ? o.limit_train : o.limit_test;
  if (limit > 0 && limit < s.size()) s = {s.images.narrow(0, 0, limit), s.labels.narrow(0, 0, limit)};
  return s;
}

/// Holds out o.validation images (at least 1, at most a tenth), drawn with the seeded default
/// generator — so the same --seed gives the same split.
std::pair<Split, Split> train_validation_split(const Split& all, const Options& o) {
  int64_t n_val = std::max<int64_t>(1, std::min(o.validation, all.size() / 10));
  torch::Tensor perm = torch::randperm(all.size());
  torch::Tensor val = perm.narrow(0, 0, n_val), tr = perm.narrow(0, n_val, all.size() - n_val);
  return {Split{all.images.index_select(0, tr), all.labels.index_select(0, tr)},
          Split{all.images.index_select(0, val), all.labels.index_select(0, val)}};
}

// ---- mixed precision -----------------------------------------------------------------------

/// --amp as the training loop uses it.
struct AmpMode {
  std::string name = "off";                // off, bf16 or fp16 (as given, and in checkpoints)
  std::optional<torch::ScalarType> dtype;  // the autocast dtype; none: float32 throughout
  bool enabled() const { return dtype.has_value(); }
  /// float16's range is small enough that small gradients flush to zero: its loss is scaled.
  bool scaled() const { return dtype == torch::kFloat16; }
  std::string describe() const {
    if (!enabled()) return "float32";
    return "mixed precision " + name + (scaled() ? " (autocast + GradScaler)" : " (autocast)");
  }
};

AmpMode amp_mode(const std::string& name) {
  AmpMode m;
  m.name = name;
  if (name == "bf16") m.dtype = torch::kBFloat16;
  if (name == "fp16") m.dtype = torch::kFloat16;
  return m;
}

// ---- evaluation -----------------------------------------------------------------------------

struct Score {
  double loss = 0, accuracy = 0;
};

Score evaluate(Model& model, const Split& data, torch::Device device, const AmpMode& amp, int64_t batch = 1000) {
  torch::NoGradGuard no_grad;
  // Under the autocast the model trained with (torch.autocast(device_type, dtype, enabled)).
  torch::AutocastGuard autocast(device.type(), amp.dtype, amp.enabled());
  model.module->eval();
  double loss = 0;
  int64_t correct = 0;
  for (int64_t i = 0; i < data.size(); i += batch) {
    int64_t n = std::min(batch, data.size() - i);
    torch::Tensor x = data.images.narrow(0, i, n).to(device), y = data.labels.narrow(0, i, n).to(device);
    torch::Tensor out = model.forward(x);
    loss += F::cross_entropy(out, y, F::CrossEntropyFuncOptions().reduction(torch::kSum)).item<double>();
    correct += out.argmax(1).eq(y).sum().item<int64_t>();
  }
  return {loss / data.size(), static_cast<double>(correct) / data.size()};
}

// ---- training -------------------------------------------------------------------------------

struct Trainer {
  Options o;
  trainer::DataParallel& dp;
  torch::Device device;
  Model model;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::unique_ptr<torch::optim::OneCycleLR> scheduler;
  AmpMode amp;
  std::unique_ptr<torch::amp::GradScaler> scaler;  // disabled (passes through) unless --amp fp16
  int64_t step_batch_size = 0;  // examples per forward pass: o.batch_size until memory runs out
  int start_epoch = 1;
  double best_val = -1;
  int epochs_since_best = 0;
  std::vector<trainer::EpochMetrics> history;
  std::unique_ptr<torch::tensorboard::SummaryWriter> tensorboard;  // --tensorboard, rank 0 only
};

/// What one training step saw: the summed loss and the correct predictions of its batch.
struct StepResult {
  double loss_sum = 0;
  int64_t correct = 0;
};

/// The gradients of one batch (on the host, pinned when training on CUDA), with the batch
/// sent through the network `batch_size` examples at a time: each piece's gradient is
/// weighted by its share of the batch, so they add up to the whole batch's mean-loss
/// gradient (BatchNorm's batch statistics aside). Forward and loss run under autocast,
/// backward outside it, through the GradScaler's scaled loss (unscaled when not --amp fp16).
/// Raises on a non-finite loss. Zeroes the gradients first, so a retry redoes it all.
StepResult accumulate_gradients(Trainer& t, const torch::Tensor& images, const torch::Tensor& labels,
                                int64_t batch_size, int epoch, int64_t step) {
  // Pinned host memory is copied by DMA while the device works on what is already queued.
  const bool non_blocking = t.device.is_cuda();
  const int64_t n = images.size(0);
  StepResult r;
  t.optimizer->zero_grad();
  const auto pieces = trainer::micro_batches(n, batch_size);
  for (size_t piece = 0; piece < pieces.size(); ++piece) {
    auto [start, len] = pieces[piece];
    // Under --dist, gradients are averaged across ranks once per batch: in the last piece's
    // backward (DDP's no_sync for the others).
    auto no_sync = piece + 1 < pieces.size() ? t.dp.no_sync() : nullptr;
    torch::Tensor x = images.narrow(0, start, len).to(t.device, non_blocking);
    torch::Tensor y = labels.narrow(0, start, len).to(t.device, non_blocking);
    torch::Tensor out, loss;
    {
      torch::AutocastGuard autocast(t.device.type(), t.amp.dtype, t.amp.enabled());
      out = t.model.train_forward(x);
      loss = F::cross_entropy(out, y);  // float32 under autocast (nll_loss is on the float32 list)
    }
    double l = loss.item<double>();
    if (!std::isfinite(l))
      throw std::runtime_error("the loss became " + std::to_string(l) + " at epoch " + std::to_string(epoch) +
                               ", batch " + std::to_string(step) + "; stopping (try a lower --lr than " +
                               std::to_string(t.o.lr) + ")");
    if (len != n) loss = loss * (static_cast<double>(len) / static_cast<double>(n));
    t.scaler->scale(loss).backward();
    r.loss_sum += l * static_cast<double>(len);
    r.correct += out.argmax(1).eq(y).sum().item<int64_t>();
  }
  return r;
}

/// The optimizer step after a batch's gradients, through the GradScaler: it unscales them,
/// skips the step when one is inf/NaN and updates the scale (all pass-throughs unless --amp
/// fp16). Returns whether the step was skipped. Outside the out-of-memory retry: its memory
/// does not depend on the batch size, and the scaler's per-step state (unscaled, stepped,
/// the growth tracker) must move exactly once per batch.
bool optimizer_step(Trainer& t) {
  t.scaler->step(*t.optimizer);
  const bool skipped = t.scaler->found_inf(*t.optimizer);
  t.scaler->update();
  return skipped;
}

/// One pass over the training split; returns its metrics (val_* filled in by the caller).
/// The examples one rank trains on per epoch: the whole split, or its DistributedSampler shard.
int64_t examples_per_rank(const Trainer& t, int64_t train_size) {
  auto sampler = t.dp.sampler(train_size, t.o.seed);
  return sampler ? static_cast<int64_t>(sampler->num_samples()) : train_size;
}

/// One pass over the training split (this rank's shard of it under --dist); returns its
/// metrics summed over the ranks (val_* filled in by the caller).
trainer::EpochMetrics train_epoch(Trainer& t, const Split& train, int epoch) {
  auto options = torch::data::DataLoaderOptions()
                     .batch_size(t.o.batch_size)
                     .drop_last(true)
                     .workers(t.o.workers)
                     .seed(t.o.seed + static_cast<uint64_t>(epoch))
                     .pin_memory(t.device.is_cuda());
  auto sampler = t.dp.sampler(train.size(), t.o.seed);
  if (sampler)
    options.sampler(sampler);
  else
    options.shuffle(true);
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::TensorDataset(train.images, train.labels).map(torch::data::transforms::Stack<>()),
      options);
  // The loader hands its epoch to the sampler: a new order every epoch, the same on every rank.
  if (sampler) loader->set_epoch(static_cast<uint64_t>(epoch));
  int64_t batches = (sampler ? static_cast<int64_t>(sampler->num_samples()) : train.size()) / t.o.batch_size;
  trainer::ProgressBar bar(epoch, t.o.epochs, batches, t.dp.is_main());
  auto start = std::chrono::steady_clock::now();
  t.model.module->train();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0, done = 0, skipped = 0;
  for (auto& batch : *loader) {
    StepResult r;
    try {
      // Only the gradients are retried (they zero themselves first); the step then runs once.
      r = trainer::run_with_oom_retry(
          t.step_batch_size,
          [&](int64_t batch_size) {
            return accumulate_gradients(t, batch.data, batch.target, batch_size, epoch, done + 1);
          },
          [] { torch::cuda::empty_cache(); });
      skipped += optimizer_step(t) ? 1 : 0;
    } catch (...) {
      bar.finish();
      throw;
    }
    t.scheduler->step();
    loss_sum += r.loss_sum;
    correct += r.correct;
    seen += batch.data.size(0);
    bar.update(++done, seen, loss_sum / seen);
  }
  bar.finish();
  std::vector<double> totals{loss_sum, static_cast<double>(correct), static_cast<double>(seen),
                             static_cast<double>(skipped)};
  t.dp.sum(totals);  // the whole epoch's numbers, over every rank's shard
  loss_sum = totals[0], correct = static_cast<int64_t>(totals[1]), seen = static_cast<int64_t>(totals[2]);
  trainer::EpochMetrics m;
  m.epoch = epoch;
  m.train_loss = loss_sum / std::max<int64_t>(seen, 1);
  m.train_acc = static_cast<double>(correct) / std::max<int64_t>(seen, 1);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (t.amp.scaled() && t.dp.is_main())
    std::printf("  GradScaler: scale %g after the epoch, %lld of %lld steps skipped (inf/NaN gradients)\n",
                t.scaler->get_scale(), static_cast<long long>(skipped), static_cast<long long>(done));
  return m;
}

std::string checkpoint_path(const Options& o, int epoch) {
  return (fs::path(o.out_dir) / ("checkpoint_epoch" + std::to_string(epoch) + ".safetensors")).string();
}

// Model, optimizer, scheduler, the GradScaler (--amp fp16), the RNG (dropout) and progress,
// in one file written atomically: a crash while saving leaves the previous epoch's
// checkpoint as it was. The --amp mode goes in the metadata, for resume to check.
void save_checkpoint(Trainer& t, int epoch) {
  torch::optim::CheckpointInfo::Metadata meta{
      {"model", t.o.model}, {"amp", t.amp.name}, {"epochs_since_best", std::to_string(t.epochs_since_best)}};
  auto info = torch::optim::CheckpointInfo().epoch(epoch).best_metric(t.best_val).metadata(meta);
  const std::string path = checkpoint_path(t.o, epoch);
  if (t.amp.scaled())
    torch::optim::save_checkpoint(path, *t.model.module, *t.optimizer, *t.scheduler, *t.scaler, info);
  else
    torch::optim::save_checkpoint(path, *t.model.module, *t.optimizer, *t.scheduler, info);
}

/// The newest checkpoint_epochN.safetensors in --out-dir ("" when there is none).
std::string newest_checkpoint(const Options& o) {
  std::string best;
  int best_epoch = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(o.out_dir, ec)) {
    int epoch = 0;
    char tail = 0;
    const std::string name = entry.path().filename().string();
    if (std::sscanf(name.c_str(), "checkpoint_epoch%d.safetensor%c", &epoch, &tail) == 2 && tail == 's' &&
        name == "checkpoint_epoch" + std::to_string(epoch) + ".safetensors" && epoch > best_epoch) {
      best_epoch = epoch;
      best = entry.path().string();
    }
  }
  return best;
}

void resume(Trainer& t) {
  if (t.o.resume == "auto") {
    // A group the launcher restarted continues where the last checkpoint left it; the first
    // start of the run finds none and begins at epoch 1.
    t.o.resume = newest_checkpoint(t.o);
    if (t.o.resume.empty()) {
      if (t.dp.is_main()) std::printf("--resume auto: no checkpoint in %s yet, starting the run\n", t.o.out_dir.c_str());
      return;
    }
  }
  // The architecture must match before the weights are read into it.
  auto saved = torch::optim::load_checkpoint_info(t.o.resume).metadata();
  if (saved.count("model") && saved.at("model") != t.o.model)
    throw std::runtime_error(t.o.resume + " holds a " + saved.at("model") + " model, not --model " + t.o.model);
  // Resuming continues the same run: a different --amp would change its arithmetic half way,
  // and an fp16 run's GradScaler state exists only in fp16 checkpoints. (Files written before
  // --amp existed are float32 runs.)
  const std::string saved_amp = saved.count("amp") ? saved.at("amp") : "off";
  if (saved_amp != t.amp.name)
    throw std::runtime_error(t.o.resume + " was written by a run with --amp " + saved_amp + ", not --amp " +
                             t.amp.name + "; resume with --amp " + saved_amp +
                             " (or start a new run to change the precision)");
  torch::optim::CheckpointInfo info =
      t.amp.scaled()
          ? torch::optim::load_checkpoint(t.o.resume, *t.model.module, *t.optimizer, *t.scheduler, *t.scaler)
          : torch::optim::load_checkpoint(t.o.resume, *t.model.module, *t.optimizer, *t.scheduler);
  t.start_epoch = static_cast<int>(info.epoch()) + 1;
  t.best_val = info.best_metric();
  if (info.metadata().count("epochs_since_best")) t.epochs_since_best = std::stoi(info.metadata().at("epochs_since_best"));
  // The epochs already run, for metrics.csv and the plot.
  std::ifstream csv(fs::path(t.o.out_dir) / "metrics.csv");
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    trainer::EpochMetrics m;
    if (std::sscanf(line.c_str(), "%d,%lf,%lf,%lf,%lf,%lf,%lf", &m.epoch, &m.train_loss, &m.train_acc, &m.val_loss,
                    &m.val_acc, &m.lr, &m.seconds) == 7 &&
        m.epoch < t.start_epoch)
      t.history.push_back(m);
  }
  if (t.dp.is_main())
    std::printf("resumed from %s: epoch %d done, best validation accuracy %.2f%%\n", t.o.resume.c_str(),
              t.start_epoch - 1, 100 * t.best_val);
}

/// One epoch in TensorBoard (as a PyTorch loop would log it): the losses and accuracies under
/// loss/ and accuracy/, the learning rate, and every parameter's histogram.
void log_epoch(torch::tensorboard::SummaryWriter& w, Trainer& t, const trainer::EpochMetrics& m) {
  w.add_scalars("loss", {{"train", m.train_loss}, {"val", m.val_loss}}, m.epoch);
  w.add_scalars("accuracy", {{"train", m.train_acc}, {"val", m.val_acc}}, m.epoch);
  w.add_scalar("lr", m.lr, m.epoch);
  for (const auto& p : t.model.module->named_parameters()) w.add_histogram(p.key(), p.value(), m.epoch);
  w.flush();
}

int run_eval(const Options& o, torch::Device device) {
  Model model = make_model(o.model);
  model.module->load_state_dict(torch::load_file(o.eval));
  model.module->to(device);
  Split test = load_split(o, /*train=*/false);
  AmpMode amp = amp_mode(o.amp);
  Score s = evaluate(model, test, device, amp);
  std::printf("test accuracy %.2f%% (loss %.4f) on %lld images, weights %s%s\n", 100 * s.accuracy, s.loss,
              static_cast<long long>(test.size()), o.eval.c_str(),
              amp.enabled() ? (", autocast " + amp.name).c_str() : "");
  return 0;
}

/// The optimizer, its one-cycle schedule and the GradScaler of a run of `steps_per_epoch`
/// optimizer steps an epoch.
void make_optimizer(Trainer& t, int64_t steps_per_epoch) {
  const Options& o = t.o;
  t.optimizer = std::make_unique<torch::optim::AdamW>(t.model.module->parameters(),
                                                      torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  t.scheduler = std::make_unique<torch::optim::OneCycleLR>(*t.optimizer, o.lr, o.epochs * steps_per_epoch);
  // PyTorch's recipe: a GradScaler for float16 only (bfloat16 has float32's exponent range);
  // disabled, every method of it passes through.
  t.amp = amp_mode(o.amp);
  t.scaler = std::make_unique<torch::amp::GradScaler>(t.device.is_cuda() ? "cuda" : "cpu",
                                                      torch::amp::GradScalerOptions().enabled(t.amp.scaled()));
}

/// The TensorBoard writer of --tensorboard (rank 0 only).
void open_tensorboard(Trainer& t) {
  const Options& o = t.o;
  if (o.tensorboard.empty() || !t.dp.is_main()) return;
  // A resumed run restarts at its next epoch: purge_step hides what an interrupted run
  // logged after its last checkpoint.
  t.tensorboard = std::make_unique<torch::tensorboard::SummaryWriter>(
      o.tensorboard, "", t.start_epoch > 1 ? std::optional<int64_t>(t.start_epoch) : std::nullopt);
  if (t.start_epoch == 1)
    t.tensorboard->add_text("run", "model " + o.model + ", batch " + std::to_string(o.batch_size) + ", lr " +
                                       std::to_string(o.lr) + ", amp " + o.amp + ", dist " + o.dist, 0);
}

/// The run's first line: model, device, precision, split sizes, parameters, epochs.
void print_banner(const Trainer& t, int64_t train, int64_t val, int64_t test) {
  const Options& o = t.o;
  const trainer::DataParallel& dp = t.dp;
  std::printf("%s on %s, %s: %lld train / %lld validation / %lld test images, %lld parameters, %d epochs%s\n",
              o.model.c_str(), t.device.str().c_str(), t.amp.describe().c_str(), static_cast<long long>(train),
              static_cast<long long>(val), static_cast<long long>(test),
              static_cast<long long>(nn::utils::parameters_to_vector(t.model.module->parameters()).numel()),
              o.epochs,
              dp.enabled() ? (", data-parallel over " + std::to_string(dp.world_size()) + " ranks (" + o.dist +
                              "), batch " + std::to_string(o.batch_size) + " per rank")
                                 .c_str()
                           : "");
}

/// After epoch `epoch` trained (metrics m): scores it on the validation split, keeps the best
/// model, logs, prints and checkpoints. Whether it was the best so far.
bool finish_epoch(Trainer& t, trainer::EpochMetrics& m, int epoch, const Split& val, const std::string& best_path) {
  const Options& o = t.o;
  trainer::DataParallel& dp = t.dp;
  double lr = t.scheduler->get_last_lr().front();  // where the schedule ended this epoch
  // Rank 0 scores the epoch and every rank takes its numbers: the ranks hold the same
  // weights, and agree on the best epoch and on stopping.
  Score v;
  if (dp.is_main()) v = evaluate(t.model, val, t.device, t.amp);
  std::vector<double> score{v.loss, v.accuracy};
  dp.from_rank0(score);
  v = {score[0], score[1]};
  m.val_loss = v.loss, m.val_acc = v.accuracy, m.lr = lr;
  t.history.push_back(m);
  bool better = v.accuracy > t.best_val;
  if (better) {
    t.best_val = v.accuracy;
    t.epochs_since_best = 0;
    if (dp.is_main()) torch::save_file(t.model.module->state_dict(), best_path);
  } else {
    ++t.epochs_since_best;
  }
  if (t.tensorboard) log_epoch(*t.tensorboard, t, m);
  if (dp.is_main()) {
    std::printf("epoch %d/%d | train loss %.4f acc %.2f%% | val loss %.4f acc %.2f%%%s | lr %.2e | %.1f s\n", epoch,
                o.epochs, m.train_loss, 100 * m.train_acc, m.val_loss, 100 * m.val_acc, better ? " *" : "", lr,
                m.seconds);
    std::fflush(stdout);
    save_checkpoint(t, epoch);
    trainer::write_metrics_csv((fs::path(o.out_dir) / "metrics.csv").string(), t.history);
    trainer::write_metrics_svg((fs::path(o.out_dir) / "metrics.svg").string(), t.history);
  }
  return better;
}

int run_training(const Options& o, trainer::DataParallel& dp, torch::Device device) {
  fs::create_directories(o.out_dir);
  Split all = load_split(o, /*train=*/true);
  Split test = load_split(o, /*train=*/false);
  torch::manual_seed(o.seed);  // on every rank: the same split, weights and dropout stream
  auto [train, val] = train_validation_split(all, o);
  Trainer t{o, dp, device, make_model(o.model), nullptr, nullptr, {}, nullptr, o.batch_size};
  t.model.module->to(device);
  int64_t steps_per_epoch = examples_per_rank(t, train.size()) / o.batch_size;
  if (steps_per_epoch < 1)
    throw std::runtime_error("--batch-size is larger than the training split" +
                             std::string(dp.enabled() ? " (this rank's share of it)" : ""));
  make_optimizer(t, steps_per_epoch);
  if (!o.resume.empty()) resume(t);
  // After resuming (every rank read the same file): DDP's construction broadcasts rank 0's
  // parameters and buffers and checks that every rank's parameters have the same shapes.
  t.model.train_forward = dp.wrap(t.model.module, t.model.forward);
  open_tensorboard(t);
  if (dp.is_main()) print_banner(t, train.size(), val.size(), test.size());

  const std::string best_path = (fs::path(o.out_dir) / "best_model.safetensors").string();
  for (int epoch = t.start_epoch; epoch <= o.epochs; ++epoch) {
    trainer::EpochMetrics m = train_epoch(t, train, epoch);
    finish_epoch(t, m, epoch, val, best_path);
    if (epoch == o.stop_after) break;
    if (t.epochs_since_best >= o.patience && epoch < o.epochs) {
      if (dp.is_main()) std::printf("stopping early: validation accuracy has not improved for %d epochs\n", o.patience);
      break;
    }
  }
  // Test the best model seen, not the last one (rank 0; the others wait for it at the
  // barrier, so no rank leaves the group while another still needs the store rank 0 hosts).
  if (dp.is_main()) {
    t.model.module->load_state_dict(torch::load_file(best_path));
    Score s = evaluate(t.model, test, device, t.amp);
    std::printf("test accuracy %.2f%% (loss %.4f), best validation accuracy %.2f%%; run folder %s\n",
                100 * s.accuracy, s.loss, 100 * t.best_val, o.out_dir.c_str());
  }
  dp.barrier();
  return 0;
}

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  try {
    if (o.threads > 0) torch::set_num_threads(o.threads);
    if (!o.eval.empty()) {
      torch::Device device(o.device);
      if (device.is_cuda() && !torch::cuda::is_available())
        throw std::runtime_error("--device " + o.device + ": no CUDA device is available");
      return run_eval(o, device);
    }
    if (o.dist == "gloo" && torch::Device(o.device).is_cuda())
      throw std::runtime_error("--dist gloo trains on the CPU; use --dist nccl for GPUs");
    if (o.dist == "nccl" && !torch::cuda::is_available())
      throw std::runtime_error("--dist nccl: no CUDA device is available");
    trainer::DataParallel dp(o.dist);  // joins the group: blocks until every rank is there
    torch::Device device = dp.device(torch::Device(o.device));
    if (device.is_cuda() && !torch::cuda::is_available())
      throw std::runtime_error("--device " + o.device + ": no CUDA device is available");
    return run_training(o, dp, device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
}
