# Sourced by the trainer's test scripts (fashion_mnist_smoke.sh, _amp.sh, _dist.sh): the
# data check (exit 77, ctest's skip, without Fashion-MNIST), a scratch folder removed on exit,
# and the helpers both use.
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$data/train-images-idx3-ubyte.gz" ] && [ ! -e "$data/train-images-idx3-ubyte" ]; then
  echo "skipping: no Fashion-MNIST in $data (Debian package dataset-fashion-mnist)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
# The number of the trainer's "test accuracy 88.90% ..." line in a log.
test_accuracy() { sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' "$1"; }
