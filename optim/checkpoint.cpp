// Training checkpoints in one safetensors file; see Note [Checkpoint file layout].
#include "ember/optim/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <mutex>
#include <vector>

#include "ember/core/generator.h"
#include "ember/core/ops/creation.h"
#include "ember/core/serialize.h"
#include "ember/cuda/runtime/device.h"
#include "ember/optim/grad_scaler.h"

namespace ember::optim {
namespace {

using Dict = OrderedDict<std::string, Tensor>;

constexpr const char* kModel = "model.";
constexpr const char* kOptimizer = "optimizer.";
constexpr const char* kScheduler = "scheduler.";
constexpr const char* kScaler = "scaler.";
constexpr const char* kRng = "rng.cpu";
constexpr const char* kRngCuda = "rng.cuda.";  // + the device index

void add_prefixed(Dict& out, const std::string& prefix, const Dict& in) {
  for (const auto& item : in) out.insert(prefix + item.key(), item.value());
}

std::string format_double(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
  return std::string(buf, r.ptr);
}

template <class T>
T parse_number(const std::string& text, const std::string& key, const std::string& path) {
  T v{};
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  EMBER_CHECK(r.ec == std::errc() && r.ptr == text.data() + text.size(), "checkpoint '", path,
              "': metadata '", key, "' is not a number: '", text, "'");
  return v;
}

Tensor rng_state_tensor(Generator& g) {
  std::vector<uint8_t> state;
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    state = g.get_state();
  }
  Tensor t = empty({static_cast<int64_t>(state.size())}, kByte);
  std::memcpy(t.data_ptr(), state.data(), state.size());
  return t;
}

/// A generator state tensor of the file, checked before anything is restored.
void check_rng(const Tensor& t, const std::string& key, const std::string& path) {
  EMBER_CHECK(t.dtype() == kByte && t.dim() == 1, "checkpoint '", path, "': '", key,
              "' must be a 1-D uint8 tensor, got ", t.dtype(), " of shape ", t.sizes());
}

void restore_rng(Generator& g, const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  std::vector<uint8_t> state(p, p + t.numel());
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_state(state);
}

void write(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
           const SchedulerRef& scheduler, const amp::GradScaler* scaler, const CheckpointInfo& info) {
  SafetensorsMetadata meta;
  for (const auto& [k, v] : info.metadata()) {
    EMBER_CHECK(k.rfind("ember.", 0) != 0, "save_checkpoint: metadata key '", k,
                "' is reserved (keys starting with \"ember.\" are the checkpoint's own)");
    meta[k] = v;
  }
  meta["ember.checkpoint"] = "1";
  meta["ember.epoch"] = std::to_string(info.epoch());
  meta["ember.step"] = std::to_string(info.step());
  meta["ember.best_metric"] = format_double(info.best_metric());
  meta["ember.has_scheduler"] = scheduler ? "1" : "0";
  meta["ember.has_scaler"] = scaler ? "1" : "0";
  Dict all;
  add_prefixed(all, kModel, model.state_dict());
  add_prefixed(all, kOptimizer, optimizer.state_dict());
  if (scheduler) add_prefixed(all, kScheduler, scheduler.state_dict());
  if (scaler) add_prefixed(all, kScaler, scaler->state_dict());
  all.insert(kRng, rng_state_tensor(default_cpu_generator()));
  // Dropout on a GPU draws from that device's generator: without its state a resumed CUDA run
  // would draw other masks (PyTorch users save torch.cuda.get_rng_state_all() for this).
  for (int d = 0; d < cuda::device_count(); ++d)
    all.insert(::ember::detail::str_cat(kRngCuda, d), rng_state_tensor(default_cuda_generator(d)));
  save_file(all, path, meta);
}

CheckpointInfo parse_info(const SafetensorsMetadata& meta, const std::string& path) {
  auto it = meta.find("ember.checkpoint");
  EMBER_CHECK(it != meta.end(), "'", path,
              "' is not an ember checkpoint (no \"ember.checkpoint\" metadata); "
              "weights saved with ember::save(model, path) load with ember::load(model, path)");
  EMBER_CHECK(it->second == "1", "checkpoint '", path, "' has format version ", it->second,
              "; this ember reads version 1");
  auto get = [&](const char* key) -> const std::string& {
    auto f = meta.find(key);
    EMBER_CHECK(f != meta.end(), "checkpoint '", path, "' has no '", key, "' metadata");
    return f->second;
  };
  CheckpointInfo info;
  info.epoch(parse_number<int64_t>(get("ember.epoch"), "ember.epoch", path));
  info.step(parse_number<int64_t>(get("ember.step"), "ember.step", path));
  info.best_metric(parse_number<double>(get("ember.best_metric"), "ember.best_metric", path));
  for (const auto& [k, v] : meta)
    if (k.rfind("ember.", 0) != 0) info.metadata()[k] = v;
  return info;
}

// The checkpoint's tensors split by prefix; anything else in the file is an error.
struct Parts {
  Dict model, optimizer, scheduler, scaler;
  Tensor rng;
  std::vector<std::pair<int, Tensor>> rng_cuda;  // (device index, state)
};

/// The device index of a "rng.cuda.<d>" key, or -1 for any other key.
int cuda_rng_device(const std::string& key) {
  const size_t n = std::strlen(kRngCuda);
  if (key.compare(0, n, kRngCuda) != 0 || key.size() == n || key.size() > n + 4) return -1;
  int d = 0;
  for (size_t i = n; i < key.size(); ++i) {
    if (key[i] < '0' || key[i] > '9') return -1;
    d = d * 10 + (key[i] - '0');
  }
  return d;
}

Parts split(const Dict& all, const std::string& path) {
  Parts p;
  for (const auto& item : all) {
    const std::string& k = item.key();
    if (k.rfind(kModel, 0) == 0)
      p.model.insert(k.substr(std::strlen(kModel)), item.value());
    else if (k.rfind(kOptimizer, 0) == 0)
      p.optimizer.insert(k.substr(std::strlen(kOptimizer)), item.value());
    else if (k.rfind(kScheduler, 0) == 0)
      p.scheduler.insert(k.substr(std::strlen(kScheduler)), item.value());
    else if (k.rfind(kScaler, 0) == 0)
      p.scaler.insert(k.substr(std::strlen(kScaler)), item.value());
    else if (k == kRng)
      p.rng = item.value();
    else if (int d = cuda_rng_device(k); d >= 0)
      p.rng_cuda.emplace_back(d, item.value());
    else
      ::ember::detail::throw_error(
          ::ember::detail::str_cat("checkpoint '", path, "': unexpected tensor '", k, "'"));
  }
  EMBER_CHECK(p.rng.defined(), "checkpoint '", path, "' has no '", kRng, "' tensor");
  check_rng(p.rng, kRng, path);
  for (const auto& [d, t] : p.rng_cuda) check_rng(t, ::ember::detail::str_cat(kRngCuda, d), path);
  return p;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     const CheckpointInfo& info) {
  write(path, model, optimizer, SchedulerRef(), nullptr, info);
}

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     SchedulerRef scheduler, const CheckpointInfo& info) {
  write(path, model, optimizer, scheduler, nullptr, info);
}

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer,
                     SchedulerRef scheduler, const amp::GradScaler& scaler, const CheckpointInfo& info) {
  write(path, model, optimizer, scheduler, &scaler, info);
}

namespace {

bool has_flag(const SafetensorsMetadata& meta, const char* key) {
  auto it = meta.find(key);
  return it != meta.end() && it->second == "1";
}

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
  return s;
}

std::string torch_size(IntArrayRef sizes) {
  std::string s = "torch.Size([";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "])";
}

// Module::load_state_dict copies every entry that fits before it reports the ones that do not
// (as PyTorch's does), so a checkpoint of another model would leave this one half-loaded. This
// raises the same error first, changing nothing: missing / unexpected keys (when strict) and
// shape mismatches, the only ways the load can fail.
void check_model_state(const nn::Module& model, const Dict& dict, bool strict) {
  Dict own = model.state_dict();
  std::vector<std::string> missing, unexpected, errors;
  for (const auto& item : own) {
    const Tensor* input = dict.find(item.key());
    if (input == nullptr) {
      missing.push_back(item.key());
    } else if (!input->sizes().equals(item.value().sizes())) {
      errors.push_back("size mismatch for " + item.key() + ": copying a param with shape " +
                       torch_size(input->sizes()) + " from checkpoint, the shape in current model is " +
                       torch_size(item.value().sizes()) + ".");
    }
  }
  for (const auto& item : dict)
    if (!own.contains(item.key())) unexpected.push_back(item.key());
  if (strict && !unexpected.empty())
    errors.insert(errors.begin(), "Unexpected key(s) in state_dict: " + quoted_list(unexpected) + ". ");
  if (strict && !missing.empty())
    errors.insert(errors.begin(), "Missing key(s) in state_dict: " + quoted_list(missing) + ". ");
  if (errors.empty()) return;
  std::string msg = "Error(s) in loading state_dict for " + model.name() + ":\n\t";
  for (size_t i = 0; i < errors.size(); ++i) msg += (i ? "\n\t" : "") + errors[i];
  ::ember::detail::throw_error(msg);
}

/// One object a checkpoint restores, with what it held before, so a later failure can put it
/// back. `snapshot` must not alias the live state (load would then overwrite it).
struct Restorable {
  std::function<void(const Dict&)> load;
  Dict snapshot;
  const Dict* incoming = nullptr;
};

Dict deep_copy(const Dict& d) {
  Dict out;
  for (const auto& item : d) out.insert(item.key(), item.value().clone());
  return out;
}

/// Loads each object's incoming state in order; if one throws, every object loaded so far
/// (and the one that threw, which may have changed part of itself) gets its snapshot back,
/// then the error propagates.
void load_all_or_nothing(std::vector<Restorable>& objects) {
  size_t done = 0;
  try {
    for (; done < objects.size(); ++done) objects[done].load(*objects[done].incoming);
  } catch (...) {
    for (size_t i = std::min(done + 1, objects.size()); i-- > 0;) objects[i].load(objects[i].snapshot);
    throw;
  }
}

CheckpointInfo load_all(const std::string& path, nn::Module& model, Optimizer& optimizer,
                        const SchedulerRef& scheduler, amp::GradScaler* scaler) {
  // Read and check the whole file first, so a bad file changes nothing. Metadata and tensors
  // come from one open of the file: a writer replacing it meanwhile cannot mix two versions.
  SafetensorsMetadata meta;
  Dict all = load_file(path, kCPU, meta);
  CheckpointInfo info = parse_info(meta, path);
  Parts parts = split(all, path);
  EMBER_CHECK(!scheduler || has_flag(meta, "ember.has_scheduler"),
              "load_checkpoint: a scheduler was given but checkpoint '", path, "' was saved without one");
  EMBER_CHECK(!scaler || has_flag(meta, "ember.has_scaler"), "load_checkpoint: a GradScaler was given but checkpoint '",
              path, "' was saved without one");
  // Check everything, then assign, so that from the caller's side the load happens whole or
  // not at all: the model's load is fully checked up front and goes last (it cannot fail
  // then); the others check their own dicts, and one that refuses its state (an optimizer or
  // scheduler built differently) rolls back the ones restored before it.
  check_model_state(model, parts.model, /*strict=*/true);
  std::vector<Restorable> objects;
  objects.push_back(
      {[&](const Dict& d) { optimizer.load_state_dict(d); }, optimizer.state_dict(), &parts.optimizer});
  if (scheduler)
    objects.push_back({[&](const Dict& d) { scheduler.load_state_dict(d); },
                       deep_copy(scheduler.state_dict()), &parts.scheduler});
  if (scaler)
    objects.push_back(
        {[&](const Dict& d) { scaler->load_state_dict(d); }, deep_copy(scaler->state_dict()), &parts.scaler});
  Dict rng_in, rng_before;
  rng_in.insert(kRng, parts.rng);
  rng_before.insert(kRng, rng_state_tensor(default_cpu_generator()));
  objects.push_back({[&](const Dict& d) { restore_rng(default_cpu_generator(), d[kRng]); }, rng_before, &rng_in});
  load_all_or_nothing(objects);
  // The CUDA streams were checked with the file (split), so restoring them cannot fail. A
  // device the file has and this machine lacks is skipped: a GPU run's checkpoint still loads
  // on a CPU-only machine (or one with fewer GPUs), with the CPU stream restored.
  for (const auto& [d, t] : parts.rng_cuda)
    if (d < cuda::device_count()) restore_rng(default_cuda_generator(d), t);
  model.load_state_dict(parts.model, /*strict=*/true);
  return info;
}

}  // namespace

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                               SchedulerRef scheduler) {
  return load_all(path, model, optimizer, scheduler, nullptr);
}

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                               SchedulerRef scheduler, amp::GradScaler& scaler) {
  return load_all(path, model, optimizer, scheduler, &scaler);
}

CheckpointInfo load_checkpoint_model(const std::string& path, nn::Module& model, bool strict) {
  SafetensorsMetadata meta;
  Dict all = load_file(path, kCPU, meta);
  CheckpointInfo info = parse_info(meta, path);
  Parts parts = split(all, path);
  check_model_state(model, parts.model, strict);  // nothing changes unless all of it loads
  model.load_state_dict(parts.model, strict);
  return info;
}

CheckpointInfo load_checkpoint_info(const std::string& path) {
  return parse_info(load_file_metadata(path), path);
}

}  // namespace ember::optim

namespace ember {

void save(const optim::Optimizer& optimizer, const std::string& path) {
  save_file(optimizer.state_dict(), path);
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  optimizer.load_state_dict(load_file(path));
}

}  // namespace ember
