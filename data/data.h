// ember::data: datasets, samplers, transforms and the DataLoader — libtorch's torch/data.h,
// plus what PyTorch's Python DataLoader adds (seeded shuffling, drop_last, worker-count
// independent order, pin_memory).
#pragma once

#include "ember/data/dataloader.h"
#include "ember/data/dataloader_options.h"
#include "ember/data/datasets/base.h"
#include "ember/data/datasets/concat.h"
#include "ember/data/datasets/map.h"
#include "ember/data/datasets/mnist.h"
#include "ember/data/datasets/chunk.h"
#include "ember/data/datasets/shared.h"
#include "ember/data/datasets/stateful.h"
#include "ember/data/datasets/subset.h"
#include "ember/data/datasets/tensor.h"
#include "ember/data/example.h"
#include "ember/data/samplers/base.h"
#include "ember/data/samplers/batch.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/distributed.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/stream.h"
#include "ember/data/samplers/weighted_random.h"
#include "ember/data/transforms/base.h"
#include "ember/data/transforms/collate.h"
#include "ember/data/transforms/lambda.h"
#include "ember/data/transforms/stack.h"
#include "ember/data/transforms/tensor.h"

namespace ember::data {
// libtorch's exports: torch::data::Dataset and torch::data::BatchDataset.
using datasets::BatchDataset;
using datasets::Dataset;
}  // namespace ember::data
