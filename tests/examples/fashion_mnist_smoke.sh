#!/usr/bin/env bash
# A short run of the Fashion-MNIST trainer on a subset of the data, as CI runs it:
#  1. two epochs on 3000 images reach a sane accuracy and leave the run folder complete;
#  2. stopping after epoch 1 and resuming from its checkpoint ends with weights
#     byte-identical to the uninterrupted run (same threads, CPU);
#  3. --eval of the saved best model reproduces the accuracy the trainer printed;
#  4. --tensorboard (on the stopped and resumed runs) leaves event files in PyTorch's layout.
# Usage: fashion_mnist_smoke.sh <path to fashion_mnist binary>. Exit 77 (skip) without data.
set -euo pipefail
bin=$1
source "$(dirname "$0")/trainer_test_common.sh"
common=(--data-dir "$data" --epochs 2 --limit-train 3000 --limit-test 1000 --batch-size 64 --threads 2 --workers 2)

"$bin" "${common[@]}" --out-dir "$tmp/full" | tee "$tmp/full.log"
for f in metrics.csv metrics.svg best_model.safetensors checkpoint_epoch1.safetensors checkpoint_epoch2.safetensors; do
  [ -s "$tmp/full/$f" ] || fail "run folder lacks $f"
done
[ "$(wc -l < "$tmp/full/metrics.csv")" -eq 3 ] || fail "metrics.csv should hold a header and 2 epochs"
grep -q "<svg" "$tmp/full/metrics.svg" || fail "metrics.svg is not an SVG"
acc=$(test_accuracy "$tmp/full.log")
[ -n "$acc" ] || fail "no test accuracy line"
awk -v a="$acc" 'BEGIN { exit !(a >= 70) }' || fail "test accuracy $acc% below 70% after 2 short epochs"

# Interrupted after epoch 1, then resumed: the same final weights, byte for byte.
"$bin" "${common[@]}" --out-dir "$tmp/split" --stop-after 1 --tensorboard "$tmp/tb" > "$tmp/split1.log"
[ ! -e "$tmp/split/checkpoint_epoch2.safetensors" ] || fail "--stop-after 1 ran epoch 2"
"$bin" "${common[@]}" --out-dir "$tmp/split" --resume "$tmp/split/checkpoint_epoch1.safetensors" \
  --tensorboard "$tmp/tb" > "$tmp/split2.log"
cmp "$tmp/full/checkpoint_epoch2.safetensors" "$tmp/split/checkpoint_epoch2.safetensors" ||
  fail "resumed run's epoch-2 checkpoint differs from the uninterrupted run's"
cmp "$tmp/full/best_model.safetensors" "$tmp/split/best_model.safetensors" || fail "best models differ after resume"

# --eval gives the accuracy the trainer printed.
"$bin" --eval "$tmp/full/best_model.safetensors" --data-dir "$data" --limit-test 1000 | tee "$tmp/eval.log"
grep -q "^test accuracy $acc%" "$tmp/eval.log" || fail "--eval accuracy differs from the trainer's ($acc%)"

# A NaN loss stops the run with a clear message.
if "$bin" "${common[@]}" --out-dir "$tmp/nan" --lr 1e9 > "$tmp/nan.log" 2>&1; then fail "--lr 1e9 did not fail"; fi
grep -q "the loss became" "$tmp/nan.log" || { cat "$tmp/nan.log"; fail "no NaN-loss message"; }
# TensorBoard: add_scalars' sub-directories, one event file per run in each (the files' own
# contents are checked by tests/tools/test_summary_writer.cpp).
for d in "" /loss_train /loss_val /accuracy_train /accuracy_val; do
  n=$(find "$tmp/tb$d" -maxdepth 1 -name 'events.out.tfevents.*' | wc -l)
  [ "$n" -eq 2 ] || fail "expected 2 event files in tb$d, found $n"
done
LC_ALL=C grep -a -q "features.0.weight" "$tmp"/tb/events.out.tfevents.* || fail "no weight histogram in the event files"
echo "fashion_mnist smoke test passed (test accuracy $acc%)"
