#!/usr/bin/env python3
"""ember against PyTorch, side by side, on this machine, with the same thread count.

    bench/compare.py                       # everything (~15 min on 2 cores), table on stdout
    bench/compare.py --quick               # a few rows of each kind (~2 min)
    bench/compare.py --only 'matmul|conv' --markdown /tmp/results.md

Builds what it needs (a CPU-only Release build in build-bench/), finds PyTorch (--python, else
a virtual environment build-bench/torch-venv that it creates with pip, else Debian's
python3-torch), measures the machine's FMA peak and memory bandwidth (bench/machine_peak),
then runs every workload of bench/torch_workloads.py in ember (its Google Benchmark) and in
PyTorch, interleaved, PyTorch both as shipped and with glibc's malloc tuned to keep freed
memory; GEMM also in numpy's OpenBLAS, per-op overhead against libtorch in C++. Ends with one
epoch of the Fashion-MNIST trainer in both, and the size of the stripped CPU-only library.
Standard library only; the PyTorch side runs in the PyTorch interpreter it found.
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import torch_workloads  # noqa: E402  (the one workload table; stdlib-only at import)

TORCH_SPEC = "torch==2.9.1 numpy safetensors"
TUNED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(10 ** 12), "MALLOC_TRIM_THRESHOLD_": str(10 ** 12)}
EPOCH = "epoch/fashion_mnist_cnn"
SIDES = ("ember", "shipped", "tuned", "openblas")


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


# ---- measurements ---------------------------------------------------------------------------

class Result:
    """Seconds per call of every repetition (all rounds), the largest max RSS, or why none."""

    def __init__(self, error=None):
        self.samples, self.maxrss_kb, self.error = [], 0, error

    def add(self, samples=(), maxrss_kb=0, error=None):
        self.samples += list(samples)
        self.maxrss_kb = max(self.maxrss_kb, maxrss_kb or 0)
        self.error = self.error or error
        return self

    def merge(self, other):
        return self.add(other.samples, other.maxrss_kb, other.error)

    @property
    def seconds(self):
        return statistics.median(self.samples) if self.samples and not self.error else None


def run_measured(cmd, env):
    """Runs cmd to completion; returns (stdout, stderr, exit code, max RSS in KiB, wall seconds)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        err.seek(0)
        return (out.decode(errors="replace"), err.read().decode(errors="replace"), proc.returncode,
                usage.ru_maxrss, time.perf_counter() - start)


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def clean_env(threads, malloc=None):
    """The environment every measured process gets: N threads for OpenMP and the BLASes, and
    glibc's malloc as shipped (MALLOC_* removed) unless `malloc` tunes it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env.update(malloc or {})
    return env


# Suffixes Google Benchmark appends to a registered name (UseRealTime, Iterations, ...).
GB_SUFFIX = r"(/(real_time|manual_time|iterations:[0-9]+|repeats:[0-9]+|min_time:[0-9.]+s?|threads:[0-9]+))*"
UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def run_gbench(exe, name, threads, args, env_extra=None):
    """One canonical benchmark of a Google Benchmark program: seconds per iteration of each
    repetition (wall time), and the process's max RSS."""
    if not Path(exe).exists():
        return Result(f"missing ({Path(exe).name} not built)")
    regex = "^" + re.escape(name).replace("\\/", "/") + GB_SUFFIX + "$"
    cmd = [exe, f"--benchmark_filter={regex}", "--benchmark_format=json",
           f"--benchmark_repetitions={args.repetitions}", f"--benchmark_min_time={args.min_time}"]
    out, err, code, rss, _ = run_measured(cmd, clean_env(threads, env_extra))
    if code != 0:
        return Result(f"failed (exit {code}): {last_line(err)}")
    report = json.loads(out) if out.strip() else {}  # nothing matched: no output at all
    runs = [b for b in report.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"
            and re.fullmatch(re.escape(name) + GB_SUFFIX, b["name"])]
    if not runs:
        return Result(f"missing (no '{name}' in {Path(exe).name})")
    return Result().add([b["real_time"] * UNITS[b["time_unit"]] for b in runs], rss)


class TorchWorker:
    """bench/torch_workloads.py serving measurements in one PyTorch interpreter."""

    def __init__(self, python, env):
        self.proc = subprocess.Popen([python, str(ROOT / "bench" / "torch_workloads.py")], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, **request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the PyTorch worker died (see its messages above)")
        return json.loads(line)

    def measure(self, side, name, threads, args):
        a = self.ask(side=side, name=name, threads=threads, repetitions=args.repetitions, min_time=args.min_time)
        return Result(a.get("error") and "failed: " + a["error"]).add(a.get("seconds", []), a.get("maxrss_kb"))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def measure_workload(w, ctx):
    """ember and PyTorch (as shipped, tuned), and OpenBLAS for GEMM, alternating `rounds` times."""
    results = {side: Result() for side in SIDES}
    ember_exe = ctx.build_dir / "bench" / w.program
    for _ in range(ctx.args.rounds):
        results["ember"].merge(run_gbench(ember_exe, w.name, ctx.threads, ctx.args))
        for side, malloc in (("shipped", None), ("tuned", TUNED_MALLOC)):
            if w.torch is None:  # per-op overhead: libtorch in C++
                r = (run_gbench(ctx.libtorch, w.name, ctx.threads, ctx.args, malloc) if ctx.libtorch
                     else Result(ctx.libtorch_error))
            else:
                r = ctx.workers[side].measure("torch", w.name, ctx.threads, ctx.args)
            results[side].merge(r)
        if w.blas:
            results["openblas"].merge(ctx.workers["tuned"].measure("numpy", w.name, ctx.threads, ctx.args))
    return results


def fashion_mnist_epoch(ctx):
    """One epoch of the trainer in ember and in PyTorch (as shipped, tuned): the epoch's training
    time as each prints it, the whole process's wall time, test accuracy, max RSS."""
    data = Path(ctx.args.data_dir)
    if not any((data / f).exists() for f in ("train-images-idx3-ubyte", "train-images-idx3-ubyte.gz")):
        return {"error": f"missing dataset in {data} (scripts/setup.sh installs dataset-fashion-mnist)"}
    common = ["--epochs", "1", "--threads", str(ctx.threads), "--data-dir", str(data)]
    torch_env = safetensors_path(ctx)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "ember": [ctx.build_dir / "examples" / "fashion_mnist", *common, "--out-dir", f"{tmp}/ember"],
            "shipped": [ctx.python, ROOT / "examples" / "fashion_mnist.py", "--train", *common, "--out-dir", f"{tmp}/t"],
        }
        commands["tuned"] = commands["shipped"]
        for side, cmd in commands.items():
            if not Path(cmd[0]).exists():
                runs[side] = {"error": f"missing ({cmd[0]} not built)", "maxrss_kb": 0}
                continue
            log(f"  epoch: {side} ...")
            env = clean_env(ctx.threads, TUNED_MALLOC if side == "tuned" else None) | (torch_env if side != "ember" else {})
            out, err, code, rss, wall = run_measured(cmd, env)
            runs[side] = parse_epoch(out, err, code) | {"maxrss_kb": rss, "wall": wall}
    return runs


def safetensors_path(ctx):
    """examples/fashion_mnist.py needs safetensors: when the PyTorch Python lacks it, pip installs
    it once into <build-dir>/torch-extra (that Python's own packages stay as they are), and the
    PYTHONPATH that finds it is returned."""
    if python_has(ctx.python, ["safetensors"]):
        return {}
    extra = ctx.build_dir / "torch-extra"
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(extra), os.environ.get("PYTHONPATH")]))}
    if not (extra / "safetensors").exists():
        log(f"compare: {ctx.python} lacks safetensors; pip install --target {extra} safetensors")
        subprocess.run([ctx.python, "-m", "pip", "install", "-q", "--target", extra, "safetensors"], stdout=sys.stderr)
    return env


def parse_epoch(out, err, code):
    seconds = re.search(r"^epoch 1\b.*?([0-9.]+) s\b", out, re.M)
    accuracy = re.search(r"^test accuracy ([0-9.]+)%", out, re.M)
    if code != 0 or not seconds or not accuracy:
        return {"error": f"failed (exit {code}): {last_line(err) or last_line(out)}"}
    return {"seconds": float(seconds.group(1)), "accuracy": float(accuracy.group(1))}


# ---- build, PyTorch, machine ------------------------------------------------------------------

def build(args):
    """Configures a CPU-only Release build if there is none, then builds the programs used here."""
    bd = args.build_dir
    if not (bd / "build.ninja").exists():
        cmd = ["cmake", "-S", ROOT, "-B", bd, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DEMBER_CUDA=OFF",
               "-DEMBER_BUILD_TESTS=OFF", *args.cmake_arg]
        log("configuring:", " ".join(map(str, cmd)))
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    programs = sorted({w.program for w in torch_workloads.WORKLOADS if (ROOT / "bench" / f"{w.program}.cpp").exists()})
    targets = programs + ["machine_peak", "fashion_mnist"]
    log("building:", " ".join(targets))
    subprocess.run(["ninja", "-C", bd, *(["-j", str(args.jobs)] if args.jobs else []), *targets],
                   check=True, stdout=sys.stderr)


def python_has(python, modules):
    code = "import " + ", ".join(modules)
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


def find_torch_python(args):
    """--python; else build-bench/torch-venv (created with pip on first use); else Debian's
    python3-torch (apt-get), with a note that it is not the pinned version."""
    if args.python:
        if not python_has(args.python, ["torch", "numpy"]):
            sys.exit(f"compare: {args.python} cannot import torch and numpy")
        return args.python
    venv = args.build_dir / "torch-venv"
    python = venv / "bin" / "python"
    if python.exists() and python_has(python, ["torch", "numpy"]):
        return str(python)
    spec = os.environ.get("EMBER_BENCH_TORCH_SPEC", args.torch_spec).split()
    pip_args = os.environ.get("EMBER_BENCH_PIP_ARGS", "").split()
    log(f"compare: installing {' '.join(spec)} into {venv} (pip; several GB with the CUDA wheels of PyPI;"
        " EMBER_BENCH_PIP_ARGS='--index-url https://download.pytorch.org/whl/cpu' fetches the CPU-only wheel)")
    try:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, stdout=sys.stderr)
        subprocess.run([python, "-m", "pip", "install", *pip_args, *spec], check=True, stdout=sys.stderr)
        return str(python)
    except subprocess.CalledProcessError as e:
        log(f"compare: pip failed ({e}); falling back to Debian's python3-torch (apt-get), an older PyTorch")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run([*sudo, "apt-get", "install", "-y", "python3-torch", "python3-numpy"], stdout=sys.stderr)
    if not python_has("/usr/bin/python3", ["torch", "numpy"]):
        sys.exit("compare: no PyTorch (pip and apt-get both failed); give one with --python")
    return "/usr/bin/python3"


def measure_machine(build_dir, threads):
    out = subprocess.run([build_dir / "bench" / "machine_peak", "--threads", str(threads), "--json"],
                         check=True, capture_output=True, text=True, env=clean_env(threads)).stdout
    return json.loads(out)


def build_libtorch_overhead(build_dir, python, info):
    """bench_overhead.cpp built against the PyTorch package's libtorch (libtorch_overhead.cpp
    includes it), once: by bench/run_libtorch_overhead.sh where it can keep its program
    (EMBER_LIBTORCH_BENCH_BIN), else here. Returns (path, None) or (None, why not)."""
    exe = build_dir / "bench" / "libtorch_overhead"
    sources = [ROOT / "bench" / f for f in ("libtorch_overhead.cpp", "bench_overhead.cpp", "run_libtorch_overhead.sh")]
    if exe.exists() and all(exe.stat().st_mtime > s.stat().st_mtime for s in sources if s.exists()):
        return exe, None
    log("compare: building libtorch_overhead against", info["torch_dir"])
    script = sources[2]
    if script.exists() and "EMBER_LIBTORCH_BENCH_BIN" in script.read_text():
        cmd = ["sh", script, "--python", python, "--benchmark_list_tests=true"]
        env = dict(os.environ, EMBER_LIBTORCH_BENCH_BIN=str(exe))
    else:
        torch_dir = Path(info["torch_dir"])
        cmd = ["c++", "-std=c++17", "-O2", "-DNDEBUG", f"-D_GLIBCXX_USE_CXX11_ABI={int(info['torch_cxx11_abi'])}",
               "-I", torch_dir / "include", "-I", torch_dir / "include" / "torch" / "csrc" / "api" / "include",
               sources[0], "-o", exe, "-L", torch_dir / "lib", f"-Wl,-rpath,{torch_dir / 'lib'}", "-Wl,--no-as-needed",
               "-ltorch", "-ltorch_cpu", "-lc10", "-Wl,--as-needed", "-lbenchmark", "-lpthread"]
        env = None
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not exe.exists():
        log(proc.stderr[-3000:])
        return None, "failed (libtorch_overhead did not build)"
    return exe, None


def binary_report(build_dir):
    """Stripped size of the CPU-only libember.so, and whether it holds AVX-512 code."""
    libs = sorted(p for p in build_dir.glob("libember.so*") if p.is_file() and not p.is_symlink())
    if not libs:
        return {"error": "libember.so not found (static build?)"}
    with tempfile.TemporaryDirectory() as tmp:
        stripped = Path(tmp) / "libember.so"
        subprocess.run(["strip", "-o", stripped, libs[0]], check=True)
        size = stripped.stat().st_size
    # Streamed: the listing is hundreds of MB, and this process's RSS is every child's floor
    # (a child's max RSS counts what it had between fork and exec).
    with subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", libs[0]], stdout=subprocess.PIPE, text=True) as dis:
        zmm = sum("%zmm" in line for line in dis.stdout)
    return {"file": libs[0].name, "stripped_bytes": size, "zmm_instructions": zmm,
            "cpu_avx512f": "avx512f" in cpu_flags(), "gemm_isa": gemm_isa(libs[0])}


def gemm_isa(lib):
    """The GEMM kernel ember picks on this CPU (core/cpu/gemm_isa.h: gemm_isa_name(gemm_isa())),
    asked of the library through ctypes; "unknown" if the library has no such functions."""
    try:
        so = ctypes.CDLL(str(lib))
        isa, name = so._ZN5ember3cpu8gemm_isaEv, so._ZN5ember3cpu13gemm_isa_nameENS0_7GemmIsaE
    except (OSError, AttributeError):
        return "unknown"
    isa.restype, name.restype, name.argtypes = ctypes.c_int, ctypes.c_char_p, [ctypes.c_int]
    return name(isa()).decode()


def ember_baseline_rss_kb(build_dir):
    """Max RSS of a benchmark program that loads libember and runs nothing."""
    exe = next((p for p in sorted((build_dir / "bench").glob("bench_*")) if p.is_file()), None)
    return run_measured([exe, "--benchmark_list_tests=true"], clean_env(1))[3] if exe else 0


def cpu_flags():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return line.split(":", 1)[1].split()
    return []


def machine_description(build_dir):
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    field = lambda key: next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith(key + ":")), "?")
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    cache = (build_dir / "CMakeCache.txt").read_text() if (build_dir / "CMakeCache.txt").exists() else ""
    cxx = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.*)$", cache, re.M)
    cxx = cxx.group(1) if cxx else "c++"
    git = lambda *a: subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True).stdout.strip()
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return {
        "cpu": field("Model name"), "cores": f"{field('CPU(s)')} CPUs, {field('Thread(s) per core')} thread(s) per core",
        "caches": ", ".join(f"{k} {field(k + ' cache')}" for k in ("L1d", "L2", "L3")),
        "flags": " ".join(f for f in cpu_flags() if re.match(r"(avx|fma|f16c|amx)", f)),
        "memory": f"{mem_kb / 2 ** 20:.1f} GiB", "kernel": platform.release(),
        "compiler": subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "commit": git("rev-parse", "--short", "HEAD") + dirty,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


# ---- the table --------------------------------------------------------------------------------

def fmt_time(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def cell(r):
    return fmt_time(r.seconds) if r.error is None else r.error.split()[0].rstrip(":")  # details: notes()


def best_torch(results):
    times = [results[s].seconds for s in ("shipped", "tuned", "openblas") if results[s].seconds]
    return min(times) if times else None


def of_peak(w, seconds, machine):
    if not seconds or not w.amount:
        return ""
    rate = w.amount / seconds
    if w.kind == "flops":
        return f"{rate / 1e9:.0f} GFLOP/s, {100 * rate / (machine['fma_gflops_n'] * 1e9):.0f}% of FMA peak"
    return f"{rate / 1e9:.1f} GB/s, {100 * rate / (machine['triad_gbs_n'] * 1e9):.0f}% of bandwidth"


def mib(kb):
    return f"{kb / 1024:.0f}" if kb else "?"


HEADER = ["workload", "ember", "PyTorch (as shipped)", "PyTorch (tuned malloc)", "OpenBLAS",
          "ember / best", "ember vs machine peak", "max RSS MiB (same order)"]


def table_rows(measured, epoch, machine):
    rows = []
    for w, r in measured:
        best = best_torch(r)
        ratio = f"{r['ember'].seconds / best:.2f}" if r["ember"].seconds and best else "-"
        rss = " / ".join(mib(r[side].maxrss_kb) for side in ("ember", "shipped", "tuned")) if w.rss else ""
        rows.append([w.name, cell(r["ember"]), cell(r["shipped"]), cell(r["tuned"]),
                     cell(r["openblas"]) if w.blas else "", ratio, of_peak(w, r["ember"].seconds, machine), rss])
    if epoch and "error" not in epoch:
        e, s, t = (epoch[k] for k in ("ember", "shipped", "tuned"))
        secs = [x.get("seconds") for x in (s, t) if x.get("seconds")]
        ratio = f"{e['seconds'] / min(secs):.2f}" if e.get("seconds") and secs else "-"
        show = lambda x: fmt_time(x["seconds"]) + f" ({x['accuracy']:.2f}%)" if "seconds" in x else x["error"].split()[0]
        rows.append([EPOCH + " (test acc.)", show(e), show(s), show(t), "", ratio, "",
                     " / ".join(mib(x["maxrss_kb"]) for x in (e, s, t))])
    elif epoch:
        rows.append([EPOCH, epoch["error"], "", "", "", "-", "", ""])
    return rows


def notes(measured):
    """Why a cell says missing or failed, one line each (the epoch's: epoch_lines)."""
    return [f"{w.name}, {side}: {r[side].error}" for w, r in measured for side in SIDES if r[side].error]


def render_text(rows):
    widths = [max(len(str(x)) for x in col) for col in zip(HEADER, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip()
    return "\n".join([line(HEADER), line(["-" * w for w in widths])] + [line(r) for r in rows])


def render_markdown(rows):
    line = lambda r: "| " + " | ".join(str(x) for x in r) + " |"
    return "\n".join([line(HEADER), line(["---"] * len(HEADER))] + [line(r) for r in rows])


def summary_lines(ctx, machine, info, binary, load):
    m = ctx.machine_desc
    lines = [
        f"machine: {m['cpu']}, {m['cores']}; {m['caches']}; {m['memory']}; Linux {m['kernel']}",
        f"cpu flags: {m['flags']}",
        f"ember {m['commit']}, {m['compiler']}, Release, CPU-only ({ctx.build_dir.name})",
        f"measured peaks, {ctx.threads} threads: fp32 FMA {machine['fma_gflops_n']:.0f} GFLOP/s "
        f"({machine['isa']}; {machine['fma_gflops_1']:.0f} with 1 thread), STREAM triad "
        f"{machine['triad_gbs_n']:.1f} GB/s ({machine['triad_gbs_1']:.1f} with 1 thread)",
        f"PyTorch {info['torch']} (python {info['python']}, {info['executable']}), BLAS {info['torch_blas']}: "
        + "; ".join(info["torch_config"]),
        f"numpy {info['numpy']}, BLAS {info['numpy_blas']} {info['numpy_blas_version']} ({info['numpy_blas_config']})",
        f"threads: {ctx.threads} (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, torch.set_num_threads); "
        f"tuned malloc: " + " ".join(f"{k}={v}" for k, v in TUNED_MALLOC.items()),
        f"statistic: median of {ctx.args.rounds} rounds x {ctx.args.repetitions} repetitions, each a timed loop of "
        f">= {ctx.args.min_time} s, wall time; ember and PyTorch interleaved per workload",
        f"date {m['date']}; load average before {load[0]}, after {load[1]}",
        f"max RSS is the whole process's, measured alike on both sides: {mib(ctx.ember_rss_kb)} MiB for an ember "
        f"benchmark program that runs nothing, {mib(info['baseline_rss_kb'])} MiB for Python after `import torch`",
        "overhead rows compare with libtorch in C++ (bench_overhead.cpp built against the same PyTorch)",
    ]
    if binary and "error" not in binary:
        lines.append(f"binary: {binary['file']} stripped {binary['stripped_bytes'] / 2 ** 20:.2f} MiB; "
                     f"{binary['zmm_instructions']} instructions on zmm registers (AVX-512 code, picked at run time); "
                     f"this CPU {'has' if binary['cpu_avx512f'] else 'lacks'} avx512f; GEMM kernel in use: "
                     f"{binary['gemm_isa']}")
    return lines


def write_markdown(path, ctx, rows, lines, measured, epoch):
    text = ["# ember vs PyTorch, side by side", "", f"`bench/compare.py {' '.join(sys.argv[1:])}`", ""]
    text += [f"- {l}" for l in lines] + ["", render_markdown(rows), ""]
    text += [f"- {n}" for n in notes(measured)] + [""]
    if epoch_lines(epoch):
        text += ["Fashion-MNIST, one epoch of the CNN (`--epochs 1 --threads N`, batch 128, AdamW, one-cycle):", ""]
        text += [f"- {l}" for l in epoch_lines(epoch)] + [""]
    Path(path).write_text("\n".join(text))


def epoch_lines(epoch):
    if not epoch or "error" in epoch:
        return []
    return [f"{side}: " + (e.get("error") or f"epoch {e['seconds']:.1f} s (whole process {e['wall']:.1f} s), "
                           f"test accuracy {e['accuracy']:.2f}%, max RSS {mib(e['maxrss_kb'])} MiB")
            for side, e in epoch.items()]


# ---- main ---------------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", type=Path, default=ROOT / "build-bench")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--python", help="a Python with torch and numpy (default: <build-dir>/torch-venv, created)")
    p.add_argument("--torch-spec", default=TORCH_SPEC, help=f"pip requirements (default '{TORCH_SPEC}'; "
                   "or EMBER_BENCH_TORCH_SPEC; EMBER_BENCH_PIP_ARGS adds pip options)")
    p.add_argument("--only", metavar="REGEX", help="workloads whose name matches (re.search)")
    p.add_argument("--quick", action="store_true", help="a small subset, one round, shorter loops, no epoch")
    p.add_argument("--repetitions", type=int, default=3, help="timed loops per round and side (default 3)")
    p.add_argument("--rounds", type=int, default=2, help="ember/PyTorch alternations per workload (default 2)")
    p.add_argument("--min-time", type=float, default=0.2, help="seconds per timed loop (default 0.2)")
    p.add_argument("--markdown", metavar="PATH", help="also write the table and the machine as markdown")
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--no-build", action="store_true", help="use the build directory as it is")
    p.add_argument("--jobs", type=int, help="ninja -j")
    p.add_argument("--cmake-arg", action="append", default=[], help="extra -D option for a new build directory")
    args = p.parse_args()
    args.build_dir = args.build_dir.resolve()
    if args.quick:
        args.rounds, args.min_time, args.repetitions = 1, 0.1, 3
    return args


def selected(args):
    names = [w.name for w in torch_workloads.WORKLOADS] + [EPOCH]
    keep = [n for n in names if (not args.only or re.search(args.only, n))]
    if args.quick:
        quick = {w.name for w in torch_workloads.WORKLOADS if w.quick}
        keep = [n for n in keep if n in quick or (args.only and n == EPOCH)]
    return [torch_workloads.BY_NAME[n] for n in keep if n != EPOCH], EPOCH in keep


class Context:
    pass


def main():
    args = parse_args()
    if not args.no_build:
        build(args)
    ctx = Context()
    ctx.args, ctx.build_dir, ctx.threads = args, args.build_dir, args.threads
    ctx.python = find_torch_python(args)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    workloads, run_epoch = selected(args)
    ctx.workers = {side: TorchWorker(ctx.python, clean_env(args.threads, malloc))
                   for side, malloc in (("shipped", None), ("tuned", TUNED_MALLOC))}
    info = ctx.workers["shipped"].ask(describe=True)
    log(f"PyTorch {info['torch']} ({info['executable']}), BLAS {info['torch_blas']}; numpy {info['numpy']}, "
        f"{info['numpy_blas']} {info['numpy_blas_version']}")
    ctx.libtorch, ctx.libtorch_error = (build_libtorch_overhead(ctx.build_dir, ctx.python, info)
                                        if any(w.torch is None for w in workloads) else (None, None))
    machine = measure_machine(ctx.build_dir, args.threads)
    ctx.ember_rss_kb = ember_baseline_rss_kb(ctx.build_dir)  # before anything grows this process
    log(f"machine peak ({args.threads} threads): FMA {machine['fma_gflops_n']:.0f} GFLOP/s ({machine['isa']}), "
        f"triad {machine['triad_gbs_n']:.1f} GB/s")
    measured = []
    for w in workloads:
        r = measure_workload(w, ctx)
        measured.append((w, r))
        log(f"  {w.name}: ember {cell(r['ember'])}, PyTorch {cell(r['shipped'])} / {cell(r['tuned'])}"
            + (f", OpenBLAS {cell(r['openblas'])}" if w.blas else ""))
    for worker in ctx.workers.values():
        worker.close()
    epoch = fashion_mnist_epoch(ctx) if run_epoch else None
    binary = binary_report(ctx.build_dir)
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    ctx.machine_desc = machine_description(ctx.build_dir)
    rows = table_rows(measured, epoch, machine)
    lines = summary_lines(ctx, machine, info, binary, (load_before, load_after))
    why = notes(measured)
    print("\n".join(lines) + "\n\n" + render_text(rows) + "".join("\n  " + n for n in why + epoch_lines(epoch)))
    if args.markdown:
        write_markdown(args.markdown, ctx, rows, lines, measured, epoch)
        log(f"compare: wrote {args.markdown}")


if __name__ == "__main__":
    main()
