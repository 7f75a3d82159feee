// char_gpt: a character-level GPT trainer (ember's second example). Learns to continue text
// one byte at a time — by default the text of Debian's `fortunes` package — and samples from
// what it learned with a key/value cache.
//
//   build/examples/char_gpt                                  # fortunes, 2000 iterations, then 400 sampled chars
//   build/examples/char_gpt --data my.txt --max-iters 500 --n-layer 2
//   build/examples/char_gpt --resume runs/char_gpt/checkpoint.safetensors
//   build/examples/char_gpt --generate runs/char_gpt/checkpoint.safetensors --prompt "Q: " --sample 300
//   build/examples/char_gpt --device cuda --amp bf16
//
// The model (examples/char_gpt_model.h): token + position embeddings, N pre-norm blocks of
// causal self-attention and a GELU MLP, LayerNorm, a linear head; GPT-2's initialisation.
// Training: AdamW (betas 0.9/0.95, weight decay on matrices only), linear warmup then cosine
// decay to --min-lr (a LambdaLR), gradient clipping at --grad-clip, --grad-accum micro-batches
// per step, --amp bf16|fp16 (autocast; fp16 with a GradScaler). Every --eval-interval steps:
// the validation loss on fixed batches, a checkpoint (atomic; --resume continues exactly).
//
// Batches are drawn by a counter-based generator (splitmix64 of seed, step and row), not by
// ember's RNG, so examples/char_gpt.py draws the very same batches: with the same initial
// weights (--save-init here, --init there) and dropout 0, the two programs' loss curves agree
// (tests/examples/char_gpt_test.sh checks this against a recorded PyTorch curve).
//
// Tokens are bytes: a UTF-8 character outside ASCII is two or more tokens. The vocabulary is
// the set of bytes in the text, sorted; it is saved in checkpoints (metadata "vocab", hex).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include <ember/ember.h>

#include "char_gpt_model.h"

namespace torch = ember;
namespace nn = ember::nn;
namespace F = ember::nn::functional;
namespace fs = std::filesystem;
using char_gpt::Config;
using char_gpt::Gpt;

// ---- command line ---------------------------------------------------------------------------

struct Options {
  std::string data = "/usr/share/games/fortunes";
  std::string out_dir = "runs/char_gpt";
  Config model;
  int64_t batch_size = 32, grad_accum = 1, max_iters = 2000, warmup = 100;
  int64_t eval_interval = 250, eval_iters = 20;
  int64_t stop_after = 0;  // end the run after this step (0: never) — to test --resume
  double lr = 1e-3, min_lr = 1e-4, weight_decay = 0.1, grad_clip = 1.0;
  uint64_t seed = 0;
  int threads = 0;
  std::string device = "cpu", amp = "off";
  std::string resume, generate, save_init, init, losses, tensorboard;
  int64_t sample = 400, top_k = 40;
  double temperature = 0.8;
  std::string prompt = "\n";
  bool kv_cache = true;
};

[[noreturn]] void usage(int code) {
  std::printf(
      "usage: char_gpt [options]\n"
      "  --data PATH          a text file, or a folder whose files are read in name order\n"
      "                       (default /usr/share/games/fortunes, Debian's fortunes package)\n"
      "  --out-dir DIR        checkpoint and losses (default runs/char_gpt)\n"
      "  --block-size N --n-layer N --n-head N --n-embd N --dropout X   the model (64, 4, 4, 128, 0)\n"
      "  --batch-size N       sequences per micro-batch (default 32)\n"
      "  --grad-accum N       micro-batches per optimizer step (default 1)\n"
      "  --max-iters N        optimizer steps (default 2000)\n"
      "  --lr X --min-lr X    peak and final learning rate (1e-3, 1e-4)\n"
      "  --warmup N           linear warmup steps, then cosine decay (default 100)\n"
      "  --weight-decay X     AdamW's, on weight matrices only (default 0.1)\n"
      "  --grad-clip X        clip the gradients' total norm (default 1.0; 0: off)\n"
      "  --eval-interval N --eval-iters N   validation every N steps on N batches (250, 20)\n"
      "  --seed N             initial weights, dropout, batches (default 0)\n"
      "  --device cpu|cuda    --amp off|bf16|fp16   --threads N\n"
      "  --resume PATH        continue from a checkpoint\n"
      "  --generate PATH      only sample from a checkpoint's model\n"
      "  --sample N           characters to sample after training (default 400; 0: none)\n"
      "  --prompt TEXT --temperature X --top-k N   sampling (\"\\n\", 0.8, 40; top-k 0: all)\n"
      "  --no-kv-cache        sample by re-running the whole context for every token\n"
      "  --save-init PATH     write the initial weights (safetensors) and stop\n"
      "  --init PATH          start from these weights (e.g. written by char_gpt.py)\n"
      "  --losses PATH        write every step's training loss (CSV)\n"
      "  --tensorboard DIR    also log the losses and the learning rate for TensorBoard\n"
      "  --stop-after N       end the run after step N (a multiple of --eval-interval), as an\n"
      "                       interruption would\n");
  std::exit(code);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (a == "--no-kv-cache") {
      o.kv_cache = false;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "char_gpt: %s needs a value\n", a.c_str());
      usage(2);
    }
    std::string v = argv[++i];
    try {
      if (a == "--data") o.data = v;
      else if (a == "--out-dir") o.out_dir = v;
      else if (a == "--block-size") o.model.block_size = std::stoll(v);
      else if (a == "--n-layer") o.model.n_layer = std::stoll(v);
      else if (a == "--n-head") o.model.n_head = std::stoll(v);
      else if (a == "--n-embd") o.model.n_embd = std::stoll(v);
      else if (a == "--dropout") o.model.dropout = std::stod(v);
      else if (a == "--batch-size") o.batch_size = std::stoll(v);
      else if (a == "--grad-accum") o.grad_accum = std::stoll(v);
      else if (a == "--max-iters") o.max_iters = std::stoll(v);
      else if (a == "--lr") o.lr = std::stod(v);
      else if (a == "--min-lr") o.min_lr = std::stod(v);
      else if (a == "--warmup") o.warmup = std::stoll(v);
      else if (a == "--weight-decay") o.weight_decay = std::stod(v);
      else if (a == "--grad-clip") o.grad_clip = std::stod(v);
      else if (a == "--eval-interval") o.eval_interval = std::stoll(v);
      else if (a == "--eval-iters") o.eval_iters = std::stoll(v);
      else if (a == "--seed") o.seed = std::stoull(v);
      else if (a == "--threads") o.threads = std::stoi(v);
      else if (a == "--device") o.device = v;
      else if (a == "--amp") o.amp = v;
      else if (a == "--resume") o.resume = v;
      else if (a == "--generate") o.generate = v;
      else if (a == "--sample") o.sample = std::stoll(v);
      else if (a == "--prompt") o.prompt = v;
      else if (a == "--temperature") o.temperature = std::stod(v);
      else if (a == "--top-k") o.top_k = std::stoll(v);
      else if (a == "--save-init") o.save_init = v;
      else if (a == "--init") o.init = v;
      else if (a == "--losses") o.losses = v;
      else if (a == "--tensorboard") o.tensorboard = v;
      else if (a == "--stop-after") o.stop_after = std::stoll(v);
      else {
        std::fprintf(stderr, "char_gpt: unknown option %s\n", a.c_str());
        usage(2);
      }
    } catch (const std::logic_error&) {
      std::fprintf(stderr, "char_gpt: bad value '%s' for %s\n", v.c_str(), a.c_str());
      usage(2);
    }
  }
  const Config& m = o.model;
  if (m.block_size < 1 || m.n_layer < 1 || m.n_head < 1 || m.n_embd < 1 || m.n_embd % m.n_head != 0) {
    std::fprintf(stderr, "char_gpt: the model sizes must be positive and --n-embd a multiple of --n-head\n");
    usage(2);
  }
  if (o.batch_size < 1 || o.grad_accum < 1 || o.max_iters < 1 || o.eval_interval < 1 || o.eval_iters < 1 ||
      !(o.lr > 0) || o.min_lr < 0 || o.warmup < 0 || !(o.temperature > 0) || o.top_k < 0 ||
      !(m.dropout >= 0 && m.dropout < 1)) {
    std::fprintf(stderr, "char_gpt: sizes, counts, rates and the temperature must be positive (dropout in [0, 1))\n");
    usage(2);
  }
  if (o.amp != "off" && o.amp != "bf16" && o.amp != "fp16") {
    std::fprintf(stderr, "char_gpt: --amp must be off, bf16 or fp16, got %s\n", o.amp.c_str());
    usage(2);
  }
  return o;
}

// ---- the text -------------------------------------------------------------------------------

/// The bytes of a file, or of a folder's regular files in name order (fortune's index files,
/// *.dat, and its UTF-8 links, *.u8, left out; subfolders too — the package's "off" folder).
std::string read_text(const std::string& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && !e.is_symlink() && ext != ".dat" && ext != ".u8") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::string text;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + f.string());
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (files.empty()) throw std::runtime_error("no text files in " + path);
  return text;
}

/// Byte <-> token id: the bytes the text uses, sorted.
struct Vocab {
  std::string bytes;  // id -> byte
  int16_t id_of[256];

  explicit Vocab(std::string used) : bytes(std::move(used)) {
    std::fill(std::begin(id_of), std::end(id_of), int16_t{-1});
    for (size_t i = 0; i < bytes.size(); ++i) id_of[static_cast<unsigned char>(bytes[i])] = static_cast<int16_t>(i);
  }
  static Vocab of_text(const std::string& text) {
    bool seen[256] = {};
    for (unsigned char c : text) seen[c] = true;
    std::string used;
    for (int c = 0; c < 256; ++c)
      if (seen[c]) used.push_back(static_cast<char>(c));
    return Vocab(used);
  }
  int64_t size() const { return static_cast<int64_t>(bytes.size()); }
  std::vector<int64_t> encode(const std::string& s) const {
    std::vector<int64_t> ids;
    for (unsigned char c : s) {
      if (id_of[c] < 0) throw std::runtime_error("the prompt has a byte (" + std::to_string(c) + ") the text never uses");
      ids.push_back(id_of[c]);
    }
    return ids;
  }
  std::string hex() const {
    static const char* digits = "0123456789abcdef";
    std::string h;
    for (unsigned char c : bytes) h += {digits[c >> 4], digits[c & 15]};
    return h;
  }
  static Vocab from_hex(const std::string& h) {
    std::string b;
    for (size_t i = 0; i + 1 < h.size(); i += 2) b.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return Vocab(b);
  }
};

// ---- batches: the same on both sides of the PyTorch comparison -------------------------------

/// splitmix64's output function: a well-mixed 64-bit value of a counter.
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Inputs and next-byte targets, [batch, block] each, from `data` at offsets drawn from
/// (seed, stream, index, row): stream 0 is training (index: the micro-batch count), stream 1
/// validation (index: which of the fixed eval batches).
std::pair<torch::Tensor, torch::Tensor> get_batch(const torch::Tensor& data, uint64_t seed, uint64_t stream,
                                                  uint64_t index, int64_t batch, int64_t block) {
  const int64_t n = data.size(0), span = n - block - 1;
  std::vector<int64_t> starts(static_cast<size_t>(batch));
  for (int64_t r = 0; r < batch; ++r) {
    uint64_t key = splitmix64(seed ^ splitmix64((stream << 62) ^ (index << 20) ^ static_cast<uint64_t>(r)));
    starts[static_cast<size_t>(r)] = static_cast<int64_t>(key % static_cast<uint64_t>(span));
  }
  std::vector<torch::Tensor> xs, ys;
  for (int64_t s : starts) {
    xs.push_back(data.narrow(0, s, block));
    ys.push_back(data.narrow(0, s + 1, block));
  }
  return {torch::stack(xs), torch::stack(ys)};
}

// ---- training -------------------------------------------------------------------------------

/// The learning-rate multiplier at step `it`: linear warmup to 1, cosine decay to min/peak.
double lr_factor(int64_t it, const Options& o) {
  if (it < o.warmup) return static_cast<double>(it + 1) / static_cast<double>(o.warmup + 1);
  const double floor = o.min_lr / o.lr;
  if (it >= o.max_iters) return floor;
  const double progress = static_cast<double>(it - o.warmup) / static_cast<double>(std::max<int64_t>(1, o.max_iters - o.warmup));
  return floor + 0.5 * (1.0 - floor) * (1.0 + std::cos(M_PI * progress));
}

/// AdamW with weight decay on the weight matrices and embeddings only (nanoGPT's split):
/// biases and LayerNorm parameters are not decayed.
std::unique_ptr<torch::optim::AdamW> make_optimizer(Gpt& model, const Options& o) {
  std::vector<torch::Tensor> decay, no_decay;
  for (auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = torch::optim::AdamWOptions(o.lr).betas({0.9, 0.95}).weight_decay(o.weight_decay);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(
                                    torch::optim::AdamWOptions(options).weight_decay(0.0)));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), options);
}

torch::Tensor loss_of(Gpt& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::Tensor logits = model->forward(x);
  return F::cross_entropy(logits.view({-1, logits.size(-1)}), y.view({-1}));
}

struct Amp {
  std::optional<torch::ScalarType> dtype;
  bool enabled() const { return dtype.has_value(); }
};

/// The mean loss over the fixed validation batches.
double validation_loss(Gpt& model, const torch::Tensor& val, const Options& o, torch::Device device, const Amp& amp) {
  torch::NoGradGuard no_grad;
  torch::AutocastGuard autocast(device.type(), amp.dtype, amp.enabled());
  model->eval();
  double sum = 0;
  for (int64_t i = 0; i < o.eval_iters; ++i) {
    auto [x, y] = get_batch(val, o.seed, 1, static_cast<uint64_t>(i), o.batch_size, o.model.block_size);
    sum += loss_of(model, x.to(device), y.to(device)).item<double>();
  }
  model->train();
  return sum / static_cast<double>(o.eval_iters);
}

/// Redraws "step 120/2000 | loss 2.3145 | 5,210 tok/s | ETA 3:12" on a terminal.
void show_progress(int64_t step, int64_t total, double loss, double tokens_per_s, double eta) {
  if (isatty(fileno(stderr)) == 0) return;
  std::fprintf(stderr, "\rstep %lld/%lld | loss %.4f | %.0f tok/s | ETA %d:%02d   ", static_cast<long long>(step),
               static_cast<long long>(total), loss, tokens_per_s, static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
  std::fflush(stderr);
}
void clear_progress() {
  if (isatty(fileno(stderr)) != 0) std::fprintf(stderr, "\r%*s\r", 80, "");
}

// ---- sampling -------------------------------------------------------------------------------

/// Draws from softmax(logits / temperature) restricted to the top_k largest (all when 0), by
/// inverting the cumulative distribution at a uniform draw from ember's generator.
int64_t sample_token(const torch::Tensor& logits, double temperature, int64_t top_k) {
  torch::Tensor l = logits.to(torch::kFloat).to(torch::Device(torch::kCPU)) / temperature;
  if (top_k > 0 && top_k < l.size(0)) {
    auto [top, unused] = torch::topk(l, top_k);
    l = l.masked_fill(l < top[top_k - 1], -INFINITY);
  }
  torch::Tensor cdf = torch::softmax(l, 0).cumsum(0);
  const double u = torch::rand({1}).item<double>() * cdf[-1].item<double>();
  int64_t id = (cdf <= u).sum().item<int64_t>();  // the first index whose cdf exceeds u
  return std::min(id, l.size(0) - 1);
}

/// Continues `prompt` by `n` bytes. With the cache the prompt runs once and every new byte
/// alone; when the context reaches block_size the cache restarts from the last half block
/// (positions are absolute, so they must be recomputed). Without it, every step re-runs the
/// last block_size bytes (to check the cache: the same logits up to rounding).
std::string generate(Gpt& model, const Vocab& vocab, const Options& o, torch::Device device) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::vector<int64_t> ids = vocab.encode(o.prompt);
  if (ids.empty()) throw std::runtime_error("--prompt must not be empty");
  const int64_t block = model->config.block_size;
  std::string out;
  char_gpt::KVCache cache;
  auto run = [&](const std::vector<int64_t>& context) {
    torch::Tensor idx = torch::tensor(context, torch::TensorOptions().dtype(torch::kLong)).view({1, -1}).to(device);
    return model->forward(idx, o.kv_cache ? &cache : nullptr);
  };
  torch::Tensor logits;
  auto prefill = [&] {
    const int64_t keep = o.kv_cache ? std::max<int64_t>(1, block / 2) : block;
    std::vector<int64_t> tail(ids.end() - std::min<int64_t>(keep, static_cast<int64_t>(ids.size())), ids.end());
    cache.clear();
    logits = run(tail);
  };
  prefill();
  for (int64_t i = 0; i < o.sample; ++i) {
    int64_t next = sample_token(logits[0][-1], o.temperature, o.top_k);
    ids.push_back(next);
    out.push_back(vocab.bytes[static_cast<size_t>(next)]);
    if (!o.kv_cache || cache.length >= block)
      prefill();
    else
      logits = run({next});
  }
  return out;
}

// ---- the program ----------------------------------------------------------------------------

std::string checkpoint_path(const Options& o) { return (fs::path(o.out_dir) / "checkpoint.safetensors").string(); }

torch::optim::CheckpointInfo::Metadata model_metadata(const Options& o, const Vocab& vocab) {
  const Config& m = o.model;
  return {{"vocab", vocab.hex()},
          {"block_size", std::to_string(m.block_size)},
          {"n_layer", std::to_string(m.n_layer)},
          {"n_head", std::to_string(m.n_head)},
          {"n_embd", std::to_string(m.n_embd)},
          {"amp", o.amp}};
}

/// The model sizes a checkpoint was written with, into `o` (a resumed or sampled run is the
/// saved model, whatever the command line says).
Vocab apply_metadata(Options& o, const torch::optim::CheckpointInfo::Metadata& meta) {
  auto get = [&](const char* key) {
    auto it = meta.find(key);
    if (it == meta.end()) throw std::runtime_error(std::string("the checkpoint has no '") + key + "' entry");
    return it->second;
  };
  o.model.block_size = std::stoll(get("block_size"));
  o.model.n_layer = std::stoll(get("n_layer"));
  o.model.n_head = std::stoll(get("n_head"));
  o.model.n_embd = std::stoll(get("n_embd"));
  return Vocab::from_hex(get("vocab"));
}

int run_generate(Options o, torch::Device device) {
  Vocab vocab = apply_metadata(o, torch::optim::load_checkpoint_info(o.generate).metadata());
  o.model.vocab_size = vocab.size();
  torch::manual_seed(o.seed);
  Gpt model(o.model);
  torch::optim::load_checkpoint_model(o.generate, *model);
  model->to(device);
  std::printf("%s%s\n", o.prompt.c_str(), generate(model, vocab, o, device).c_str());
  return 0;
}

/// The text's token ids as the training (first 90%) and validation (the rest) tensors.
std::pair<torch::Tensor, torch::Tensor> split_text(const std::vector<int64_t>& ids, int64_t block_size) {
  const int64_t n = static_cast<int64_t>(ids.size()), n_train = n * 9 / 10;
  if (n - n_train <= block_size + 1)
    throw std::runtime_error("the text (" + std::to_string(n) + " bytes) is too short for --block-size " +
                             std::to_string(block_size));
  torch::Tensor all = torch::tensor(ids, torch::TensorOptions().dtype(torch::kLong));
  return {all.narrow(0, 0, n_train), all.narrow(0, n_train, n - n_train)};
}

/// Loads --resume's checkpoint into the run's model, optimizer, schedule (and GradScaler under
/// fp16); the step it continues from and the best validation loss so far.
std::pair<int64_t, double> resume_run(Gpt& model, torch::optim::Optimizer& optimizer,
                                      torch::optim::LambdaLR& scheduler, torch::amp::GradScaler& scaler,
                                      const torch::optim::CheckpointInfo& saved, const Options& o) {
  if (saved.metadata().at("amp") != o.amp)
    throw std::runtime_error(o.resume + " was written with --amp " + saved.metadata().at("amp"));
  auto info = o.amp == "fp16" ? torch::optim::load_checkpoint(o.resume, *model, optimizer, scheduler, scaler)
                              : torch::optim::load_checkpoint(o.resume, *model, optimizer, scheduler);
  std::printf("resumed from %s at step %lld\n", o.resume.c_str(), static_cast<long long>(info.step()));
  return {info.step(), std::isnan(info.best_metric()) ? INFINITY : info.best_metric()};
}

/// Writes the run's checkpoint (model, optimizer, schedule, the GradScaler under fp16, the step
/// and the best validation loss, the model's options and vocabulary) after `steps` steps.
void save_run_checkpoint(Gpt& model, torch::optim::Optimizer& optimizer, torch::optim::LambdaLR& scheduler,
                         torch::amp::GradScaler& scaler, int64_t steps, double best_val, const Options& o,
                         const Vocab& vocab) {
  auto info = torch::optim::CheckpointInfo().step(steps).best_metric(best_val).metadata(model_metadata(o, vocab));
  if (o.amp == "fp16")
    torch::optim::save_checkpoint(checkpoint_path(o), *model, optimizer, scheduler, scaler, info);
  else
    torch::optim::save_checkpoint(checkpoint_path(o), *model, optimizer, scheduler, info);
}

/// The run's first line: device, precision, model size and shape, vocabulary, split sizes.
void print_banner(Gpt& model, const Options& o, torch::Device device, const Amp& amp, const Vocab& vocab,
                  int64_t n_train, int64_t n_val) {
  const int64_t params = nn::utils::parameters_to_vector(model->parameters()).numel();
  std::printf("char GPT on %s%s: %lld parameters, %lld layers x %lld heads x %lld, block %lld, vocabulary %lld; "
              "%lld train / %lld validation bytes\n",
              device.str().c_str(), amp.enabled() ? (", --amp " + o.amp).c_str() : "", static_cast<long long>(params),
              static_cast<long long>(o.model.n_layer), static_cast<long long>(o.model.n_head),
              static_cast<long long>(o.model.n_embd), static_cast<long long>(o.model.block_size),
              static_cast<long long>(vocab.size()), static_cast<long long>(n_train), static_cast<long long>(n_val));
}

/// One optimizer step (step counted from 0) of --grad-accum micro-batches under autocast,
/// with the loss scaled for fp16 and the gradients clipped; the step's summed loss.
double train_step(Gpt& model, torch::optim::Optimizer& optimizer, torch::amp::GradScaler& scaler,
                  const torch::Tensor& train, int64_t step, const Options& o, torch::Device device, const Amp& amp) {
  optimizer.zero_grad();
  double step_loss = 0;
  for (int64_t micro = 0; micro < o.grad_accum; ++micro) {
    auto [x, y] = get_batch(train, o.seed, 0, static_cast<uint64_t>(step * o.grad_accum + micro), o.batch_size,
                            o.model.block_size);
    torch::Tensor loss;
    {
      torch::AutocastGuard autocast(device.type(), amp.dtype, amp.enabled());
      loss = loss_of(model, x.to(device), y.to(device)) / static_cast<double>(o.grad_accum);
    }
    scaler.scale(loss).backward();
    step_loss += loss.item<double>();
  }
  if (!std::isfinite(step_loss))
    throw std::runtime_error("the loss became " + std::to_string(step_loss) + " at step " + std::to_string(step + 1));
  if (o.grad_clip > 0) {
    scaler.unscale_(optimizer);  // clip the true gradients, not the scaled ones
    nn::utils::clip_grad_norm_(model->parameters(), o.grad_clip);
  }
  scaler.step(optimizer);
  scaler.update();
  return step_loss;
}

int run_training(Options o, torch::Device device) {
  const std::string text = read_text(o.data);
  std::optional<torch::optim::CheckpointInfo> resumed;
  Vocab vocab = Vocab::of_text(text);
  if (!o.resume.empty()) {
    resumed = torch::optim::load_checkpoint_info(o.resume);
    Vocab saved = apply_metadata(o, resumed->metadata());
    if (saved.bytes != vocab.bytes) throw std::runtime_error(o.resume + " was trained on a text with another vocabulary");
  }
  o.model.vocab_size = vocab.size();
  auto [train, val] = split_text(vocab.encode(text), o.model.block_size);

  torch::manual_seed(o.seed);
  Gpt model(o.model);
  if (!o.init.empty()) model->load_state_dict(torch::load_file(o.init));
  if (!o.save_init.empty()) {
    torch::save_file(model->state_dict(), o.save_init);
    std::printf("initial weights written to %s (vocabulary %lld bytes)\n", o.save_init.c_str(),
                static_cast<long long>(vocab.size()));
    return 0;
  }
  model->to(device);
  auto optimizer = make_optimizer(model, o);
  torch::optim::LambdaLR scheduler(*optimizer, [&o](int64_t it) { return lr_factor(it, o); });
  Amp amp;
  if (o.amp == "bf16") amp.dtype = torch::kBFloat16;
  if (o.amp == "fp16") amp.dtype = torch::kFloat16;
  torch::amp::GradScaler scaler(device.is_cuda() ? "cuda" : "cpu",
                                torch::amp::GradScalerOptions().enabled(o.amp == "fp16"));
  int64_t start = 0;
  double best_val = INFINITY;
  if (resumed) std::tie(start, best_val) = resume_run(model, *optimizer, scheduler, scaler, *resumed, o);
  fs::create_directories(o.out_dir);
  print_banner(model, o, device, amp, vocab, train.numel(), val.numel());
  std::ofstream losses;
  if (!o.losses.empty()) losses.open(o.losses, resumed ? std::ios::app : std::ios::trunc);

  std::unique_ptr<torch::tensorboard::SummaryWriter> tensorboard;
  if (!o.tensorboard.empty())  // a resumed run hides what an interrupted one logged after its checkpoint
    tensorboard = std::make_unique<torch::tensorboard::SummaryWriter>(
        o.tensorboard, "", start > 0 ? std::optional<int64_t>(start + 1) : std::nullopt);

  model->train();
  auto t0 = std::chrono::steady_clock::now();
  const double tokens_per_step = static_cast<double>(o.batch_size * o.grad_accum * o.model.block_size);
  for (int64_t step = start; step < o.max_iters; ++step) {
    const double step_loss = train_step(model, *optimizer, scaler, train, step, o, device, amp);
    scheduler.step();
    if (losses.is_open()) losses << step + 1 << ',' << std::setprecision(9) << step_loss << '\n';
    if (tensorboard) {
      tensorboard->add_scalar("loss/train", step_loss, step + 1);
      tensorboard->add_scalar("lr", scheduler.get_last_lr().front(), step + 1);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double done = static_cast<double>(step + 1 - start);
    show_progress(step + 1, o.max_iters, step_loss, done * tokens_per_step / secs,
                  secs / done * static_cast<double>(o.max_iters - step - 1));

    if ((step + 1) % o.eval_interval == 0 || step + 1 == o.max_iters) {
      const double v = validation_loss(model, val, o, device, amp);
      clear_progress();
      const bool better = v < best_val;
      if (better) best_val = v;
      std::printf("step %lld/%lld | train loss %.4f | val loss %.4f%s | lr %.2e | %.0f tok/s\n",
                  static_cast<long long>(step + 1), static_cast<long long>(o.max_iters), step_loss, v,
                  better ? " *" : "", scheduler.get_last_lr().front(), done * tokens_per_step / secs);
      std::fflush(stdout);
      save_run_checkpoint(model, *optimizer, scheduler, scaler, step + 1, best_val, o, vocab);
      if (losses.is_open()) losses.flush();
      if (tensorboard) {
        tensorboard->add_scalar("loss/val", v, step + 1);
        tensorboard->flush();
      }
    }
    if (step + 1 == o.stop_after) return 0;
  }
  clear_progress();
  if (o.sample > 0) {
    std::printf("---- %lld sampled bytes (temperature %g, top-k %lld%s) ----\n%s%s\n", static_cast<long long>(o.sample),
                o.temperature, static_cast<long long>(o.top_k), o.kv_cache ? ", key/value cache" : "",
                o.prompt.c_str(), generate(model, vocab, o, device).c_str());
  }
  return 0;
}

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  try {
    if (o.threads > 0) torch::set_num_threads(o.threads);
    torch::Device device(o.device);
    if (device.is_cuda() && !torch::cuda::is_available())
      throw std::runtime_error("--device " + o.device + ": no CUDA device is available");
    return o.generate.empty() ? run_training(o, device) : run_generate(o, device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "char_gpt: %s\n", e.what());
    return 1;
  }
}
