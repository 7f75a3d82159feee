#!/usr/bin/env python3
"""PyTorch's side of ember's CUDA benchmarks (bench/bench_cuda.cpp), and the table of both.

Times the same workloads as bench_cuda in PyTorch on the same GPU: c = a + b and a.add_(b) on
256M float32 elements, a device-to-device dst.copy_(src) of the same size, a.sum() over 256M
elements, and allocator churn (eight tensors of mixed sizes allocated and freed per round).
Same method as bench_cuda: wall time, each iteration ended by torch.cuda.synchronize(); the
median of the iterations after a warm-up. Bytes count each tensor read or written once.

With --ember-json (bench_cuda's --benchmark_out JSON), it prints both side by side. Without
PyTorch or a GPU it prints ember's numbers alone and exits with 77 (skipped).

  python3 scripts/gpu_bench_torch.py --ember-json build-gpu/bench_cuda.json [--json out.json]
"""
import argparse
import json
import statistics
import sys
import time

N = 1 << 28  # 256M elements, as bench_cuda's k256M
CHURN_SIZES = [128, 1000, 25_000, 262_144, 655_360, 3_000_000, 16_777_216, 50_000_000]

# Workload -> (bench_cuda benchmark, unit). GB/s: higher is better; ns/alloc: lower is better.
WORKLOADS = [
    ("c = a + b", "BM_Add", "GB/s"),
    ("a.add_(b)", "BM_AddInPlace", "GB/s"),
    ("copy_ (device to device)", "BM_CopyEmber", "GB/s"),
    ("cudaMemcpyAsync (ceiling)", "BM_CopyCudaMemcpy", "GB/s"),
    ("a.sum()", "BM_Sum", "GB/s"),
    ("allocator churn", "BM_AllocatorChurn", "ns/alloc"),
]


def median_seconds(torch, fn, iters, warmup=3):
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


def run_torch(iters):
    """PyTorch's numbers as {workload: value}, or (None, reason) when it cannot run."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        return None, f"PyTorch is not importable ({e.__class__.__name__}: {e})"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} sees no CUDA device"
    dev = torch.device("cuda", 0)
    res = {}
    a = torch.full((N,), 1.25, device=dev)
    b = torch.full((N,), 2.5, device=dev)
    res["c = a + b"] = 12 * N / median_seconds(torch, lambda: a + b, iters) / 1e9
    res["a.add_(b)"] = 12 * N / median_seconds(torch, lambda: a.add_(b), iters) / 1e9
    dst = torch.empty_like(a)
    res["copy_ (device to device)"] = 8 * N / median_seconds(torch, lambda: dst.copy_(b), iters) / 1e9
    res["a.sum()"] = 4 * N / median_seconds(torch, lambda: a.sum(), iters) / 1e9
    check = (a + b)[-1].item(), b.sum().item()
    if abs(check[0] - (a[-1].item() + 2.5)) > 1e-3 or abs(check[1] - 2.5 * N) > 1e-3 * 2.5 * N:
        return None, f"PyTorch computed wrong results: {check}"
    del a, b, dst

    def churn():
        live = [torch.empty(n, device=dev) for n in CHURN_SIZES]
        del live

    rounds = 200
    churn()
    t = median_seconds(torch, lambda: [churn() for _ in range(rounds)], 5)
    res["allocator churn"] = t / (rounds * len(CHURN_SIZES)) * 1e9
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
    for workload, bench, unit in WORKLOADS:
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
        elif pick.get("ns_per_alloc") is not None:
            out[workload] = float(pick["ns_per_alloc"])
    return out


def fmt(v, unit):
    if v is None:
        return "-"
    if isinstance(v, str):
        return "error (below)"
    return f"{v:,.0f} {unit}" if unit == "GB/s" else f"{v:,.0f} ns"


def print_table(ember, torch_res, torch_info):
    print("CUDA benchmarks, 256M float32 elements (GB/s = 10^9 bytes/s, each byte read or written once)")
    print(f"ember: bench/bench_cuda; PyTorch: {torch_info}")
    ceiling = ember.get("cudaMemcpyAsync (ceiling)")
    head = f"{'workload':<27}{'ember':>16}{'PyTorch':>16}{'ember/PyTorch':>15}{'ember % of copy':>17}"
    print(head)
    print("-" * len(head))
    for workload, _, unit in WORKLOADS:
        e = ember.get(workload)
        t = (torch_res or {}).get(workload)
        ratio = pct = ""
        if isinstance(e, float) and isinstance(t, float) and e > 0 and t > 0:
            # speed ratio: above 1 means ember is faster (more GB/s, or fewer ns per allocation)
            ratio = f"{e / t:.2f}x" if unit == "GB/s" else f"{t / e:.2f}x"
        if unit == "GB/s" and isinstance(e, float) and isinstance(ceiling, float) and ceiling > 0:
            pct = f"{100 * e / ceiling:.0f}%"
        print(f"{workload:<27}{fmt(e, unit):>16}{fmt(t, unit):>16}{ratio:>15}{pct:>17}")
    print("ember/PyTorch: speed ratio, above 1 means ember is faster. PyTorch's allocator churn"
          " includes Python's call overhead (about 1-2 us per torch.empty).")
    for workload, v in ember.items():
        if isinstance(v, str):
            print(f"ember error in {workload}: {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ember-json", help="bench_cuda's --benchmark_out JSON file")
    ap.add_argument("--json", help="write PyTorch's numbers here")
    ap.add_argument("--iters", type=int, default=20, help="timed iterations per workload")
    args = ap.parse_args()

    torch_res, torch_info = run_torch(args.iters)
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
