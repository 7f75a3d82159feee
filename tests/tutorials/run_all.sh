#!/usr/bin/env bash
# Runs every tutorial program built in <build dir> briefly, in a scratch directory; the MNIST-format
# ones read <dataset dir> (CI: Fashion-MNIST from Debian's dataset-fashion-mnist).
# Usage: tests/tutorials/run_all.sh <build dir> <dataset dir>
set -euo pipefail
build=$(cd "$1" && pwd)
data=$(cd "$2" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
run() { echo "== $1"; "$build/$@"; }
run autograd
run custom_dataset
run lstm_language_model
run resnet_cifar
run mnist "$data" 150
run dcgan "$data" 8
run vae "$data" 30
