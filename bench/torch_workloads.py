"""The workloads of bench/compare.py: one table, each row naming ember's canonical Google
Benchmark (program and exact name) and building the same computation in PyTorch.

Importing this module needs only the standard library (compare.py runs on any python3); the
PyTorch side is built inside the functions, and runs when this file is executed by a Python
that has torch: then it is a fork server (see serve()) that compare.py starts once per
allocator setting and asks for one measurement at a time, each in a fresh forked child, so
every measurement gets its own max RSS and starts from the same state.
"""
import json
import os
import re
import resource
import sys
import time
from typing import Callable, NamedTuple, Optional


class Workload(NamedTuple):
    name: str           # ember's canonical benchmark name, exact
    program: str        # the Google Benchmark program that registers it (build-bench/bench/<program>)
    kind: str           # "overhead" (vs libtorch in C++), "memory" (vs bandwidth), "flops" (vs FMA peak), "step"
    amount: float       # bytes moved ("memory") or floating-point operations ("flops") per call
    torch: Optional[Callable]  # () -> (callable to time), in PyTorch; None: compared against libtorch
    blas: Optional[Callable] = None  # the same product in numpy (OpenBLAS), timed beside PyTorch
    rss: bool = False   # max RSS is one of this workload's targets: shown in the table
    quick: bool = False  # part of --quick


M1, M16 = 1 << 20, 1 << 24
F32 = 4


# ---- the PyTorch definitions (each states what it computes; ember's benchmark computes the same)

def _torch():
    import torch
    return torch


def binary(op, n):
    """op(a, b) on two float32 vectors of n standard-normal values, allocating its output."""
    def make():
        torch = _torch()
        a, b = torch.randn(n), torch.randn(n)
        f = {"add": torch.add, "mul": torch.mul}[op]
        return lambda: f(a, b)
    return make


def unary(op, n):
    """op(a) on a float32 vector of n standard-normal values, allocating its output
    (gelu: the exact erf form, PyTorch's default)."""
    def make():
        torch = _torch()
        a = torch.randn(n)
        f = {"relu": torch.relu, "exp": torch.exp, "gelu": torch.nn.functional.gelu}[op]
        return lambda: f(a)
    return make


def reduce_all(op, n):
    """a.sum() / a.mean() / a.max() over all n elements of a float32 vector (randn)."""
    def make():
        a = _torch().randn(n)
        return getattr(a, op)
    return make


def reduce_rows(op, rows, cols):
    """x.sum(1) / x.mean(1) / x.max(1) (values and indices) of a (rows, cols) float32 matrix."""
    def make():
        x = _torch().randn(rows, cols)
        f = getattr(x, op)
        return lambda: f(1)
    return make


def softmax(rows, cols):
    """softmax(x, dim=-1) of a (rows, cols) float32 matrix (randn)."""
    def make():
        torch = _torch()
        x = torch.randn(rows, cols)
        return lambda: torch.softmax(x, -1)
    return make


def layer_norm(rows, cols):
    """F.layer_norm(x, (cols,), weight, bias) of a (rows, cols) float32 matrix; no grad."""
    def make():
        torch = _torch()
        x, w, b = torch.randn(rows, cols), torch.randn(cols), torch.randn(cols)
        return lambda: torch.nn.functional.layer_norm(x, (cols,), w, b)
    return make


def matmul(m, k, n):
    """(m x k) @ (k x n), float32, uniform [0, 1) inputs, allocating the output."""
    def make():
        torch = _torch()
        a, b = torch.rand(m, k), torch.rand(k, n)
        return lambda: torch.matmul(a, b)
    return make


def numpy_matmul(m, k, n):
    """The same product in numpy (its BLAS: OpenBLAS in the pip wheel)."""
    def make():
        import numpy as np
        rng = np.random.default_rng(0)
        a = rng.random((m, k), dtype=np.float32)
        b = rng.random((k, n), dtype=np.float32)
        return lambda: np.matmul(a, b)
    return make


def conv2d(batch, cin, cout, hw, backward):
    """conv2d of a (batch, cin, hw, hw) input with a (cout, cin, 3, 3) weight and a bias,
    padding 1, stride 1 (randn everywhere). Forward alone under no_grad; or forward plus the
    backward of y.sum() into weight, bias and (unless cin == 1, a network's first layer) the
    input, the gradients reset to None after each call."""
    def make():
        torch = _torch()
        F = torch.nn.functional
        x, w, b = torch.randn(batch, cin, hw, hw), torch.randn(cout, cin, 3, 3), torch.randn(cout)
        if not backward:
            def fwd():
                with torch.no_grad():
                    return F.conv2d(x, w, b, 1, 1)
            return fwd
        leaves = [w, b] + ([x] if cin > 1 else [])
        for t in leaves:
            t.requires_grad_(True)

        def fwd_bwd():
            F.conv2d(x, w, b, 1, 1).sum().backward()
            for t in leaves:
                t.grad = None
        return fwd_bwd
    return make


def make_cnn(nn):
    """The trainer's CNN (examples/fashion_mnist.cpp and .py): conv-bn-relu-pool twice, then
    flatten, dropout 0.25, 3136->128, relu, dropout 0.25, 128->10."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
        nn.Dropout(0.25), nn.Linear(128, 10))


def train_step(model, batch):
    """One training step in training mode: forward, cross_entropy, zero_grad, backward, AdamW
    step (lr 2e-3, weight decay 1e-4, the trainer's), on a fixed random batch (seed 0).
    mlp: Flatten, 784-512-256-10 with ReLU; cnn: make_cnn; both on x = randn(batch, 1, 28, 28),
    y = randint(0, 10, (batch,))."""
    def make():
        torch = _torch()
        nn, F = torch.nn, torch.nn.functional
        torch.manual_seed(0)
        if model == "mlp":
            net = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                nn.Linear(256, 10))
        else:
            net = make_cnn(nn)
        x, y = torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
        net.train()
        opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)

        def step():
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return step
    return make


def char_gpt_step():
    """One training step of examples/char_gpt.py's model at char_gpt's default size (4 layers,
    4 heads, n_embd 128, block 64, vocabulary 96, batch 32): forward, cross_entropy over every
    position, zero_grad, backward, clip_grad_norm_(1.0), AdamW (lr 1e-3, betas (0.9, 0.95),
    weight decay 0.1 on tensors of 2+ dims, 0 on the rest)."""
    def make():
        torch = _torch()
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "char_gpt", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "char_gpt.py"))
        char_gpt = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(char_gpt)
        F = torch.nn.functional
        torch.manual_seed(0)
        vocab, batch, block = 96, 32, 64
        net = char_gpt.Gpt(vocab, block, 4, 4, 128, 0.0)
        net.train()
        decay = [p for p in net.parameters() if p.dim() >= 2]
        no_decay = [p for p in net.parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=1e-3, betas=(0.9, 0.95))
        x, y = torch.randint(0, vocab, (batch, block)), torch.randint(0, vocab, (batch, block))

        def step():
            loss = F.cross_entropy(net(x).view(-1, vocab), y.view(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        return step
    return make


def _conv_flops(batch, cin, cout, hw, backward):
    fwd = 2.0 * batch * cout * cin * 9 * hw * hw
    # backward: the weight gradient costs one forward's FLOPs, the input gradient another.
    return fwd * (1 + (1 + (cin > 1) if backward else 0))


def _conv_rows():
    rows = []
    for batch, cin, cout, hw in ((64, 1, 32, 28), (64, 32, 64, 14), (32, 64, 64, 56)):
        for backward in (False, True):
            name = f"conv2d_{'fwdbwd' if backward else 'fwd'}/b{batch}_{cin}to{cout}_{hw}"
            rows.append(Workload(name, "bench_conv", "flops", _conv_flops(batch, cin, cout, hw, backward),
                                 conv2d(batch, cin, cout, hw, backward), rss=backward,
                                 quick=(cin == 32 and backward)))
    return rows


# ---- the table ------------------------------------------------------------------------------

WORKLOADS = [
    # Per-op overhead on 1-element float32 tensors: compared with libtorch in C++
    # (bench/libtorch_overhead.cpp builds the same bench_overhead.cpp against libtorch).
    Workload("overhead/add", "bench_overhead", "overhead", 0, None, quick=True),
    Workload("overhead/add_recorded", "bench_overhead", "overhead", 0, None),
    Workload("overhead/mul_sum_backward", "bench_overhead", "overhead", 0, None),
    # Elementwise, float32; bytes count every tensor read and written.
    *[Workload(f"{op}/{label}", "bench_elementwise", "memory", 3 * F32 * n, binary(op, n), quick=(op == "add"))
      for op in ("add", "mul") for label, n in (("1M", M1), ("16M", M16))],
    *[Workload(f"{op}/{label}", "bench_elementwise", "memory", 2 * F32 * n, unary(op, n),
               quick=(op == "gelu" and n == M16))
      for op in ("relu", "exp", "gelu") for label, n in (("1M", M1), ("16M", M16))],
    # Reductions: the input's bytes (the outputs are negligible).
    *[Workload(f"{op}/16M", "bench_reduce", "memory", F32 * M16, reduce_all(op, M16), quick=(op == "sum"))
      for op in ("sum", "mean", "max")],
    *[Workload(f"{op}_rows/4096x4096", "bench_reduce", "memory", F32 * 4096 * 4096, reduce_rows(op, 4096, 4096))
      for op in ("sum", "mean", "max")],
    # Normalisation: read the input, write the output.
    Workload("softmax/4096x1024", "bench_norm", "memory", 2 * F32 * 4096 * 1024, softmax(4096, 1024)),
    Workload("layer_norm/4096x1024", "bench_norm", "memory", 2 * F32 * 4096 * 1024, layer_norm(4096, 1024)),
    # GEMM: 2 m n k FLOPs; also against numpy's OpenBLAS.
    *[Workload(f"matmul/{n}", "bench_matmul", "flops", 2.0 * n ** 3, matmul(n, n, n), blas=numpy_matmul(n, n, n),
               quick=(n in (64, 512)))
      for n in (64, 128, 256, 512, 1024, 2048)],
    Workload("matmul/4096x1024x256", "bench_matmul", "flops", 2.0 * 4096 * 1024 * 256, matmul(4096, 1024, 256),
             blas=numpy_matmul(4096, 1024, 256)),
    *_conv_rows(),
    Workload("step/mlp_b128", "bench_train_step", "step", 0, train_step("mlp", 128), rss=True, quick=True),
    Workload("step/cnn_b64", "bench_train_step", "step", 0, train_step("cnn", 64), rss=True),
    Workload("step/char_gpt", "bench_char_gpt", "step", 0, char_gpt_step(), rss=True),
]

BY_NAME = {w.name: w for w in WORKLOADS}


# ---- the PyTorch side: timing and the fork server -----------------------------------------------

def time_calls(fn, repetitions, min_time):
    """Google Benchmark's statistic, in Python: one warm-up call, then iterations grown until a
    timed loop takes at least min_time, then `repetitions` timed loops of that many iterations;
    returns seconds per call of each repetition."""
    fn()
    iterations = 1
    while True:
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        iterations = max(iterations + 1, int(iterations * min(10.0, 1.4 * min_time / max(elapsed, 1e-9))))
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter() - start) / iterations)
    return samples


def describe():
    """Versions and configuration of the PyTorch and numpy this process runs."""
    import numpy as np
    torch = _torch()
    config = torch.__config__.show()
    keep = ("Math Kernel Library", "MKL-DNN", "oneDNN", "OpenMP", "CPU capability", "BLAS")
    summary = [line.strip(" -") for line in config.splitlines()
               if any(k in line for k in keep) and "Build settings" not in line]
    blas_info = re.search(r"BLAS_INFO=(\w+)", config)
    blas = {}
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # older numpy: no dict mode
        pass
    return {
        "python": sys.version.split()[0], "executable": sys.executable,
        "torch": torch.__version__, "torch_blas": blas_info.group(1) if blas_info else "?",
        "torch_config": summary, "torch_threads": torch.get_num_threads(),
        "torch_cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
        "torch_dir": os.path.dirname(torch.__file__),
        "numpy": np.__version__, "numpy_blas": blas.get("name", "?"), "numpy_blas_version": blas.get("version", "?"),
        "numpy_blas_config": blas.get("openblas configuration", ""),
        "baseline_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,  # torch imported, nothing run
        "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                            "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_") if k in os.environ},
    }


def measure(request):
    """Runs in the forked child: builds the workload and times it."""
    torch = _torch()
    torch.set_num_threads(request["threads"])
    w = BY_NAME[request["name"]]
    fn = (w.blas if request["side"] == "numpy" else w.torch)()
    return {"seconds": time_calls(fn, request["repetitions"], request["min_time"])}


def serve():
    """One JSON request per line on stdin, one JSON answer per line on stdout. Each measurement
    runs in a forked child (torch and numpy are imported once, here, before any thread pool
    starts) and its answer carries the child's max RSS from wait4."""
    import numpy  # noqa: F401  (imported before fork, like torch)
    _torch()
    out = sys.stdout
    sys.stdout = sys.stderr  # anything else printed goes to stderr
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("describe"):
            answer = describe()
        else:
            answer = run_in_child(request)
        out.write(json.dumps(answer) + "\n")
        out.flush()


def run_in_child(request):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            answer = measure(request)
        except Exception as e:  # reported, not fatal: the table says what failed
            answer = {"error": f"{type(e).__name__}: {e}"}
        with os.fdopen(w, "w") as f:
            f.write(json.dumps(answer))
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status, usage = os.wait4(pid, 0)
    answer = json.loads(text) if text else {"error": f"child died (wait status {status})"}
    answer["maxrss_kb"] = usage.ru_maxrss
    return answer


if __name__ == "__main__":
    serve()
