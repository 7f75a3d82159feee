#!/usr/bin/env python3
"""The GPU check: the whole CUDA verdict on ember in one short call on a GPU machine.

It runs the prebuilt bundle (scripts/gpu_bundle.sh, made on a machine without a GPU) and
compiles nothing unless a carried program cannot load there. Stages, most information per
second first, each time-boxed, the report rewritten after each:

  setup      the bundle's manifest; CUDA's libraries found (toolkit, system, pip packages);
             `ldd -r` of every carried program (a missing library: build the CUDA targets here)
  probe      driver, runtime, cuBLAS, cuDNN, NCCL as loaded; SMs, memory, shared-memory opt-in;
             one elementwise kernel, one cuBLAS GEMM, one cuDNN convolution against the CPU
  tests      every CUDA test case, one process per test file, several at once, a per-case
             timeout; a fault or a timeout ends the process and the file goes on without that
             case; failing cases rerun once with CUDA_LAUNCH_BLOCKING=1 EMBER_CUDA_SYNC_CHECK=1
  memcheck   compute-sanitizer memcheck on the tests of ember's own kernels, racecheck on
  racecheck  attention, softmax and the norms
  bench      bench_cuda, one repetition, beside PyTorch's numbers for the same workloads
  trainer    one epoch of the Fashion-MNIST trainer on the bundle's subset in float32,
             --amp fp16 and --amp bf16, against the CPU epoch's accuracy in the manifest; then
             DistributedDataParallel over NCCL at world size 1
  after      nvidia-smi -q (Xid, ECC, clocks)

Everything comes back in OUT (the device tool's $OUT): gpu_check_report.txt (the summary:
each failing test with its first message, FAIL / FAULT / TIMEOUT / CRASH told apart),
gpu_check_junit.xml, and gpu_check_logs.tar.xz (every log whole, sanitizer logs, benchmark JSON).

  scripts/gpu_check.sh --bundle DIR [--out DIR] [--budget SECONDS] [--jobs N] [--dry]

--dry (scripts/gpu_check_dry.sh): the same path on a machine without a GPU, with fake
nvidia-smi and compute-sanitizer on PATH: the test binary runs its planted cases
(tests/cuda/test_gpu_check_dry.cpp), the trainer stages run on the CPU.
Exit status: 0 when every stage passed, 1 otherwise, 2 for bad arguments or a bundle too large.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

# Seconds each stage may take at most: together 6 minutes, so that a fix and a second call on a
# fresh machine still fit the 15 minutes a GPU machine is lent for. A stage that ends early
# leaves its time to the next ones (Check.limit).
CAPS = {"setup": 10, "probe": 15, "tests": 110, "memcheck": 60, "racecheck": 25, "bench": 40, "bench (PyTorch)": 35,
        "trainer fp32": 13, "trainer fp16": 13, "trainer bf16": 13, "DDP NCCL": 16}
MAX_BUNDLE_MIB = 48
# Files whose cases watch timing (streams kept busy, a watchdog) or take much of the GPU's
# memory: run one at a time, before the others run in parallel.
SOLO_FILES = ("test_process_group_nccl.cpp", "test_runtime.cpp", "test_big_tensors.cpp")
# The tests of ember's own kernels, for compute-sanitizer (cuBLAS' and cuDNN's are not ours).
MEMCHECK_FILES = ("test_unary.cpp", "test_binary.cpp", "test_activation.cpp", "test_compare.cpp",
                  "test_ternary.cpp", "test_reduce.cpp", "test_softmax.cpp", "test_normalization.cpp",
                  "test_index.cpp", "test_scatter.cpp", "test_loss.cpp", "test_optim.cpp",
                  "test_attention_kernels.cpp")
RACECHECK_FILES = ("test_attention_kernels.cpp", "test_softmax.cpp", "test_normalization.cpp")
ACCURACY_POINTS = 3.0  # one epoch on 10000 images: devices differ in dropout masks and sums
EXIT_FAULT, EXIT_TIMEOUT, EXIT_SKIP = 87, 88, 77
PROGRAMS = ("ember_cuda_tests", "ember_gpu_probe", "bench_cuda", "fashion_mnist", "ember-run")


def run(cmd, log, limit, env=None, cwd=None):
    """Runs cmd with output to `log` for at most `limit` seconds (its whole process group is
    stopped then). Returns (exit code, seconds, timed out); 127 when cmd cannot start."""
    t0 = time.monotonic()
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        try:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            out.write(f"cannot start: {e}\n".encode())
            return 127, 0.0, False
        try:
            rc = p.wait(timeout=max(1.0, limit))
            return rc, time.monotonic() - t0, False
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    continue
            out.write(f"\n[gpu_check] stopped at its time limit of {limit:.0f} s\n".encode())
            return 124, time.monotonic() - t0, True


def tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Case:
    """One test case's outcome. status: pass, FAIL, FAULT, TIMEOUT, CRASH, NOT RUN."""

    def __init__(self, file, name):
        self.file, self.name = file, name
        self.status, self.seconds, self.message, self.rerun = "NOT RUN", 0.0, "", ""


class Check:
    def __init__(self, args):
        self.args = args
        self.dry = args.dry
        self.bundle = os.path.abspath(args.bundle)
        self.out = os.path.abspath(args.out)
        self.work = os.path.join(self.out, "work")  # scratch, not sent back (only the tar is)
        self.logs = os.path.join(self.work, "logs")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.logs)
        self.report = os.path.join(self.out, "gpu_check_report.txt")
        self.t0 = time.monotonic()
        self.deadline = self.t0 + args.budget
        self.scale = args.budget / sum(CAPS.values())
        self.stages, self.header, self.sections = [], [], []
        self.cases = []
        self.process_problems = []  # test processes that died outside any case, or before one
        self.no_device = False  # a test process found no usable CUDA device
        self.env = dict(os.environ)
        self.bin = {p: os.path.join(self.bundle, "bin", p) for p in PROGRAMS}
        self.manifest = {}
        self.have_gpu = False
        self.cuda_acc = None

    # ---- time and the report ---------------------------------------------------------------------
    def elapsed(self):
        return time.monotonic() - self.t0

    def say(self, msg):
        print(f"[gpu_check {self.elapsed():4.0f}s] {msg}", flush=True)

    def limit(self, stage):
        """A stage's seconds: its cap, or more while the later stages' caps stay covered."""
        names = list(CAPS)
        later = sum(CAPS[n] for n in names[names.index(stage) + 1:]) * self.scale
        left = self.deadline - time.monotonic()
        return max(0.0, min(left, max(CAPS[stage] * self.scale, left - later)))

    def record(self, name, status, secs, note):
        self.stages.append((name, status, secs, note))
        self.say(f"{name}: {status} ({secs:.0f} s) {note}")
        self.write_report()

    def write_report(self):
        overall = "FAIL" if any(s[1] in ("FAIL", "TIMEOUT") for s in self.stages) else "PASS"
        lines = [f"ember GPU check: {overall}{' (DRY RUN: no GPU, fakes on PATH)' if self.dry else ''}"
                 f"    ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {self.elapsed():.0f} s of a "
                 f"{self.args.budget:.0f} s budget)"]
        lines += self.header + ["", f"{'stage':<18} {'status':<8} {'time':>6}  details", "-" * 100]
        lines += [f"{n:<18} {st:<8} {s:5.0f}s  {note}" for n, st, s, note in self.stages]
        lines += ["", "status: ok = passed, FAIL = failed, TIMEOUT = stopped at its time limit, skip = not run (why in"
                  " details)", "all logs: gpu_check_logs.tar.xz; every test case: gpu_check_junit.xml"]
        lines += self.failing_tests_section()
        for title, body in self.sections:
            lines += ["", f"==== {title} ====", body.rstrip()]
        tmp = self.report + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, self.report)

    def failing_tests_section(self):
        bad = [c for c in self.cases if c.status not in ("pass", "NOT RUN")]
        not_run = [c for c in self.cases if c.status == "NOT RUN"]
        if not self.cases:
            return []
        counts = {}
        for c in self.cases:
            counts[c.status] = counts.get(c.status, 0) + 1
        out = ["", "CUDA test cases: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
        if bad:
            out.append("failing cases (FAIL: an assertion or exception; FAULT: a sticky CUDA error after the case; "
                       "TIMEOUT: past the per-case limit; CRASH: the process died in it), with the first message:")
            for c in bad:
                out.append(f"  {c.status:<8} {c.file}: {c.name}")
                out.append(f"           {c.message[:400]}")
                if c.rerun:
                    out.append(f"           rerun with CUDA_LAUNCH_BLOCKING=1 EMBER_CUDA_SYNC_CHECK=1: {c.rerun[:400]}")
        for p in self.process_problems:
            out.append(f"  process: {p[:400]}")
        if not_run:
            files = sorted({c.file for c in not_run})
            why = sorted({c.message or "the stage's time box ended" for c in not_run})
            out.append(f"not run: {len(not_run)} cases in {', '.join(files[:8])}{' ...' if len(files) > 8 else ''}"
                       f" ({'; '.join(why)})")
        return out

    # ---- setup: the bundle, CUDA's libraries, ldd -r ------------------------------------------------
    def setup(self):
        t0 = time.monotonic()
        try:
            with open(os.path.join(self.bundle, "manifest.json")) as f:
                self.manifest = json.load(f)
        except (OSError, ValueError) as e:
            self.record("setup", "FAIL", time.monotonic() - t0, f"no readable manifest.json in {self.bundle}: {e}")
            return False
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(self.bundle, "**"), recursive=True)
                   if os.path.isfile(p) and not os.path.islink(p))
        v = self.manifest.get("versions", {})
        self.header.append(f"bundle: commit {self.manifest.get('commit', '?')[:12]}, built "
                           f"{self.manifest.get('built', '?')}, {size / 2**20:.1f} MiB; built against CUDA "
                           f"{v.get('built against CUDA runtime', '?')}, cuBLAS {v.get('built against cuBLAS', '?')}, "
                           f"cuDNN {v.get('built against cuDNN', '?')}, NCCL {v.get('built against NCCL', '?')}")
        if size > MAX_BUNDLE_MIB * 2**20:
            self.record("setup", "FAIL", time.monotonic() - t0, f"the bundle is {size / 2**20:.1f} MiB, over "
                        f"{MAX_BUNDLE_MIB} MiB")
            return False
        gpus = self.capture(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
        self.have_gpu = bool(gpus.strip())
        self.header.insert(0, f"GPU: {gpus.strip() or 'none (nvidia-smi lists no GPU)'}")
        self.env.setdefault("NCCL_SOCKET_IFNAME", "lo")  # no network there: NCCL's bootstrap on loopback
        self.env.setdefault("NCCL_DEBUG", "WARN")
        inherited = [p for p in self.env.get("LD_LIBRARY_PATH", "").split(":") if p]
        # The toolkit's libraries first; where they are older than those ember was built against
        # (a symbol ldd -r cannot find), pip's (PyTorch's, usually newer) first.
        for pip_first in (False, True):
            lib_dirs, missing = self.find_cuda_libraries(pip_first)
            self.env["LD_LIBRARY_PATH"] = ":".join([os.path.join(self.bundle, "lib")] + lib_dirs + inherited)
            problems = self.ldd_problems()
            if not problems:
                break
        note = f"CUDA libraries from {', '.join(lib_dirs) or 'the loader default'}"
        if missing:
            note += f"; not found: {', '.join(missing)}"
        if problems:
            self.sections.append(("ldd -r of the carried programs", "\n".join(problems)))
            note += f"; {len(problems)} ldd problems: building the CUDA targets here"
            self.record("setup", "ok", time.monotonic() - t0, note)
            return self.fallback_build()
        self.record("setup", "ok", time.monotonic() - t0, note + "; every carried program loads (ldd -r)")
        return True

    def capture(self, cmd, timeout=30, env=None):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""

    def find_cuda_libraries(self, pip_first=False):
        """Folders holding cuBLAS, cuDNN and NCCL of the CUDA major ember was built against:
        the toolkit, the system, or pip's nvidia packages (PyTorch's)."""
        major = str(self.manifest.get("versions", {}).get("built against CUDA runtime", "13.0")).split(".")[0]
        wanted = [f"libcublas.so.{major}", f"libcublasLt.so.{major}", "libcudnn.so.9", "libnccl.so.2"]
        system = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/lib",
                  "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64"]
        pip = []
        for sp in sys.path:
            pip += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib")))
        roots = pip + system if pip_first else system + pip
        dirs, missing = [], []
        for lib in wanted:
            hit = next((r for r in roots if os.path.exists(os.path.join(r, lib))), None)
            if hit is None:
                missing.append(lib)
            elif hit not in dirs:
                dirs.append(hit)
        return dirs, missing

    def ldd_problems(self):
        problems = []
        files = [self.bin[p] for p in PROGRAMS] + glob.glob(os.path.join(self.bundle, "lib", "libember.so*"))
        for f in files:
            if not os.path.exists(f):
                problems.append(f"{f}: missing from the bundle")
                continue
            text = self.capture(["ldd", "-r", f], env=self.env)
            problems += [f"{os.path.basename(f)}: {line.strip()}" for line in text.splitlines()
                         if "not found" in line or "undefined symbol" in line]
        with open(os.path.join(self.logs, "ldd.txt"), "w") as log:
            for f in files:
                log.write(f"$ ldd -r {f}\n{self.capture(['ldd', '-r', f], env=self.env)}\n")
        return problems

    def fallback_build(self):
        """The carried programs cannot load here: configure and build the CUDA targets alone."""
        t0 = time.monotonic()
        build = os.path.join(self.work, "build")
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        deps = os.path.join(self.bundle, "deps", "usr")
        log = os.path.join(self.logs, "fallback_build.log")
        cfg = ["cmake", "-S", repo, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DEMBER_CUDA=ON",
               "-DEMBER_CUDA_ARCHS=90-real", "-DEMBER_CUDA_LINEINFO=ON", "-DEMBER_TENSORBOARD=OFF",
               "-DCMAKE_DISABLE_FIND_PACKAGE_Gloo=ON", f"-DCMAKE_PREFIX_PATH={deps}"]
        rc, _, _ = run(cfg, log, 120, env=self.pip_cuda_env())
        targets = ["ember", "ember_cuda_tests", "ember_gpu_probe", "bench_cuda", "fashion_mnist", "ember-run"]
        if rc == 0:
            rc, _, _ = run(["cmake", "--build", build, "-j", str(os.cpu_count()), "--target", *targets], log,
                           max(60.0, self.deadline - time.monotonic() - 120), env=self.env)
        self.sections.append(("fallback build", tail(log, 60)))
        if rc != 0:
            self.record("fallback build", "FAIL", time.monotonic() - t0, f"rc {rc} (log in the tar)")
            return False
        self.bin = {"ember_cuda_tests": f"{build}/tests/cuda/ember_cuda_tests",
                    "ember_gpu_probe": f"{build}/tests/cuda/ember_gpu_probe", "bench_cuda": f"{build}/bench/bench_cuda",
                    "fashion_mnist": f"{build}/examples/fashion_mnist", "ember-run": f"{build}/ember-run"}
        self.env["LD_LIBRARY_PATH"] = build + ":" + self.env["LD_LIBRARY_PATH"]
        self.record("fallback build", "ok", time.monotonic() - t0, "built the CUDA targets here")
        return True

    def pip_cuda_env(self):
        """The environment for configuring a build against pip's cuDNN and NCCL (PyTorch's) when
        the toolkit has neither: CMakeLists.txt reads CUDNN_INCLUDE_DIR / CUDNN_LIBRARY_DIR and
        NCCL_ROOT; pip ships only libnccl.so.2, so NCCL_ROOT is a prefix with the plain name."""
        env = dict(self.env)
        for sp in sys.path:
            cudnn, nccl = os.path.join(sp, "nvidia", "cudnn"), os.path.join(sp, "nvidia", "nccl")
            if not os.path.exists("/usr/local/cuda/include/cudnn.h") and os.path.exists(f"{cudnn}/include/cudnn.h"):
                env.update(CUDNN_INCLUDE_DIR=f"{cudnn}/include", CUDNN_LIBRARY_DIR=f"{cudnn}/lib")
            if not os.path.exists("/usr/local/cuda/include/nccl.h") and os.path.exists(f"{nccl}/include/nccl.h"):
                prefix = os.path.join(self.work, "nccl-prefix")
                os.makedirs(os.path.join(prefix, "lib"), exist_ok=True)
                if not os.path.lexists(os.path.join(prefix, "include")):
                    os.symlink(f"{nccl}/include", os.path.join(prefix, "include"))
                    os.symlink(f"{nccl}/lib/libnccl.so.2", os.path.join(prefix, "lib", "libnccl.so"))
                env["NCCL_ROOT"] = prefix
        return env

    # ---- probe ------------------------------------------------------------------------------------
    def probe(self):
        log = os.path.join(self.logs, "probe.txt")
        rc, secs, timed_out = run([self.bin["ember_gpu_probe"]], log, self.limit("probe"), env=self.env)
        text = tail(log, 80)
        self.sections.append(("probe", text))
        loaded = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in text.splitlines()) if v}
        if "cuBLAS loaded" in loaded:
            self.header.append(f"loaded: driver CUDA {loaded.get('driver supports CUDA', '?')}, cuBLAS "
                               f"{loaded.get('cuBLAS loaded', '?')}, cuDNN {loaded.get('cuDNN loaded', '?')}, NCCL "
                               f"{loaded.get('NCCL loaded', '?')}; {loaded.get('multiprocessors', '?')} SMs, "
                               f"shared memory opt-in {loaded.get('shared memory per block (opt-in)', '?')}")
        status = "TIMEOUT" if timed_out else {0: "ok", EXIT_SKIP: "skip"}.get(rc, "FAIL")
        if rc == EXIT_SKIP and self.dry:
            status = "ok"  # no GPU here, as expected
        elif rc == EXIT_SKIP and self.have_gpu:
            status = "FAIL"  # nvidia-smi lists one, CUDA sees none: driver, runtime or container
        last = [line for line in text.splitlines() if line.startswith("probe")]
        note = "; ".join(s.strip() for s in last[-4:]) or f"rc {rc}"
        if rc == EXIT_SKIP:
            note = "no GPU" if self.dry else "nvidia-smi lists a GPU, but CUDA reports no usable device (exit 77)"
        self.record("probe", status, secs, note)

    # ---- tests ------------------------------------------------------------------------------------
    def test_env(self, extra):
        env = dict(self.env)
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 2) // self.args.jobs))
        if self.dry:
            env["EMBER_GPU_CHECK_DRY"] = "1"
        env.update(extra)
        return env

    def list_cases(self):
        log = os.path.join(self.logs, "cases.xml")
        with open(log, "w") as f:
            subprocess.run([self.bin["ember_cuda_tests"], "--list-test-cases", "--reporters=xml"], stdout=f,
                           stderr=subprocess.DEVNULL, env=self.test_env({}), timeout=60)
        root = ET.parse(log).getroot()
        return [Case(os.path.basename(c.get("filename")), c.get("name")) for c in root.iter("TestCase")]

    def run_file(self, file, cases, deadline, tag, extra_env=None, only=None):
        """Runs the cases of one test file, going on past a fault, timeout or crash without the
        case that stopped the process. Fills each Case; returns the logs written."""
        stem = file.rsplit(".", 1)[0]
        base = os.path.join(self.logs, "tests", f"{stem}{tag}")
        results, exclude = base + ".results", base + ".exclude"
        for p in (results, exclude):
            open(p, "w").close()
        by_name = {c.name: c for c in cases}
        done = set()
        timeout = 3 if self.dry else 30
        for attempt in range(8):
            left = deadline - time.monotonic()
            if left < 2 or len(done) == len(cases):
                break
            done_before = len(done)
            with open(exclude, "w") as f:
                f.write("".join(n + "\n" for n in sorted(done)))
            env = self.test_env({"EMBER_TEST_RESULTS": results, "EMBER_TEST_EXCLUDE": exclude,
                                 "EMBER_TEST_CASE_TIMEOUT": str(timeout), **(extra_env or {})})
            cmd = [self.bin["ember_cuda_tests"], f"--source-file=*{file}"]
            if only:
                cmd.append("--test-case=" + ",".join(n.replace("\\", "\\\\").replace(",", "\\,") for n in only))
            rc, _, timed_out = run(cmd, base + ".log", left, env=env)
            started = None
            for line in open(results, errors="replace"):
                parts = line.rstrip("\n").split("\t")
                if len(parts) < 5 or parts[3] not in by_name:
                    continue
                event, secs, _, name, msg = parts[:5]
                c = by_name[name]
                if event == "start":
                    started = name
                    continue
                c.seconds = float(secs)
                c.status = {"pass": "pass", "fail": "FAIL", "fault": "FAULT", "timeout": "TIMEOUT"}[event]
                c.message = msg or c.message
                done.add(name)
                started = None if started == name else started
            if started is not None and started not in done:  # the process died inside this case
                c = by_name[started]
                c.status = "TIMEOUT" if timed_out else "CRASH"
                c.message = (f"the file's time box ended in this case" if timed_out else
                             f"the process ended with {'signal ' + str(-rc) if rc < 0 else 'exit code ' + str(rc)} "
                             f"in this case; last lines: " + " | ".join(tail(base + ".log", 4).splitlines()))
                done.add(started)
            open(results, "w").close()
            if rc not in (0, 1, EXIT_SKIP, EXIT_FAULT, EXIT_TIMEOUT) and not timed_out:
                self.process_problems.append(f"{file}{tag}: the process ended with "
                                             f"{'signal ' + str(-rc) if rc < 0 else 'exit code ' + str(rc)}; last "
                                             f"lines: " + " | ".join(tail(base + ".log", 3).splitlines()))
            if rc == EXIT_SKIP:
                for c in cases:
                    if c.name not in done:
                        c.message = "not run: the test binary saw no usable CUDA device (exit 77)"
                self.no_device = True
            if rc in (0, 1, EXIT_SKIP) or timed_out:
                break  # the process ran to its end (or out of time): nothing left to go on with
            if len(done) == done_before:  # no case finished: it dies before the first one
                for c in cases:
                    if c.name not in done:
                        c.status, c.message = "CRASH", f"the process never reached this case (rc {rc})"
                break
        return base

    def tests(self):
        t0 = time.monotonic()
        os.makedirs(os.path.join(self.logs, "tests"), exist_ok=True)
        try:
            self.cases = self.list_cases()
        except (OSError, ET.ParseError, subprocess.TimeoutExpired) as e:
            self.record("tests", "FAIL", time.monotonic() - t0, f"cannot list the test cases: {e}")
            return
        if not self.have_gpu and not self.dry:
            self.record("tests", "skip", 0, "no GPU")
            return
        deadline = time.monotonic() + self.limit("tests")
        files = {}
        for c in self.cases:
            files.setdefault(c.file, []).append(c)
        solo = [f for f in files if f in SOLO_FILES]
        pooled = [f for f in files if f not in SOLO_FILES]
        for f in solo:
            self.run_file(f, files[f], deadline, "")
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            list(pool.map(lambda f: self.run_file(f, files[f], deadline, ""), pooled))
        # One rerun of what failed, each case pinned to its kernel where a fault is involved.
        for f, cs in files.items():
            again = [c for c in cs if c.status in ("FAIL", "FAULT", "CRASH")]
            if not again or time.monotonic() > deadline - 5:
                continue
            rerun = [Case(c.file, c.name) for c in again]
            self.run_file(f, rerun, deadline, ".rerun", {"CUDA_LAUNCH_BLOCKING": "1", "EMBER_CUDA_SYNC_CHECK": "1"},
                          only=[c.name for c in again])
            for c, r in zip(again, rerun):
                c.rerun = f"{r.status}: {r.message}" if r.status != "pass" else "passed"
        self.write_junit()
        n = len(self.cases)
        bad = sum(c.status not in ("pass", "NOT RUN") for c in self.cases)
        not_run = sum(c.status == "NOT RUN" for c in self.cases)
        status = "ok" if bad == 0 and not_run == 0 else ("TIMEOUT" if bad == 0 else "FAIL")
        if self.process_problems or self.no_device:
            status = "FAIL"
        self.record("tests", status, time.monotonic() - t0,
                    f"{n - bad - not_run} of {n} cases passed in {len(files)} files ({self.args.jobs} processes at "
                    f"once); {bad} failing, {not_run} not run (list below)"
                    + ("; the test binary saw NO usable CUDA device" if self.no_device else ""))

    def write_junit(self):
        by_file = {}
        for c in self.cases:
            by_file.setdefault(c.file, []).append(c)
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
        for f, cs in by_file.items():
            fails = sum(c.status == "FAIL" for c in cs)
            errors = sum(c.status in ("FAULT", "TIMEOUT", "CRASH") for c in cs)
            skipped = sum(c.status == "NOT RUN" for c in cs)
            lines.append(f"  <testsuite name={quoteattr(f)} tests=\"{len(cs)}\" failures=\"{fails}\" "
                         f"errors=\"{errors}\" skipped=\"{skipped}\">")
            for c in cs:
                lines.append(f"    <testcase classname={quoteattr(f)} name={quoteattr(c.name)} time=\"{c.seconds:.3f}\">")
                msg = c.message + (f" (rerun: {c.rerun})" if c.rerun else "")
                if c.status == "FAIL":
                    lines.append(f"      <failure message={quoteattr(msg)}/>")
                elif c.status in ("FAULT", "TIMEOUT", "CRASH"):
                    lines.append(f"      <error type={quoteattr(c.status)} message={quoteattr(msg)}/>")
                elif c.status == "NOT RUN":
                    lines.append(f"      <skipped message={quoteattr(c.message or 'not run: the stage time box ended')}/>")
                lines.append("    </testcase>")
            lines.append("  </testsuite>")
        lines.append("</testsuites>")
        with open(os.path.join(self.out, "gpu_check_junit.xml"), "w") as f:
            f.write("\n".join(lines) + "\n")

    # ---- compute-sanitizer ------------------------------------------------------------------------------
    def sanitizer(self, stage, tool, files):
        t0 = time.monotonic()
        exe = shutil.which("compute-sanitizer", path=self.env.get("PATH")) or next(
            iter(glob.glob("/usr/local/cuda*/bin/compute-sanitizer")), None)
        # The dry run has only the planted cases: it runs the files anyway (they match none)
        # to go through the sanitizer's command line and its log.
        present = sorted(files) if self.dry else sorted({c.file for c in self.cases} & set(files))
        if exe is None or not present or (not self.have_gpu and not self.dry):
            why = "compute-sanitizer not found" if exe is None else "no GPU" if present else "no such test files"
            self.record(stage, "skip", 0, why)
            return
        deadline = time.monotonic() + self.limit(stage)
        folder = os.path.join(self.logs, stage)
        os.makedirs(folder, exist_ok=True)

        def one(file):
            stem = file.rsplit(".", 1)[0]
            san_log = os.path.join(folder, f"{stem}.sanitizer.txt")
            cmd = [exe, "--tool", tool, "--report-api-errors", "no", "--log-file", san_log, "--error-exitcode", "86",
                   "--print-limit", "20", self.bin["ember_cuda_tests"], f"--source-file=*{file}"]
            # The allocator cache off: an access past a tensor's end cannot land in a cached neighbour.
            env = self.test_env({"EMBER_NO_ALLOCATOR_CACHE": "1"})
            rc, _, timed_out = run(cmd, os.path.join(folder, f"{stem}.log"), deadline - time.monotonic(), env=env)
            text = tail(san_log, 400)
            m = re.findall(r"ERROR SUMMARY: (\d+) error", text)
            errors = int(m[-1]) if m else None
            first = next((line for line in text.splitlines() if re.match(r"=+ (Invalid|Race|Error|Uninit)", line)), "")
            return file, rc, timed_out, errors, first

        with concurrent.futures.ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            results = list(pool.map(one, present))
        lines, status, total = [], "ok", 0
        for file, rc, timed_out, errors, first in results:
            total += errors or 0
            state = "TIMEOUT" if timed_out else ("no summary" if errors is None else f"{errors} errors")
            lines.append(f"{file:<30} rc {rc:<4} {state}  {first}")
            if errors:
                status = "FAIL"
            elif timed_out and status == "ok":
                status = "TIMEOUT"
            elif rc not in (0, EXIT_SKIP) and not timed_out:
                status = "FAIL"
        self.sections.append((f"compute-sanitizer {tool}", "\n".join(lines)))
        done = sum(not r[2] for r in results)
        self.record(stage, status, time.monotonic() - t0, f"{total} errors; {done} of {len(present)} files ran to the "
                    f"end (EMBER_NO_ALLOCATOR_CACHE=1, --report-api-errors no)")

    # ---- benchmarks -------------------------------------------------------------------------------
    def bench(self):
        t0 = time.monotonic()
        log, js = os.path.join(self.logs, "bench_cuda.log"), os.path.join(self.logs, "bench_cuda.json")
        if not self.have_gpu and not self.dry:
            self.record("bench", "skip", 0, "no GPU")
            return
        rc, secs, timed_out = run([self.bin["bench_cuda"], "--benchmark_repetitions=1", "--benchmark_min_time=0.05",
                                   f"--benchmark_out={js}", "--benchmark_out_format=json"], log, self.limit("bench"),
                                  env=self.env)
        errors = len(set(re.findall(r"^(\S+).*ERROR OCCURRED", open(log, errors="replace").read(), re.M)))
        status = "TIMEOUT" if timed_out else ("ok" if rc == 0 and (errors == 0 or self.dry) else "FAIL")
        self.record("bench", status, secs, f"{errors} benchmarks with errors{' (no GPU: expected)' if self.dry else ''}")
        t0 = time.monotonic()
        py = self.env.get("EMBER_TORCH_PYTHON", "python3")
        tlog = os.path.join(self.logs, "bench_torch.log")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_bench_torch.py")
        env = dict(os.environ, PYTHONUNBUFFERED="1")  # PyTorch loads its own CUDA libraries
        args = [py, script, "--iters", "5", "--json", os.path.join(self.logs, "bench_torch.json")]
        if os.path.exists(js):
            args += ["--ember-json", js]
        rc, secs, timed_out = run(args, tlog, self.limit("bench (PyTorch)"), env=env)
        text = open(tlog, errors="replace").read()
        table = text[text.find("CUDA benchmarks: "):] if "CUDA benchmarks: " in text else tail(tlog, 30)
        self.sections.append(("CUDA benchmarks: ember beside PyTorch", table))
        status = "TIMEOUT" if timed_out else {0: "ok", EXIT_SKIP: "skip"}.get(rc, "FAIL")
        info = next((line for line in text.splitlines() if line.startswith("ember: bench/bench_cuda;")), "")
        self.record("bench (PyTorch)", status, time.monotonic() - t0, info.replace("ember: bench/bench_cuda; ", "")
                    or f"rc {rc}")

    # ---- the trainer ------------------------------------------------------------------------------
    def trainer(self, name, extra, reference, label, launcher=False):
        t0 = time.monotonic()
        if not self.have_gpu and not self.dry:
            self.record(name, "skip", 0, "no GPU")
            return None
        device = "cpu" if self.dry else "cuda"
        data = os.path.join(self.bundle, "data", "fashion-mnist")
        out_dir = os.path.join(self.work, "trainer-" + name.replace(" ", "-"))
        cmd = [self.bin["fashion_mnist"], "--epochs", "1", "--seed", "0", "--workers", "2", "--device", device,
               "--data-dir", data, "--out-dir", out_dir] + extra
        if launcher:
            cmd = [self.bin["ember-run"], "--nproc-per-node", "1", "--standalone"] + cmd
        log = os.path.join(self.logs, name.replace(" ", "_") + ".log")
        rc, secs, timed_out = run(cmd, log, self.limit(name), env=self.env)
        text = open(log, errors="replace").read()
        acc = re.findall(r"^(?:\[default0\]:)?test accuracy ([0-9.]+)%", text, re.M)
        acc = float(acc[-1]) if acc else None
        epoch = re.findall(r"^(?:\[default0\]:)?epoch 1/1 .*\| ([0-9.]+) s$", text, re.M)
        self.sections.append((f"trainer: {name}", tail(log, 25)))
        status = "TIMEOUT" if timed_out else ("ok" if rc == 0 and acc is not None else "FAIL")
        note = f"test accuracy {acc if acc is not None else '?'}%, epoch {epoch[-1] if epoch else '?'} s"
        if acc is not None and reference is not None:
            gap = abs(acc - reference)
            note += f"; {label}: {gap:.2f} points (at most {ACCURACY_POINTS:g})"
            if gap > ACCURACY_POINTS:
                status = "FAIL"
        if rc != 0:
            # The trainer's own last words (under the launcher, its "[default0]:" lines).
            lines = [line.strip() for line in text.splitlines() if line.strip().strip("=-") and not line.startswith("$ ")]
            last = [line for line in lines if line.startswith("[default0]:")] if launcher else lines
            last = last or lines
            note += f"; rc {rc}: {last[-1][:160] if last else 'no output'}"
        self.record(name, status, secs, note)
        return acc

    def trainers(self):
        cpu = self.manifest.get("cpu_reference", {}).get("accuracy")
        self.cuda_acc = self.trainer("trainer fp32", [], cpu, "CPU reference - this")
        self.trainer("trainer fp16", ["--amp", "fp16"], cpu, "CPU reference - this")
        self.trainer("trainer bf16", ["--amp", "bf16"], cpu, "CPU reference - this")
        # DDP over NCCL at world size 1, last (a hung communicator costs only this stage).
        self.trainer("DDP NCCL", [] if self.dry else ["--dist", "nccl"], self.cuda_acc, "float32 epoch - this",
                     launcher=True)

    # ---- after: the GPU's state, the tar ------------------------------------------------------------
    def finish(self):
        with open(os.path.join(self.logs, "nvidia-smi-q.txt"), "w") as f:
            f.write(self.capture(["nvidia-smi", "-q"], timeout=30) or "(nvidia-smi -q gave nothing)\n")
        smi = open(os.path.join(self.logs, "nvidia-smi-q.txt"), errors="replace").read()
        xid = [line.strip() for line in smi.splitlines() if re.search(r"Xid|Retired|Pending Page|Uncorr", line)]
        self.sections.append(("nvidia-smi -q after the run (Xid, ECC, retired pages)", "\n".join(xid[:20]) or "-"))
        shutil.copy(self.report, os.path.join(self.logs, "gpu_check_report.txt"))
        junit = os.path.join(self.out, "gpu_check_junit.xml")
        if os.path.exists(junit):
            shutil.copy(junit, self.logs)
        with tarfile.open(os.path.join(self.out, "gpu_check_logs.tar.xz"), "w:xz") as tar:
            tar.add(self.logs, arcname="gpu_check_logs")
        self.say(f"done in {self.elapsed():.0f} s; report {self.report}")
        self.write_report()
        shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default="gpu-bundle", help="the folder scripts/gpu_bundle.sh made")
    ap.add_argument("--out", default=os.environ.get("OUT") or "gpu-check-out", help="where the report goes ($OUT)")
    ap.add_argument("--budget", type=float, default=sum(CAPS.values()), help="seconds for the whole check")
    ap.add_argument("--jobs", type=int, default=4, help="test processes at once")
    ap.add_argument("--dry", action="store_true", help="no GPU: fakes on PATH (scripts/gpu_check_dry.sh)")
    args = ap.parse_args()
    if not os.path.isdir(args.bundle):
        print(f"gpu_check: no bundle folder {args.bundle} (make one with scripts/gpu_bundle.sh)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    check = Check(args)
    check.say(f"ember GPU check: bundle {check.bundle}, report {check.report}")
    if check.setup():
        check.probe()
        check.tests()
        check.sanitizer("memcheck", "memcheck", MEMCHECK_FILES)
        check.sanitizer("racecheck", "racecheck", RACECHECK_FILES)
        check.bench()
        check.trainers()
    check.finish()
    with open(check.report) as f:
        print(f.read().split("\n==== ")[0])
    return 0 if all(s[1] in ("ok", "skip") for s in check.stages) else 1


if __name__ == "__main__":
    sys.exit(main())
