#!/usr/bin/env python3
"""Two steps of scripts/gpu_bundle.sh that are easier in Python.

  gpu_bundle.py data SRC DST N_TRAIN N_TEST
      writes the first N_TRAIN training and N_TEST test images (and labels) of the Fashion-MNIST
      IDX files in SRC (gzip'd or not) to DST, gzip'd, under the same names
  gpu_bundle.py manifest BUNDLE --commit C --cmake FLAGS --built-against FILE --nccl-built V
                         --cpu-accuracy A --cpu-seconds S --cpu-args ARGS
      writes BUNDLE/manifest.json: the build, the versions it was built against, every file's
      size and the CPU reference accuracy the GPU check compares its GPU epochs with
"""
import argparse
import gzip
import json
import os
import platform
import struct
import sys
import time

FILES = {  # name stem -> (is train, bytes per item after the header, header length)
    "train-images-idx3-ubyte": (True, 28 * 28, 16),
    "train-labels-idx1-ubyte": (True, 1, 8),
    "t10k-images-idx3-ubyte": (False, 28 * 28, 16),
    "t10k-labels-idx1-ubyte": (False, 1, 8),
}


def read_idx(folder, stem):
    for name, opener in ((stem + ".gz", gzip.open), (stem, open)):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with opener(path, "rb") as f:
                return f.read()
    raise FileNotFoundError(f"{stem}(.gz) not in {folder}")


def subset_data(src, dst, n_train, n_test):
    os.makedirs(dst, exist_ok=True)
    for stem, (train, item, header) in FILES.items():
        data = read_idx(src, stem)
        n = n_train if train else n_test
        count = struct.unpack(">I", data[4:8])[0]
        if n > count:
            sys.exit(f"gpu_bundle: {stem} has {count} items, fewer than the {n} asked for")
        head = data[:4] + struct.pack(">I", n) + data[8:header]
        with gzip.GzipFile(os.path.join(dst, stem + ".gz"), "wb", compresslevel=9, mtime=0) as f:
            f.write(head + data[header:header + n * item])
    print(f"Fashion-MNIST subset: {n_train} training and {n_test} test images in {dst}")


def built_against(path):
    """ember_gpu_probe --built-against's "what: value" lines as a dict."""
    out = {}
    with open(path) as f:
        for line in f:
            what, _, value = line.partition(":")
            if value.strip():
                out[what.strip()] = value.strip()
    return out


def manifest(args):
    files = {}
    for root, _, names in os.walk(args.bundle):
        for n in names:
            p = os.path.join(root, n)
            if not os.path.islink(p):
                files[os.path.relpath(p, args.bundle)] = os.path.getsize(p)
    versions = built_against(args.built_against)
    versions["built against NCCL"] = args.nccl_built
    m = {
        "commit": args.commit,
        "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "build machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores",
        "cmake": args.cmake,
        "versions": versions,
        "cpu_reference": {
            "accuracy": float(args.cpu_accuracy),
            "seconds": float(args.cpu_seconds),
            "trainer args": args.cpu_args,
            "data": "data/fashion-mnist (15000 training images, of which 5000 validation, and 2000 test images)",
        },
        "total bytes": sum(files.values()),
        "files": dict(sorted(files.items(), key=lambda kv: -kv[1])),
    }
    with open(os.path.join(args.bundle, "manifest.json"), "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "data":
        if len(sys.argv) != 6:
            sys.exit(__doc__)
        subset_data(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["manifest"])
    ap.add_argument("bundle")
    for opt in ("--commit", "--cmake", "--built-against", "--nccl-built", "--cpu-accuracy", "--cpu-seconds",
                "--cpu-args"):
        ap.add_argument(opt, required=True)
    manifest(ap.parse_args())


if __name__ == "__main__":
    main()
