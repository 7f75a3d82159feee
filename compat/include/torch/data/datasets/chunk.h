// <torch/data/datasets/chunk.h> for ember: torch::data::datasets::ChunkDataset, ChunkDataReader, ChunkDatasetOptions.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
