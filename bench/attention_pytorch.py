"""PyTorch's numbers for bench/bench_attention.cpp's shapes: F.scaled_dot_product_attention
forward and forward + backward at B=1, H=8, head 64, L = S = 512 and 2048, float32, on the CPU
(the default backend: PyTorch's CPU flash kernel) and with the math backend forced (the plain
composition), plus the peak RSS growth of one forward + backward.

Run:  OMP_NUM_THREADS=2 /work/torch-venv/bin/python bench/attention_pytorch.py
"""
import resource
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, E = 1, 8, 64


def timeit(fn, min_time=1.0):
    fn()  # warm up
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time and n >= 3:
            return elapsed / n


def run(L, backend):
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, L, E, requires_grad=True) for _ in range(3))
    g = torch.randn(B, H, L, E)

    def fwd():
        with torch.no_grad(), sdpa_kernel(backend):
            F.scaled_dot_product_attention(q, k, v)

    def fwdbwd():
        with sdpa_kernel(backend):
            F.scaled_dot_product_attention(q, k, v).backward(g)
        for t in (q, k, v):
            t.grad = None

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fwdbwd()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t_f, t_fb = timeit(fwd), timeit(fwdbwd)
    name = "flash" if backend == SDPBackend.FLASH_ATTENTION else "math"
    print(f"sdpa_{name} L={L}: fwd {t_f * 1e3:.2f} ms, fwd+bwd {t_fb * 1e3:.2f} ms, "
          f"peak RSS growth {(rss1 - rss0) / 1024:.1f} MiB (first run; a lower bound)")


print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
# Smallest first for each backend: ru_maxrss only grows, so later growth is what a run adds.
for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.MATH):
    for L in (512, 2048):
        run(L, backend)
