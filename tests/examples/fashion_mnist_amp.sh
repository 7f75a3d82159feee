#!/usr/bin/env bash
# Mixed precision in the Fashion-MNIST trainer on the CPU (issue 7):
#  1. the CNN trained for one epoch on the whole training split with --amp bf16 (autocast)
#     ends within 0.5 points of the float32 run's test accuracy (same seed, data and
#     schedule), measured on all 10000 test images; --eval under the same autocast
#     reproduces the trainer's number;
#  2. --amp fp16 (autocast + GradScaler) trains to a sane accuracy, its checkpoints hold the
#     scaler's state and the amp mode, and stopping after epoch 1 and resuming with --amp fp16
#     ends with weights byte-identical to the uninterrupted run (the scale and its growth
#     tracker continue exactly); resuming with another --amp is refused with a clear message.
#     The fp16 runs train the MLP (quick; the CNN's fp16 epoch is ~150 CPU-s on this CPU).
# Sizes: why 0.5 points can be told apart from noise, and the run time, are in docs/mixed_precision.md
# ("Mixed precision"). Usage: fashion_mnist_amp.sh <path to fashion_mnist binary>.
# Exit 77 (skip) without the data.
set -euo pipefail
bin=$1
source "$(dirname "$0")/trainer_test_common.sh"
# Whether a safetensors file's JSON header (after its 8-byte length) holds a string.
# Not `head | grep -q`: grep -q stops at the first match, head then dies of SIGPIPE, and
# pipefail turns that into a failure whenever the header is longer than one pipe write.
header_has() {
  local LC_ALL=C header
  header=$(head -c 65536 "$1" | LC_ALL=C tr -d '\0')
  [[ $header == *"$2"* ]]
}

# ---- 1. bfloat16 autocast against float32 ----------------------------------------------------
cnn=(--data-dir "$data" --epochs 1 --threads 2 --workers 1 --seed 0)
"$bin" "${cnn[@]}" --out-dir "$tmp/f32" | tee "$tmp/f32.log"
"$bin" "${cnn[@]}" --out-dir "$tmp/bf16" --amp bf16 | tee "$tmp/bf16.log"
grep -q "^cnn on cpu, float32:" "$tmp/f32.log" || fail "the float32 run's header does not say float32"
grep -q "^cnn on cpu, mixed precision bf16 (autocast):" "$tmp/bf16.log" || fail "the bf16 run's header does not say so"
f32=$(test_accuracy "$tmp/f32.log")
bf16=$(test_accuracy "$tmp/bf16.log")
if [ -z "$f32" ] || [ -z "$bf16" ]; then fail "no test accuracy line"; fi
grep -q "on 10000 images\|10000 test images" "$tmp/bf16.log" || fail "the test set is not the whole 10000 images"
awk -v a="$f32" 'BEGIN { exit !(a >= 80) }' || fail "float32 test accuracy $f32% below 80%"
diff=$(awk -v a="$f32" -v b="$bf16" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.2f", d }')
echo "float32 $f32%, bf16 $bf16%: $diff points apart (at most 0.5)"
awk -v d="$diff" 'BEGIN { exit !(d <= 0.5) }' || fail "bf16 accuracy $bf16% is $diff points from float32's $f32%"
header_has "$tmp/bf16/checkpoint_epoch1.safetensors" '"amp":"bf16"' || fail "the bf16 checkpoint does not record --amp bf16"
if header_has "$tmp/bf16/checkpoint_epoch1.safetensors" '"scaler.'; then fail "a bf16 checkpoint holds GradScaler state"; fi

"$bin" --eval "$tmp/bf16/best_model.safetensors" --data-dir "$data" --threads 2 --amp bf16 | tee "$tmp/eval.log"
grep -q "^test accuracy $bf16%" "$tmp/eval.log" || fail "--eval --amp bf16 accuracy differs from the trainer's ($bf16%)"

# ---- 2. float16 autocast with a GradScaler -----------------------------------------------------
mlp=(--data-dir "$data" --model mlp --epochs 2 --limit-train 3000 --limit-test 1000 --batch-size 64 --threads 2
  --workers 2 --amp fp16)
"$bin" "${mlp[@]}" --out-dir "$tmp/fp16" | tee "$tmp/fp16.log"
grep -q "^mlp on cpu, mixed precision fp16 (autocast + GradScaler):" "$tmp/fp16.log" || fail "the fp16 run's header does not say so"
grep -q "GradScaler: scale" "$tmp/fp16.log" || fail "no GradScaler line after the fp16 epochs"
fp16=$(test_accuracy "$tmp/fp16.log")
[ -n "$fp16" ] || fail "no fp16 test accuracy line"
awk -v a="$fp16" 'BEGIN { exit !(a >= 70) }' || fail "fp16 test accuracy $fp16% below 70% after 2 short epochs"
for key in '"scaler.scale"' '"scaler._growth_tracker"' '"ember.has_scaler":"1"' '"amp":"fp16"'; do
  header_has "$tmp/fp16/checkpoint_epoch1.safetensors" "$key" || fail "the fp16 checkpoint lacks $key"
done

# Interrupted after epoch 1, then resumed: the same final weights (and scaler), byte for byte.
"$bin" "${mlp[@]}" --out-dir "$tmp/split" --stop-after 1 > "$tmp/split1.log"
"$bin" "${mlp[@]}" --out-dir "$tmp/split" --resume "$tmp/split/checkpoint_epoch1.safetensors" > "$tmp/split2.log"
cmp "$tmp/fp16/checkpoint_epoch2.safetensors" "$tmp/split/checkpoint_epoch2.safetensors" ||
  fail "the resumed fp16 run's epoch-2 checkpoint differs from the uninterrupted run's"
cmp "$tmp/fp16/best_model.safetensors" "$tmp/split/best_model.safetensors" || fail "fp16 best models differ after resume"

# Resuming with another precision is refused, saying which --amp the checkpoint needs.
if "$bin" "${mlp[@]}" --amp off --out-dir "$tmp/split" --resume "$tmp/split/checkpoint_epoch1.safetensors" \
  > "$tmp/mismatch.log" 2>&1; then
  fail "resuming an fp16 checkpoint with --amp off did not fail"
fi
grep -q "written by a run with --amp fp16, not --amp off" "$tmp/mismatch.log" || { cat "$tmp/mismatch.log"; fail "no clear --amp mismatch message"; }
echo "fashion_mnist amp test passed (float32 $f32%, bf16 $bf16%, fp16 MLP $fp16%)"
