#!/usr/bin/env python3
"""PyTorch's side of bench/bench_rnn.cpp: nn.LSTM(256, 256, num_layers=2) on a seq 64 x batch 32
float32 input, forward only (no_grad) and forward + backward of (output * g).sum() with
g = randn like the output, into the weights and the input. Prints the best of 5 repetitions
(ms per iteration) under the same names as the C++ benchmark.

    /work/torch-venv/bin/python bench/rnn_pytorch.py [--threads N] [--iters N]
"""
import argparse
import time

import torch
from torch import nn

HIDDEN, LAYERS, SEQ, BATCH = 256, 2, 64, 32
REPETITIONS = 5


def best_ms(fn, iters):
    fn()  # warm-up
    best = float("inf")
    for _ in range(REPETITIONS):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - start) / iters * 1e3)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    lstm = nn.LSTM(HIDDEN, HIDDEN, num_layers=LAYERS)
    x = torch.randn(SEQ, BATCH, HIDDEN, requires_grad=True)
    g = torch.randn(SEQ, BATCH, HIDDEN)

    def forward():
        with torch.no_grad():
            lstm(x)

    def forward_backward():
        lstm(x)[0].backward(g)
        lstm.zero_grad(set_to_none=True)
        x.grad = None

    tokens = SEQ * BATCH
    for name, fn in [("fwd", forward), ("fwdbwd", forward_backward)]:
        ms = best_ms(fn, args.iters)
        print(f"lstm/h256_l2_t64_b32/{name}  {ms:8.3f} ms  ({tokens / ms * 1e3:,.0f} tokens/s, "
              f"{args.threads} threads)")


if __name__ == "__main__":
    main()
