// Connectionist Temporal Classification loss (torch.ctc_loss): a CPU kernel for the forward
// (alpha) recursion in log space and a hand-written alpha-beta backward, as PyTorch's
// LossCTC.cpp. CUDA inputs are computed on the CPU and the results moved back.
#pragma once

#include "ember/core/ops/loss.h"
#include "ember/core/tensor.h"

namespace ember {

/// -log p(target | log_probs) per sample, reduced. log_probs (T, N, C) (or (T, C) unbatched)
/// holds log-softmaxed scores; targets are padded (N, S) or concatenated 1-D (sum of
/// target_lengths) class indices; blank is the blank class. Mean divides each sample's loss
/// by its target length (at least 1), then averages; zero_infinity turns impossible
/// alignments' infinite losses (and their gradients) into 0.
/// The gradient for log_probs is PyTorch's: exp(lp) - exp(log(alpha beta) + nll - lp) per
/// (t, c), the gradient of the logits under a log_softmax, so log_probs must come from one.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank = 0, int64_t reduction = Reduction::Mean,
                bool zero_infinity = false);
/// The same with integer tensors of lengths ((N), or 0-d for unbatched input).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, int64_t reduction = Reduction::Mean,
                bool zero_infinity = false);

}  // namespace ember
