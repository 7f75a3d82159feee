#!/usr/bin/env python3
"""PyTorch's side of bench/bench_train_step.cpp: the same Fashion-MNIST training step
(forward, cross_entropy, zero_grad, backward, AdamW step with lr 2e-3, weight decay 1e-4) for
the canonical models -- step/cnn_b64: the trainer's CNN (examples/fashion_mnist.cpp) at batch
64; step/mlp_b128: an MLP 784-512-256-10 with ReLU at batch 128 -- and each CNN layer's forward
and forward + backward at the step's shapes (batch 64), with 1 and 2 threads. Same iteration
counts per repetition and the same number of repetitions as the C++ benchmark; prints the best
repetition of each (wall time, ms per iteration).

    /usr/bin/python3 bench/train_step_torch.py            # everything
    /usr/bin/python3 bench/train_step_torch.py --only step # or: layers, adamw

glibc's malloc hands large freed blocks back to the OS, so PyTorch page-faults its activations
every step; MALLOC_MMAP_THRESHOLD_=1000000000000 MALLOC_TRIM_THRESHOLD_=1000000000000 in the
environment keeps them (bench/README.md quotes both).
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

BATCH = 64  # the CNN's batch (step/cnn_b64) and the layers'
BATCHES = {"cnn": 64, "mlp": 128}  # step/cnn_b64, step/mlp_b128
NAMES = {"cnn": "step/cnn_b64", "mlp": "step/mlp_b128"}
REPETITIONS = 5

# (name, iterations per repetition): the same table as kLayers in bench_train_step.cpp.
LAYERS = [("conv1", 20), ("bn1", 20), ("relu1", 50), ("pool1", 20), ("conv2", 10), ("bn2", 50),
          ("relu2", 50), ("pool2", 50), ("dropout", 100), ("fc1", 50), ("fc2", 500),
          ("cross_entropy", 500)]


def make_model(kind):
    """The canonical models: "mlp" 784-512-256-10 with ReLU, "cnn" the trainer's CNN."""
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                             nn.ReLU(), nn.Linear(256, 10))
    model = nn.Module()
    model.features = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))
    model.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128),
                                     nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))
    model.forward = lambda x: model.classifier(model.features(x))
    return model


def best_of(run, iterations):
    """Best repetition's wall time per iteration, in ms. The smallest CPU time per iteration of
    the process (all threads) goes to CPU_MS: on a loaded machine the 1-thread CPU time is the
    steadier figure."""
    best = best_cpu = float("inf")
    for _ in range(REPETITIONS):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(iterations):
            run()
        best = min(best, (time.perf_counter() - start) / iterations * 1e3)
        best_cpu = min(best_cpu, (time.process_time() - start_cpu) / iterations * 1e3)
    CPU_MS.append(best_cpu)
    return best


CPU_MS = []  # CPU time per iteration of each best_of, in order


def train_step(kind, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = make_model(kind)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    batch = BATCHES[kind]
    x = torch.randn(batch, 1, 28, 28)
    y = torch.randint(0, 10, (batch,))
    parts = {}

    def step():
        t0 = time.perf_counter()
        loss = F.cross_entropy(model.forward(x), y)
        t1 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        for k, v in (("fwd", t1 - t0), ("bwd", t2 - t1), ("opt", t3 - t2)):
            parts.setdefault(k, []).append(v * 1e3)

    iterations = 10 if kind == "cnn" else 200
    ms = best_of(step, iterations)
    # The parts' averages over the fastest `iterations` consecutive steps.
    n = len(parts["fwd"])
    sums = [sum(parts["fwd"][i:i + iterations]) + sum(parts["bwd"][i:i + iterations]) +
            sum(parts["opt"][i:i + iterations]) for i in range(0, n, iterations)]
    i = min(range(len(sums)), key=sums.__getitem__) * iterations
    avg = {k: sum(v[i:i + iterations]) / iterations for k, v in parts.items()}
    print(f"{NAMES[kind]} threads:{threads}  {ms:8.3f} ms (cpu {CPU_MS[-1]:8.3f})  {batch / ms * 1e3:8.0f} samples/s"
          f"  (fwd {avg['fwd']:.3f}, bwd {avg['bwd']:.3f}, opt {avg['opt']:.3f} ms)", flush=True)


def leaf(*shape):
    return torch.randn(*shape).requires_grad_(True)


def make_layer(name):
    """(leaves, forward) for one CNN layer at the step's shape, as make_layer in the C++."""
    if name == "conv1":
        x, w, b = torch.randn(BATCH, 1, 28, 28), leaf(32, 1, 3, 3), leaf(32)
        return [w, b], lambda: F.conv2d(x, w, b, 1, 1)
    if name == "conv2":
        x, w, b = leaf(BATCH, 32, 14, 14), leaf(64, 32, 3, 3), leaf(64)
        return [x, w, b], lambda: F.conv2d(x, w, b, 1, 1)
    if name in ("bn1", "bn2"):
        c, hw = (32, 28) if name == "bn1" else (64, 14)
        x, w, b = leaf(BATCH, c, hw, hw), leaf(c), leaf(c)
        rm, rv = torch.zeros(c), torch.ones(c)
        return [x, w, b], lambda: F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
    if name in ("relu1", "relu2"):
        x = leaf(BATCH, 32, 28, 28) if name == "relu1" else leaf(BATCH, 64, 14, 14)
        return [x], lambda: F.relu(x)
    if name in ("pool1", "pool2"):
        x = leaf(BATCH, 32, 28, 28) if name == "pool1" else leaf(BATCH, 64, 14, 14)
        return [x], lambda: F.max_pool2d(x, 2)
    if name == "dropout":
        x = leaf(BATCH, 64 * 7 * 7)
        return [x], lambda: F.dropout(x, 0.25, True)
    if name in ("fc1", "fc2"):
        i, o = (64 * 7 * 7, 128) if name == "fc1" else (128, 10)
        x, w, b = leaf(BATCH, i), leaf(o, i), leaf(o)
        return [x, w, b], lambda: F.linear(x, w, b)
    x, t = leaf(BATCH, 10), torch.randint(0, 10, (BATCH,))
    return [x], lambda: F.cross_entropy(x, t)


def layer(name, iterations, threads):
    torch.set_num_threads(threads)
    leaves, forward = make_layer(name)
    y = forward()
    grad_out = torch.randn_like(y) if y.dim() > 0 else None

    def fwd_bwd():
        forward().backward(grad_out)
        for t in leaves:
            t.grad = None

    f = best_of(forward, iterations)
    fb = best_of(fwd_bwd, iterations)
    print(f"layer {name:13s} threads:{threads}  fwd {f:8.3f} ms  fwd+bwd {fb:8.3f} ms"
          f"  (cpu: fwd {CPU_MS[-2]:8.3f}, fwd+bwd {CPU_MS[-1]:8.3f})", flush=True)


def adamw(threads):
    torch.set_num_threads(threads)
    model = make_model("cnn")
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    ms = best_of(opt.step, 100)
    print(f"adamw step (cnn) threads:{threads}  {ms:8.3f} ms (cpu {CPU_MS[-1]:8.3f})", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["step", "layers", "adamw"])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = p.parse_args()
    print(f"torch {torch.__version__}, {torch.backends.mkldnn.is_available() and 'mkldnn' or 'no mkldnn'}")
    for threads in args.threads:
        if args.only in (None, "step"):
            for kind in ("cnn", "mlp"):
                train_step(kind, threads)
        if args.only in (None, "layers"):
            for name, iterations in LAYERS:
                layer(name, iterations, threads)
        if args.only in (None, "adamw"):
            adamw(threads)


if __name__ == "__main__":
    main()
