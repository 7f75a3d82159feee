#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU: runs the bundle that scripts/gpu_bundle.sh
# built on a machine without one, and writes the whole CUDA verdict (report, JUnit XML, every
# log) to $OUT. The work is scripts/gpu_check.py's; see its --help for the stages and options.
#
#   scripts/gpu_check.sh --bundle gpu-bundle [--out DIR] [--budget SECONDS] [--jobs N]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
exec python3 scripts/gpu_check.py "$@"
