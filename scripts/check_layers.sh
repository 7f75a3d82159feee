#!/usr/bin/env bash
# Checks DESIGN's include rules by grep (CI runs it first; it takes a second):
#   - the layers' arrows: core includes none of nn, optim, data, dist, tools; autograd none of
#     nn, optim, data, dist; nn none of optim, data, dist; optim none of data, dist; cuda none of
#     autograd, nn, optim, data; data none of nn, optim, dist, autograd;
#   - CUDA's own headers (the runtime, cuBLAS, cuDNN, NCCL, ...) only in cuda/ and dist/, and in
#     bench/bench_cuda.cpp (its copy ceiling calls cudaMemcpyAsync directly, on purpose);
#   - EMBER_HOST_DEVICE defined once, in core/host_device.h;
#   - examples/ include only ember's public umbrella headers: <ember/ember.h>, and
#     <ember/dist/dist.h> for distributed programs (kept apart as libtorch keeps c10d apart).
# The includes that break a rule today are listed below as PENDING, each with the change that
# removes it; the check fails on any other, so the list can only shrink. Remove a line from
# PENDING when its include goes (the check also fails on a PENDING line that no longer occurs).
set -euo pipefail
cd "$(dirname "$0")/.."

# file:included header — an include that breaks a rule while the change that removes it is
# under way, with that change named. Empty: every rule holds.
PENDING=()
RULES=(
  "core:nn optim data dist tools"
  "autograd:nn optim data dist"
  "nn:optim data dist"
  "optim:data dist"
  "cuda:autograd nn optim data"
  "data:nn optim dist autograd"
)

found=()
for rule in "${RULES[@]}"; do
  layer=${rule%%:*}
  for banned in ${rule#*:}; do
    while IFS= read -r hit; do
      [ -n "$hit" ] || continue
      file=${hit%%:*}
      header=$(sed -E 's/.*#include [<"](ember\/)?([^>"]+)[>"].*/\2/' <<< "${hit#*:}")
      found+=("$file:$header")
    done < <(grep -rE --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' \
      "^#include [<\"](ember/)?$banned/" "$layer" || true)
  done
done

cuda_headers='^#include <(cuda_runtime[a-z_]*\.h|cuda\.h|cuda_fp16\.h|cuda_bf16\.h|cublas[A-Za-z_]*\.h|cudnn[a-z_]*\.h|nccl\.h|curand[a-z_]*\.h|cub/|thrust/|nvrtc\.h)'
while IFS= read -r file; do
  [ -n "$file" ] || continue
  case $file in cuda/* | dist/* | bench/bench_cuda.cpp) ;; *) found+=("$file:a CUDA toolkit header") ;; esac
done < <(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh' | xargs grep -lE "$cuda_headers" || true)

while IFS= read -r file; do
  [ -n "$file" ] || continue
  [ "$file" = core/host_device.h ] || found+=("$file:its own EMBER_HOST_DEVICE (include core/host_device.h)")
done < <(git ls-files | xargs grep -lE '^#\s*define EMBER_HOST_DEVICE' || true)

while IFS= read -r hit; do
  [ -n "$hit" ] || continue
  found+=("${hit%%:*}:${hit#*:} (examples include <ember/ember.h>)")
done < <(git ls-files 'examples/*.cpp' 'examples/*.h' | xargs grep -HE '^#include [<"]ember/' |
  grep -vE ':#include [<"]ember/(ember|dist/dist)\.h[>"]' || true)

# in_list NEEDLE ITEMS...: whether NEEDLE is one of ITEMS.
in_list() {
  local needle=$1 item
  shift
  for item in "$@"; do [ "$needle" = "$item" ] && return 0; done
  return 1
}
status=0
for f in "${found[@]}"; do
  in_list "$f" "${PENDING[@]}" || { echo "check_layers: $f breaks DESIGN's include rules (see this script's header)"; status=1; }
done
for p in "${PENDING[@]}"; do
  in_list "$p" "${found[@]}" || { echo "check_layers: $p no longer occurs: remove it from PENDING"; status=1; }
done
if [ $status = 0 ]; then
  echo "check_layers: the include rules hold (${#PENDING[@]} pending exceptions, listed in scripts/check_layers.sh)"
else
  echo "check_layers: FAILED (above)"
fi
exit $status
