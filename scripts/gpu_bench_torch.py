#!/usr/bin/env python3
"""PyTorch's side of ember's CUDA benchmarks (bench/bench_cuda.cpp), and the table of both.

Times the same workloads as bench_cuda, under the same names, in PyTorch on the same GPU:

  bandwidth (GB/s, each byte read or written once; the "% of copy" columns set them against
  the device-to-device copy, the ceiling): c = a + b and a.add_(b) on 256M float32 elements,
  dst.copy_(src) of the same size, a.sum() over 256M elements, softmax and layer_norm over the
  rows of an (8192, 4096) float32 matrix;
  compute (TFLOP/s): GEMM 4096^3 in float32, TF32, bfloat16 and float16; conv2d forward +
  backward of a ResNet layer (batch 64, 64 -> 64 channels, 3x3, 56x56, padding 1);
  a training step (ms): forward, backward and AdamW of the Fashion-MNIST trainer's CNN at
  batch 64 (examples/fashion_mnist.py's model), in float32 and as PyTorch's AMP recipe takes
  it (torch.autocast("cuda", torch.float16) around forward and loss, a GradScaler);
  allocator churn (ns per allocation): eight tensors of mixed sizes allocated and freed;
  scaled_dot_product_attention forward + backward (ms) and its peak memory (MiB beyond the
  inputs and their gradients) at batch 4, 16 heads, head size 64, L = S = 512 and 2048.

Same method as bench_cuda: the 256M-element rows take wall time with each iteration ended by
torch.cuda.synchronize() (the median of the iterations after a warm-up); the others are timed
on the GPU, `reps` back-to-back runs between two CUDA events (the median of five rounds).
Defaults as PyTorch's: TF32 off for float32 GEMM (on only in the TF32 row), cuDNN's own
allow_tf32 default (on) for the convolution, cudnn.benchmark off.

With --ember-json (bench_cuda's --benchmark_out JSON), it prints both side by side with the
ratio and whether each of issue 6's targets is met: GEMM and conv within 5% of PyTorch;
softmax, layer_norm and elementwise at >= 85% of the measured copy bandwidth; a training step
no slower than PyTorch's. Without PyTorch or a GPU it prints ember's numbers alone and exits
with 77 (skipped).

  python3 scripts/gpu_bench_torch.py --ember-json build-gpu/bench_cuda.json [--json out.json]
"""
import argparse
import json
import signal
import statistics
import sys
import time

N = 1 << 28  # 256M elements, as bench_cuda's k256M
CHURN_SIZES = [128, 1000, 25_000, 262_144, 655_360, 3_000_000, 16_777_216, 50_000_000]
GEMM = 4096
ROWS, COLS = 8192, 4096

# Workload -> (bench_cuda benchmark, unit, target). Units: GB/s and TFLOP/s higher is better,
# ms and ns/alloc lower is better. Targets: "copy85" = at least 85% of the copy ceiling,
# "torch95" = at least 0.95 of PyTorch's speed, "torch100" = at least PyTorch's speed.
WORKLOADS = [
    ("c = a + b", "BM_Add", "GB/s", "copy85"),
    ("a.add_(b)", "BM_AddInPlace", "GB/s", "copy85"),
    ("copy_ (device to device)", "BM_CopyEmber", "GB/s", None),
    ("cudaMemcpyAsync (ceiling)", "BM_CopyCudaMemcpy", "GB/s", None),
    ("a.sum()", "BM_Sum", "GB/s", None),
    ("softmax (8192, 4096)", "BM_Softmax", "GB/s", "copy85"),
    ("layer_norm (8192, 4096)", "BM_LayerNorm", "GB/s", "copy85"),
    ("GEMM 4096^3 float32", "BM_GemmFloat32", "TFLOP/s", "torch95"),
    ("GEMM 4096^3 TF32", "BM_GemmTF32", "TFLOP/s", "torch95"),
    ("GEMM 4096^3 bfloat16", "BM_GemmBFloat16", "TFLOP/s", "torch95"),
    ("GEMM 4096^3 float16", "BM_GemmFloat16", "TFLOP/s", "torch95"),
    ("conv2d ResNet fwd+bwd", "BM_Conv2dResNetForwardBackward", "TFLOP/s", "torch95"),
    ("train step, CNN batch 64", "BM_TrainStepCnn", "ms", "torch100"),
    ("train step, CNN, AMP fp16", "BM_TrainStepCnnAmpFp16", "ms", "torch100"),
    ("allocator churn", "BM_AllocatorChurn", "ns/alloc", None),
    ("SDPA f+b L=512 fp16", "BM_Sdpa512Fp16Fused", "ms", None),
    ("SDPA f+b L=2048 fp16", "BM_Sdpa2048Fp16Fused", "ms", None),
    ("SDPA f+b L=2048 fp16 math", "BM_Sdpa2048Fp16Math", "ms", None),
    ("SDPA f+b L=2048 fp32", "BM_Sdpa2048Fp32Fused", "ms", None),
    ("SDPA peak L=512 fp16", "BM_Sdpa512Fp16Fused", "MiB", None),
    ("SDPA peak L=2048 fp16", "BM_Sdpa2048Fp16Fused", "MiB", None),
    ("SDPA peak L=2048 fp16 math", "BM_Sdpa2048Fp16Math", "MiB", None),
    ("SDPA peak L=2048 fp32", "BM_Sdpa2048Fp32Fused", "MiB", None),
]
SDPA_SHAPE = (4, 16, 64)  # batch, heads, head size (bench_cuda's kSdpa*)
HIGHER_IS_BETTER = {"GB/s", "TFLOP/s"}
CEILING = "cudaMemcpyAsync (ceiling)"


def median_seconds(torch, fn, iters, warmup=3):
    """Wall time of fn, each call ended by a synchronize: the median of `iters` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def gpu_seconds(torch, fn, reps, rounds=5):
    """GPU time of one call of fn: `reps` back-to-back calls between two CUDA events, the
    median over `rounds` rounds after one warm-up call (bench_cuda's time_on_gpu)."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / reps)
    return statistics.median(times)


def bandwidth_workloads(torch, dev, iters, res):
    a = torch.full((N,), 1.25, device=dev)
    b = torch.full((N,), 2.5, device=dev)
    res["c = a + b"] = 12 * N / median_seconds(torch, lambda: a + b, iters) / 1e9
    res["a.add_(b)"] = 12 * N / median_seconds(torch, lambda: a.add_(b), iters) / 1e9
    dst = torch.empty_like(a)
    res["copy_ (device to device)"] = 8 * N / median_seconds(torch, lambda: dst.copy_(b), iters) / 1e9
    res["a.sum()"] = 4 * N / median_seconds(torch, lambda: a.sum(), iters) / 1e9
    check = (a + b)[-1].item(), b.sum().item()
    if abs(check[0] - (a[-1].item() + 2.5)) > 1e-3 or abs(check[1] - 2.5 * N) > 1e-3 * 2.5 * N:
        raise RuntimeError(f"PyTorch computed wrong results: {check}")
    del a, b, dst

    torch.manual_seed(3)
    x = torch.randn(ROWS, COLS, device=dev) * 4
    res["softmax (8192, 4096)"] = 8 * ROWS * COLS / gpu_seconds(torch, lambda: torch.softmax(x, -1), 50) / 1e9
    x = torch.randn(ROWS, COLS, device=dev) * 3 + 1
    w, bias = torch.ones(COLS, device=dev), torch.zeros(COLS, device=dev)
    ln = torch.nn.functional.layer_norm
    res["layer_norm (8192, 4096)"] = 8 * ROWS * COLS / gpu_seconds(torch, lambda: ln(x, (COLS,), w, bias), 50) / 1e9


def compute_workloads(torch, dev, res):
    flops = 2.0 * GEMM ** 3
    tf32_before = torch.backends.cuda.matmul.allow_tf32
    try:
        for name, dtype, tf32, reps in (("GEMM 4096^3 float32", torch.float32, False, 5),
                                        ("GEMM 4096^3 TF32", torch.float32, True, 20),
                                        ("GEMM 4096^3 bfloat16", torch.bfloat16, False, 20),
                                        ("GEMM 4096^3 float16", torch.float16, False, 20)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.manual_seed(1)
            a = torch.randn(GEMM, GEMM, device=dev).to(dtype)
            b = torch.randn(GEMM, GEMM, device=dev).to(dtype)
            res[name] = flops / gpu_seconds(torch, lambda: torch.mm(a, b), reps) / 1e12
            del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32_before

    n, c, k, h, w, r = 64, 64, 64, 56, 56, 3
    torch.manual_seed(2)
    x = torch.randn(n, c, h, w, device=dev, requires_grad=True)
    weight = (torch.randn(k, c, r, r, device=dev) * 0.05).requires_grad_(True)
    grad_out = torch.randn(n, k, h, w, device=dev)

    def conv_step():
        y = torch.nn.functional.conv2d(x, weight, padding=1)
        torch.autograd.grad(y, (x, weight), grad_out)

    res["conv2d ResNet fwd+bwd"] = 3 * 2.0 * n * k * c * r * r * h * w / gpu_seconds(torch, conv_step, 5) / 1e12


def trainer_cnn(nn):
    """examples/fashion_mnist.py's CNN (the ember trainer's, module for module)."""
    model = nn.Module()
    model.features = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))
    model.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128),
                                     nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))
    model.forward = lambda x: model.classifier(model.features(x))
    return model


def train_step_workload(torch, dev, res):
    for name, amp in (("train step, CNN batch 64", False), ("train step, CNN, AMP fp16", True)):
        torch.manual_seed(5)
        model = trainer_cnn(torch.nn).to(dev)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
        scaler = torch.amp.GradScaler("cuda", enabled=amp)
        x = torch.randn(64, 1, 28, 28, device=dev)
        y = torch.randint(0, 10, (64,), device=dev)

        def step():
            opt.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

        res[name] = gpu_seconds(torch, step, 10) * 1e3


def churn_workload(torch, dev, res):
    def churn():
        live = [torch.empty(n, device=dev) for n in CHURN_SIZES]
        del live

    rounds = 200
    churn()
    t = median_seconds(torch, lambda: [churn() for _ in range(rounds)], 5)
    res["allocator churn"] = t / (rounds * len(CHURN_SIZES)) * 1e9


def sdpa_workload(torch, dev, res):
    """bench_cuda's BM_Sdpa* rows: forward + backward of a fixed output gradient, PyTorch's
    default SDPA backend choice (flash for float16, memory-efficient for float32) and, for the
    "math" row, its plain composition; peak memory beyond the inputs and their gradients."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, h, e = SDPA_SHAPE
    for label, length, dtype, math in ((" L=512 fp16", 512, torch.float16, False),
                                       (" L=2048 fp16", 2048, torch.float16, False),
                                       (" L=2048 fp16 math", 2048, torch.float16, True),
                                       (" L=2048 fp32", 2048, torch.float32, False)):
        torch.manual_seed(3)
        q, k, v = (torch.randn(b, h, length, e, device=dev, dtype=dtype, requires_grad=True) for _ in range(3))
        g = torch.randn(b, h, length, e, device=dev, dtype=dtype)
        backends = [SDPBackend.MATH] if math else [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                                                   SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]

        def run():
            with sdpa_kernel(backends):
                torch.nn.functional.scaled_dot_product_attention(q, k, v).backward(g)

        run()
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        run()
        torch.cuda.synchronize()
        res["SDPA peak" + label] = (torch.cuda.max_memory_allocated() - before) / 2**20
        res["SDPA f+b" + label] = gpu_seconds(torch, run, 5) * 1e3
        del q, k, v, g


class Stopped(BaseException):
    """SIGTERM (the GPU check's time box): not an Exception, so no workload's handler takes it."""


PARTIAL = {}  # run_torch's results so far, for a table when the run is stopped


def run_torch(iters):
    """PyTorch's numbers as ({workload: value or error text}, info), or (None, reason) when it
    cannot run at all. One workload that fails (out of memory, say) leaves the others."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        return None, f"PyTorch is not importable ({e.__class__.__name__}: {e})"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} sees no CUDA device"
    dev = torch.device("cuda", 0)
    res = PARTIAL
    for group in (lambda: bandwidth_workloads(torch, dev, iters, res), lambda: compute_workloads(torch, dev, res),
                  lambda: train_step_workload(torch, dev, res), lambda: churn_workload(torch, dev, res),
                  lambda: sdpa_workload(torch, dev, res)):
        try:
            group()
        except Exception as e:  # noqa: BLE001 - report it in the table, go on with the rest
            print(f"PyTorch workload failed: {e.__class__.__name__}: {e}")
        torch.cuda.empty_cache()
    info = f"PyTorch {torch.__version__}, {torch.cuda.get_device_name(dev)}"
    return res, info


def ember_numbers(path):
    """bench_cuda's numbers as {workload: value, or the error text of a failed row}: the
    median row where repetitions were run, else the single row."""
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for row in data.get("benchmarks", []):
        rows.setdefault(row.get("run_name", row["name"]).split("/")[0], []).append(row)
    out = {}
    for workload, bench, unit, _ in WORKLOADS:
        found = rows.get(bench, [])
        good = [r for r in found if not r.get("error_occurred")]
        pick = next((r for r in good if r.get("aggregate_name") == "median"), None) or next(
            (r for r in good if r.get("run_type", "iteration") == "iteration"), None)
        if pick is None:
            errors = [r.get("error_message", "error") for r in found if r.get("error_occurred")]
            if errors:
                out[workload] = errors[0]
        elif unit == "GB/s":
            out[workload] = float(pick.get("GB/s", pick.get("bytes_per_second", 0) / 1e9))
        elif unit == "ns/alloc" and pick.get("ns_per_alloc") is not None:
            out[workload] = float(pick["ns_per_alloc"])
        elif unit == "MiB" and pick.get("peak_MiB") is not None:
            out[workload] = float(pick["peak_MiB"])
        elif unit in ("TFLOP/s", "ms") and pick.get(unit) is not None:
            out[workload] = float(pick[unit])
    return out


def fmt(v, unit):
    if v is None:
        return "-"
    if isinstance(v, str):
        return "error (below)"
    if unit == "GB/s":
        return f"{v:,.0f} GB/s"
    if unit == "TFLOP/s":
        return f"{v:,.1f} TFLOP/s"
    if unit == "ms":
        return f"{v:,.3f} ms"
    if unit == "MiB":
        return f"{v:,.1f} MiB"
    return f"{v:,.0f} ns"


def is_number(v):
    return isinstance(v, float) and v > 0


def speed_ratio(e, t, unit):
    """ember's speed over PyTorch's: above 1 means ember is faster."""
    return e / t if unit in HIGHER_IS_BETTER else t / e


def target_text(target, e, t, unit, ceiling):
    """The target and whether ember meets it (empty when the row has no target)."""
    if target is None:
        return ""
    if target == "copy85":
        if not (is_number(e) and is_number(ceiling)):
            return ">=85% of copy: ?"
        return f">=85% of copy: {'yes' if e / ceiling >= 0.85 else 'NO'}"
    need = 0.95 if target == "torch95" else 1.0
    label = ">=0.95x PyTorch" if target == "torch95" else ">=1x PyTorch"
    if not (is_number(e) and is_number(t)):
        return f"{label}: ?"
    return f"{label}: {'yes' if speed_ratio(e, t, unit) >= need else 'NO'}"


def print_table(ember, torch_res, torch_info):
    torch_res = torch_res or {}
    print("CUDA benchmarks: ember and PyTorch on the same GPU (GB/s = 10^9 bytes/s, each byte read or written once)")
    print(f"ember: bench/bench_cuda; PyTorch: {torch_info}")
    ceiling = ember.get(CEILING)
    ceiling_note = "ember's cudaMemcpyAsync row"
    if not is_number(ceiling) and is_number(torch_res.get("copy_ (device to device)")):
        ceiling, ceiling_note = torch_res["copy_ (device to device)"], "PyTorch's copy_ (ember's row is missing)"
    if is_number(ceiling):
        print(f"copy bandwidth (the ceiling, a 1 GiB device-to-device copy): {ceiling:,.0f} GB/s, from {ceiling_note}")
    else:
        print("copy bandwidth: not measured (no copy row ran)")
    head = (f"{'workload':<27}{'ember':>17}{'PyTorch':>17}{'ember/PyTorch':>15}{'ember %copy':>13}"
            f"{'PyTorch %copy':>15}  target")
    print(head)
    print("-" * (len(head) + 22))
    for workload, _, unit, target in WORKLOADS:
        e = ember.get(workload)
        t = torch_res.get(workload)
        ratio = pct_e = pct_t = ""
        if is_number(e) and is_number(t):
            ratio = f"{speed_ratio(e, t, unit):.2f}x"
        if unit == "GB/s" and is_number(ceiling):
            pct_e = f"{100 * e / ceiling:.0f}%" if is_number(e) else ""
            pct_t = f"{100 * t / ceiling:.0f}%" if is_number(t) else ""
        print(f"{workload:<27}{fmt(e, unit):>17}{fmt(t, unit):>17}{ratio:>15}{pct_e:>13}{pct_t:>15}  "
              f"{target_text(target, e, t, unit, ceiling)}".rstrip())
    print("ember/PyTorch: speed ratio, above 1 means ember is faster (more GB/s or TFLOP/s, fewer ms or ns)"
          " or uses less memory (fewer MiB)."
          " %copy: share of the copy bandwidth above. PyTorch's allocator churn includes Python's call"
          " overhead (about 1-2 us per torch.empty).")
    for workload, v in ember.items():
        if isinstance(v, str):
            print(f"ember error in {workload}: {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ember-json", help="bench_cuda's --benchmark_out JSON file")
    ap.add_argument("--json", help="write PyTorch's numbers here")
    ap.add_argument("--iters", type=int, default=20, help="timed iterations per 256M-element workload")
    args = ap.parse_args()

    def stop(signum, frame):
        raise Stopped()

    signal.signal(signal.SIGTERM, stop)
    try:
        torch_res, torch_info = run_torch(args.iters)
    except Stopped:  # the time box: the rows done so far, said as such
        torch_res, torch_info = PARTIAL, "stopped at its time limit (SIGTERM); the rows measured before it"
    ember = {}
    if args.ember_json:
        try:
            ember = ember_numbers(args.ember_json)
        except (OSError, ValueError, KeyError) as e:
            print(f"cannot read ember's numbers from {args.ember_json}: {e}")
    if args.json and torch_res is not None:
        with open(args.json, "w") as f:
            json.dump({"info": torch_info, "results": torch_res}, f, indent=1)
    print_table(ember, torch_res, torch_info if torch_res is not None else "not run: " + torch_info)
    return 0 if torch_res is not None else 77


if __name__ == "__main__":
    sys.exit(main())
