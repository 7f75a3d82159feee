#!/usr/bin/env bash
# The GPU check's dry run, on a machine without a GPU (CI runs it): the whole bundle -> check ->
# report path, with a fake nvidia-smi that lists an H200, a fake compute-sanitizer that runs the
# program and writes a clean summary, and a python3 whose `torch` sees no GPU. The test binary
# runs its planted cases (tests/cuda/test_gpu_check_dry.cpp: a pass, a failure, a hang, a
# fault) and the trainer stages run on the CPU. Then it checks that the report, the JUnit file
# and the log archive say what happened: each planted outcome under its own name and status,
# the file gone on past the hang and the fault, the failing cases rerun, every stage present
# with its time.
#
# Usage: scripts/gpu_check_dry.sh [BUNDLE]     (default gpu-bundle; make it with scripts/gpu_bundle.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-gpu-bundle}
out=${EMBER_DRY_OUT:-build-gpu-bundle/dry-run-out}
fakes=$(mktemp -d)
trap 'rm -rf "$fakes"' EXIT
rm -rf "$out" "$out-nodevice" && mkdir -p "$out"

cat > "$fakes/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
# Fake nvidia-smi (the GPU check's dry run): one H200.
case "$*" in
  *--query-gpu*) echo "NVIDIA H200 (fake), 580.00.00, 143771 MiB" ;;
  *-q*) printf 'Driver Version : 580.00.00 (fake)\nGPU 00000000:00:00.0\n    Xid Events : None\n' ;;
  *) echo "fake nvidia-smi" ;;
esac
EOF
cat > "$fakes/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
# Fake compute-sanitizer (the GPU check's dry run): runs the program, writes a clean summary.
log=/dev/stderr
while [ $# -gt 0 ]; do
  case $1 in
    --log-file) log=$2; shift 2 ;;
    --tool | --report-api-errors | --error-exitcode | --print-limit) shift 2 ;;
    --*) shift ;;
    *) break ;;
  esac
done
"$@"
rc=$?
echo "========= COMPUTE-SANITIZER (fake)" > "$log"
echo "========= ERROR SUMMARY: 0 errors" >> "$log"
exit $rc
EOF
mkdir -p "$fakes/site/torch"
cat > "$fakes/site/torch/__init__.py" <<'EOF'
"""A stand-in for PyTorch in the GPU check's dry run: importable, and it sees no GPU."""
__version__ = "0.0+dry"


class cuda:  # noqa: N801 - the attribute PyTorch has
    @staticmethod
    def is_available():
        return False
EOF
cat > "$fakes/python3-torch" <<EOF
#!/usr/bin/env bash
PYTHONPATH="$fakes/site" exec python3 "\$@"
EOF
chmod +x "$fakes/nvidia-smi" "$fakes/compute-sanitizer" "$fakes/python3-torch"

echo "== gpu_check --dry (fakes in $fakes) =="
set +e
PATH="$fakes:$PATH" EMBER_TORCH_PYTHON="$fakes/python3-torch" \
  python3 scripts/gpu_check.py --bundle "$bundle" --out "$out" --dry --budget "${EMBER_DRY_BUDGET:-900}" --jobs 2
rc=$?
set -e
echo "== gpu_check exited with $rc (1 expected: the planted failures) =="

python3 - "$out" "$rc" <<'EOF' || exit 1
import os, sys, tarfile, xml.etree.ElementTree as ET
out, rc = sys.argv[1], int(sys.argv[2])
problems = []
def expect(cond, what):
    print(("ok      " if cond else "MISSING ") + what)
    if not cond:
        problems.append(what)
report = open(os.path.join(out, "gpu_check_report.txt")).read()
expect(rc == 1, "the check fails (the planted failure, hang and fault), exit code 1")
for stage in ("setup", "probe", "tests", "memcheck", "racecheck", "bench", "bench (PyTorch)", "trainer fp32",
              "trainer fp16", "trainer bf16", "DDP NCCL"):
    expect(any(line.startswith(stage + " ") for line in report.splitlines()), f"report has the stage '{stage}'")
expect("FAIL     test_gpu_check_dry.cpp: dry: a case that fails, with a message" in report, "the failing case, as FAIL")
expect("planted failure" in report, "the failure's first message")
expect("TIMEOUT  test_gpu_check_dry.cpp: dry: a case that hangs past the per-case timeout" in report,
       "the hang, as TIMEOUT")
expect("FAULT    test_gpu_check_dry.cpp: dry: a case that leaves a device fault" in report, "the fault, as FAULT")
expect("rerun with CUDA_LAUNCH_BLOCKING=1 EMBER_CUDA_SYNC_CHECK=1: FAIL" in report, "the failing cases rerun")
suites = ET.parse(os.path.join(out, "gpu_check_junit.xml")).getroot()
cases = {c.get("name"): c for c in suites.iter("testcase")}
expect(len(cases) == 6, f"JUnit has the 6 planted cases (has {len(cases)})")
passed = [n for n, c in cases.items() if len(c) == 0]
expect(sorted(passed) == ["dry: a case after the fault", "dry: a case after the hang", "dry: a case that passes"],
       "the cases after the hang and the fault ran and passed (the file went on without the case that stopped it)")
expect(cases.get("dry: a case that fails, with a message") is not None and
       cases["dry: a case that fails, with a message"].find("failure") is not None, "JUnit: the failure")
expect(all(cases.get(n) is not None and cases[n].find("error") is not None for n in
           ("dry: a case that hangs past the per-case timeout", "dry: a case that leaves a device fault")),
       "JUnit: the timeout and the fault as errors")
with tarfile.open(os.path.join(out, "gpu_check_logs.tar.xz")) as tar:
    names = tar.getnames()
for want in ("gpu_check_logs/nvidia-smi-q.txt", "gpu_check_logs/ldd.txt", "gpu_check_logs/probe.txt",
             "gpu_check_logs/gpu_check_junit.xml", "gpu_check_logs/bench_cuda.json",
             "gpu_check_logs/memcheck/test_softmax.sanitizer.txt", "gpu_check_logs/trainer_fp32.log"):
    expect(want in names, f"the log archive has {want}")
expect(len(os.listdir(out)) <= 8, "at most 8 files in the output folder")
expect("every carried program loads (ldd -r)" in report, "ldd -r: every carried program loads here")
expect("CPU reference - this: 0.00 points" in report, "the dry float32 epoch repeats the bundle's CPU reference")
print()
print("dry run: " + ("all checks hold" if not problems else f"{len(problems)} checks FAILED"))
sys.exit(1 if problems else 0)
EOF

# A GPU that nvidia-smi lists but CUDA cannot use (a driver, runtime or container fault): the
# check without --dry must say so in the probe and the tests, not report a time box.
echo "== gpu_check without --dry: nvidia-smi lists a GPU, CUDA sees none =="
set +e
PATH="$fakes:$PATH" python3 scripts/gpu_check.py --bundle "$bundle" --out "$out-nodevice" --budget 200 --jobs 2 \
  > "$out-nodevice.log" 2>&1
rc=$?
set -e
report=$out-nodevice/gpu_check_report.txt
if [ $rc = 1 ] && grep -q '^probe .*FAIL.*CUDA reports no usable device' "$report" &&
  grep -q '^tests .*FAIL.*the test binary saw NO usable CUDA device' "$report"; then
  echo "ok      a listed but unusable GPU fails the probe and the tests, saying why"
else
  echo "MISSING a listed but unusable GPU fails the probe and the tests, saying why (rc $rc; $report)"
  exit 1
fi
