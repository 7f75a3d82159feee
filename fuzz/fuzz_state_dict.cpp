// fuzz_state_dict: arbitrary safetensors bytes loaded into a small fixed model (Linear(3, 4)
// then BatchNorm1d(4): weights, biases, running statistics and the int64 num_batches_tracked)
// through the public load paths: ember::load(model, path) (strict or not), load_checkpoint
// (model + SGD optimizer + RNG, with or without a StepLR scheduler) and load_checkpoint_model. The bytes go
// to an in-memory file (memfd), so the file reader runs as it does for a real file. Rejection with
// ember::Error is fine; what loads must hold the file's values, and a rejected checkpoint must change
// nothing.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ember/core/generator.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/serialize.h"
#include "ember/optim/checkpoint.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/sgd.h"

namespace {

using namespace ember;
using Dict = OrderedDict<std::string, Tensor>;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_state_dict finding: %s\n", what.c_str());
  std::abort();
}

/// Same dtype, shape and bytes (NaN payloads included).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !a.sizes().equals(b.sizes())) return false;
  Tensor x = a.contiguous(), y = b.contiguous();
  return x.nbytes() == 0 || std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

Dict snapshot(const Dict& d) {
  Dict out;
  for (const auto& item : d) out.insert(item.key(), item.value().clone());
  return out;
}

bool same_dict(const Dict& a, const Dict& b) {
  if (a.keys() != b.keys()) return false;
  for (const auto& item : a)
    if (!same_bits(item.value(), b[item.key()])) return false;
  return true;
}

struct Target {
  nn::Sequential model{nn::Linear(3, 4), nn::BatchNorm1d(4)};
  Dict initial = snapshot(model->state_dict());
  int fd = memfd_create("fuzz_state_dict", 0);
  std::string path = "/proc/self/fd/" + std::to_string(fd);

  void write(const uint8_t* data, size_t size) {
    if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
      finding("cannot write the memfd");
  }
};

/// Every parameter/buffer present in `file` (under `prefix`) with the right shape holds the
/// file's values, converted to its dtype.
void check_loaded(const nn::Module& model, const Dict& file, const std::string& prefix) {
  for (const auto& item : model.state_dict()) {
    const Tensor* src = file.find(prefix + item.key());
    if (src == nullptr || !src->sizes().equals(item.value().sizes())) continue;
    if (!same_bits(item.value(), src->to(item.value().dtype())))
      finding("'" + item.key() + "' does not hold the file's values after a successful load");
  }
}

void load_checkpoint_case(Target& t, const Dict& file, bool with_scheduler) {
  optim::SGD opt(t.model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::StepLR sched(opt, /*step_size=*/3, /*gamma=*/0.5);
  Dict opt_before = opt.state_dict(), sched_before = sched.state_dict();
  std::vector<uint8_t> rng_before = default_cpu_generator().get_state();
  try {
    if (with_scheduler)
      optim::load_checkpoint(t.path, *t.model, opt, sched);
    else
      optim::load_checkpoint(t.path, *t.model, opt);
  } catch (const Error&) {
    // All or nothing (optim/checkpoint.h): a rejected checkpoint leaves everything as it was.
    if (!same_dict(t.initial, t.model->state_dict())) finding("a rejected checkpoint changed the model");
    if (!same_dict(opt_before, opt.state_dict())) finding("a rejected checkpoint changed the optimizer");
    if (!same_dict(sched_before, sched.state_dict())) finding("a rejected checkpoint changed the scheduler");
    if (default_cpu_generator().get_state() != rng_before) finding("a rejected checkpoint changed the RNG");
    return;
  }
  check_loaded(*t.model, file, "model.");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Target t;
  if (size == 0) return 0;
  int mode = data[0] % 5;
  t.write(data + 1, size - 1);
  t.model->load_state_dict(t.initial);  // each input starts from the same model
  Dict file;
  try {
    file = load_file(t.path);
  } catch (const Error&) {
  }
  try {
    switch (mode) {
      case 0:
      case 1:
        ember::load(*t.model, t.path, /*strict=*/mode == 0);
        check_loaded(*t.model, file, "");
        break;
      case 2:
      case 3:
        load_checkpoint_case(t, file, /*with_scheduler=*/mode == 3);
        break;
      default:
        try {
          optim::load_checkpoint_model(t.path, *t.model, /*strict=*/false);
        } catch (const Error&) {
          if (!same_dict(t.initial, t.model->state_dict()))
            finding("a rejected load_checkpoint_model changed the model");
          return 0;
        }
        check_loaded(*t.model, file, "model.");
    }
  } catch (const Error&) {
    // rejected: fine (ember::load follows PyTorch: entries that fit may already be copied)
  }
  return 0;
}
