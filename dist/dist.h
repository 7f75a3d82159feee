// ember's distributed layer in one include (kept out of ember/ember.h, as libtorch keeps
// c10d out of torch/torch.h): the rendezvous stores.
#pragma once

#include "ember/dist/file_store.h"
#include "ember/dist/prefix_store.h"
#include "ember/dist/store.h"
#include "ember/dist/tcp_store.h"
