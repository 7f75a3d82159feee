// ember's distributed layer in one include (kept out of ember/ember.h, as libtorch keeps
// c10d out of torch/torch.h): the rendezvous stores, process groups (gloo for CPU tensors,
// NCCL for CUDA tensors), torch.distributed's functions (init_process_group, all_reduce, ...),
// SyncBatchNorm, DistributedDataParallel and the DistributedSampler factory.
#pragma once

#include "ember/dist/distributed.h"
#include "ember/dist/distributed_data_parallel.h"
#include "ember/dist/distributed_sampler.h"
#include "ember/dist/file_store.h"
#include "ember/dist/prefix_store.h"
#include "ember/dist/process_group.h"
#include "ember/dist/process_group_gloo.h"
#include "ember/dist/process_group_nccl.h"
#include "ember/dist/store.h"
#include "ember/dist/sync_batch_norm.h"
#include "ember/dist/tcp_store.h"
