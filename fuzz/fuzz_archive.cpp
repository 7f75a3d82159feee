// fuzz_archive: arbitrary bytes read as an archive (serialize::InputArchive::load_from, the
// safetensors reader underneath) and then loaded, through libtorch's `archive >> x` / load
// paths, into every sampler (sequential, random, subset-random, weighted, batch, stream,
// distributed in both spellings) and an LBFGS optimizer. Rejection with ember::Error is fine; what
// loads must then run: each sampler is drained (every index it hands out within its dataset) and
// the optimizer takes a step (unless the loaded options ask for more than a few iterations).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/core/archive.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/reduce.h"
#include "ember/data/samplers/batch.h"
#include "ember/data/samplers/distributed.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/stream.h"
#include "ember/data/samplers/weighted_random.h"
#include "ember/optim/lbfgs.h"

namespace {

using namespace ember;
using namespace ember::data::samplers;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_archive finding: %s\n", what.c_str());
  std::abort();
}

constexpr size_t kSize = 10;  // every sampler's dataset size

/// Loads `sampler` from the archive; if that succeeds, drains it and checks every index.
template <class S>
void load_and_drain(serialize::InputArchive& archive, S& sampler, size_t bound) {
  try {
    archive >> sampler;
  } catch (const Error&) {
    return;
  }
  // A restored pass continues, then a new one starts; neither may hand out a wild index.
  for (int pass = 0; pass < 2; ++pass) {
    for (int batches = 0; batches < 64; ++batches) {
      auto batch = sampler.next(3);
      if (!batch) break;
      if constexpr (std::is_same_v<std::decay_t<decltype(*batch)>, std::vector<size_t>>) {
        for (size_t i : *batch)
          if (i >= bound) finding("a loaded sampler handed out index " + std::to_string(i));
      }
    }
    sampler.reset(std::nullopt);
  }
}

void load_and_step(serialize::InputArchive& archive, optim::LBFGS& opt, Tensor& w) {
  try {
    opt.load(archive);
  } catch (const Error&) {
    return;
  }
  // Loaded options may ask for any number of iterations; a long run is not a finding.
  const auto& o = static_cast<const optim::LBFGSOptions&>(opt.param_groups()[0].options());
  if (o.max_iter() > 8 || o.max_eval().value_or(0) > 10 || o.history_size() > 64) return;
  try {
    opt.step([&] {
      opt.zero_grad();
      Tensor loss = w.mul(w).sum();
      loss.backward();
      return loss;
    });
  } catch (const Error&) {
    // A loaded state that does not fit the parameters (shapes) is refused by the step's ops.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  serialize::InputArchive archive;
  try {
    archive.load_from(reinterpret_cast<const char*>(data), size);
  } catch (const Error&) {
    return 0;
  }
  // Nested archives and keys: reading them must not fail other than with an Error.
  for (const std::string& key : archive.keys()) {
    serialize::InputArchive nested;
    try {
      archive.try_read(key, nested);
      IValue value;
      archive.read(key, value);
    } catch (const Error&) {
    }
  }
  SequentialSampler sequential(kSize);
  load_and_drain(archive, sequential, kSize);
  RandomSampler random(static_cast<int64_t>(kSize), 1);
  load_and_drain(archive, random, kSize);
  SubsetRandomSampler subset({1, 3, 5}, 1);
  load_and_drain(archive, subset, kSize);
  WeightedRandomSampler weighted(std::vector<double>{1, 2, 3, 4}, 6, true, 1);
  load_and_drain(archive, weighted, 4);
  BatchSampler batch(SequentialSampler(kSize), 4, false);
  load_and_drain(archive, batch, kSize);
  StreamSampler stream(kSize);
  load_and_drain(archive, stream, kSize);
  DistributedSampler distributed(kSize, 2, 1);
  load_and_drain(archive, distributed, kSize);
  DistributedRandomSampler distributed_random(kSize, 3, 2);
  load_and_drain(archive, distributed_random, kSize);
  DistributedSequentialSampler distributed_sequential(kSize, 3, 0);
  load_and_drain(archive, distributed_sequential, kSize);

  Tensor w = ones({3}).requires_grad_();
  optim::LBFGS lbfgs(std::vector<Tensor>{w}, optim::LBFGSOptions(0.5).max_iter(3).history_size(2));
  load_and_step(archive, lbfgs, w);
  return 0;
}
