// fashion_mnist's command line: its options with their defaults, the usage text and the
// parser (examples/fashion_mnist.cpp). Bad values print the usage and exit with status 2.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

struct Options {
  std::string model = "cnn";
  int epochs = 6;
  int64_t batch_size = 128;
  double lr = 2e-3;
  double weight_decay = 1e-4;
  uint64_t seed = 0;
  int64_t workers = 1;
  int64_t validation = 5000;  // images of the train split held out for validation
  int patience = 3;           // epochs without a better validation accuracy before stopping
  int threads = 0;            // 0: ember's default
  int64_t limit_train = 0;    // use only the first N train images (0: all) — quick runs, CI
  int64_t limit_test = 0;
  int stop_after = 0;         // end the run after this epoch (0: never) — to test --resume
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string out_dir = "runs/fashion_mnist";
  std::string device = "cpu";
  std::string amp = "off";    // mixed precision: off, bf16 or fp16
  std::string dist = "off";   // data parallelism: off, gloo or nccl
  std::string tensorboard;    // TensorBoard event files here (empty: none)
  std::string resume, eval;
};

[[noreturn]] inline void usage(int code) {
  std::printf(
      "usage: fashion_mnist [options]\n"
      "  --model cnn|mlp      network (default cnn)\n"
      "  --epochs N           epochs (default 6)\n"
      "  --batch-size N       (default 128)\n"
      "  --lr X               peak learning rate of the one-cycle schedule (default 2e-3)\n"
      "  --weight-decay X     AdamW weight decay (default 1e-4)\n"
      "  --seed N             seeds weights, split, shuffling and dropout (default 0)\n"
      "  --workers N          data loader threads (default 1)\n"
      "  --threads N          compute threads (default: all cores)\n"
      "  --patience N         stop after N epochs without a better validation accuracy (default 3)\n"
      "  --data-dir DIR       Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist)\n"
      "  --out-dir DIR        run folder (default runs/fashion_mnist)\n"
      "  --device cpu|cuda    (default cpu)\n"
      "  --amp off|bf16|fp16  mixed precision: autocast to bfloat16 or float16 (fp16 with a GradScaler);\n"
      "                       default off (float32)\n"
      "  --dist off|gloo|nccl data-parallel training under ember-run / torchrun (default off);\n"
      "                       --batch-size is per process; nccl: one process per GPU\n"
      "  --tensorboard DIR    also log losses, accuracies, lr and weight histograms for TensorBoard\n"
      "  --resume PATH|auto   continue from a checkpoint_epochN.safetensors (auto: the newest in\n"
      "                       --out-dir, if any — what a group restarted by ember-run wants)\n"
      "  --eval PATH          only evaluate saved weights (best_model.safetensors) on the test set\n"
      "  --limit-train N, --limit-test N   use the first N images only (quick runs)\n"
      "  --stop-after N       end the run after epoch N, as an interruption would\n");
  std::exit(code);
}

inline Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (i + 1 >= argc) {
      std::fprintf(stderr, "fashion_mnist: %s needs a value\n", a.c_str());
      usage(2);
    }
    std::string v = argv[++i];
    try {
      if (a == "--model") o.model = v;
      else if (a == "--epochs") o.epochs = std::stoi(v);
      else if (a == "--batch-size") o.batch_size = std::stoll(v);
      else if (a == "--lr") o.lr = std::stod(v);
      else if (a == "--weight-decay") o.weight_decay = std::stod(v);
      else if (a == "--seed") o.seed = std::stoull(v);
      else if (a == "--workers") o.workers = std::stoll(v);
      else if (a == "--threads") o.threads = std::stoi(v);
      else if (a == "--patience") o.patience = std::stoi(v);
      else if (a == "--data-dir") o.data_dir = v;
      else if (a == "--out-dir") o.out_dir = v;
      else if (a == "--device") o.device = v;
      else if (a == "--amp") o.amp = v;
      else if (a == "--dist") o.dist = v;
      else if (a == "--tensorboard") o.tensorboard = v;
      else if (a == "--resume") o.resume = v;
      else if (a == "--eval") o.eval = v;
      else if (a == "--limit-train") o.limit_train = std::stoll(v);
      else if (a == "--limit-test") o.limit_test = std::stoll(v);
      else if (a == "--stop-after") o.stop_after = std::stoi(v);
      else {
        std::fprintf(stderr, "fashion_mnist: unknown option %s\n", a.c_str());
        usage(2);
      }
    } catch (const std::logic_error&) {
      std::fprintf(stderr, "fashion_mnist: bad value '%s' for %s\n", v.c_str(), a.c_str());
      usage(2);
    }
  }
  if (o.model != "cnn" && o.model != "mlp") {
    std::fprintf(stderr, "fashion_mnist: --model must be cnn or mlp, got %s\n", o.model.c_str());
    usage(2);
  }
  if (o.amp != "off" && o.amp != "bf16" && o.amp != "fp16") {
    std::fprintf(stderr, "fashion_mnist: --amp must be off, bf16 or fp16, got %s\n", o.amp.c_str());
    usage(2);
  }
  if (o.dist != "off" && o.dist != "gloo" && o.dist != "nccl") {
    std::fprintf(stderr, "fashion_mnist: --dist must be off, gloo or nccl, got %s\n", o.dist.c_str());
    usage(2);
  }
  if (o.epochs < 1 || o.batch_size < 1 || o.workers < 0 || !(o.lr > 0)) {
    std::fprintf(stderr, "fashion_mnist: --epochs, --batch-size and --lr must be positive\n");
    usage(2);
  }
  return o;
}
