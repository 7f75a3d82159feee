// <torch/nn/utils/rnn.h> for ember: torch::nn::utils::rnn (PackedSequence, pack_padded_sequence, pad_packed_sequence, pad_sequence, pack_sequence).
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
