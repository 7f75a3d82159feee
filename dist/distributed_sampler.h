// ember::dist::distributed_sampler: a DistributedSampler (data/samplers/distributed.h) whose
// num_replicas and rank default to the default process group's world size and rank, as
// torch.utils.data.distributed.DistributedSampler's do. Header-only: the data layer stays
// free of dist/, and this is what a distributed training script includes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "ember/data/samplers/distributed.h"
#include "ember/dist/distributed.h"

namespace ember::dist {

/// A DistributedSampler over `size` examples; unset num_replicas / rank come from the default
/// group (which raises PyTorch's "Default process group has not been initialized" without one).
inline std::shared_ptr<data::samplers::DistributedSampler> distributed_sampler(
    size_t size, std::optional<int64_t> num_replicas = std::nullopt,
    std::optional<int64_t> rank = std::nullopt, bool shuffle = true, uint64_t seed = 0,
    bool drop_last = false) {
  int64_t replicas = num_replicas ? *num_replicas : get_world_size();
  int64_t r = rank ? *rank : get_rank();
  return std::make_shared<data::samplers::DistributedSampler>(size, replicas, r, shuffle, seed, drop_last);
}

}  // namespace ember::dist
