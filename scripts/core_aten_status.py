#!/usr/bin/env python3
"""Writes docs/core_aten.md: PyTorch's Core ATen opset (the ops tagged `core` in PyTorch's
native_functions.yaml, the set torch.export programs are lowered to) with, for each op, the
ember function that computes it, or a dash.

Needs PyTorch (the list comes from the installed torch's operator tags); ember's side is read
from its headers: the public functions of core/ops/*.h, the Tensor methods of core/tensor.h and
the nn::functional functions. An op counts as covered when ember has a function of the op's
name, or of the name in ALIASES (PyTorch's internal spellings of the public functions).
`*_backward` ops are covered by ember's autograd when their forward is.

Usage: python3 scripts/core_aten_status.py [--out docs/core_aten.md]
"""
import argparse
import glob
import os
import re

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Core ATen name -> the ember function that computes it (PyTorch's internal or legacy names).
ALIASES = {
    "_adaptive_avg_pool2d": "adaptive_avg_pool2d",
    "_adaptive_avg_pool3d": "adaptive_avg_pool3d",
    "_log_softmax": "log_softmax",
    "_softmax": "softmax",
    "_to_copy": "to",
    "_unsafe_view": "view",
    "_local_scalar_dense": "item",
    "_native_batch_norm_legit": "batch_norm",
    "_native_batch_norm_legit_no_training": "batch_norm",
    "native_batch_norm": "batch_norm",
    "native_layer_norm": "layer_norm",
    "native_group_norm": "group_norm",
    "native_dropout": "dropout",
    "convolution": "conv2d",
    "max_pool2d_with_indices": "max_pool2d",
    "max_pool3d_with_indices": "max_pool3d",
    "_cdist_forward": "cdist",
    "_pdist_forward": "pdist",
    "_embedding_bag": "embedding_bag",
    "alias": "alias",
    "arange": "arange",
    "empty_strided": "empty_strided",
    "full": "full",
    "full_like": "full_like",
    "scalar_tensor": "scalar_tensor",
    "sym_size": "size",
    "sym_numel": "numel",
    "sym_storage_offset": "storage_offset",
    "sym_stride": "stride",
    "upsample_bilinear2d": "interpolate",
    "upsample_nearest2d": "interpolate",
    "constant_pad_nd": "pad",
    "reflection_pad1d": "pad",
    "reflection_pad2d": "pad",
    "reflection_pad3d": "pad",
    "replication_pad2d": "pad",
    "replication_pad3d": "pad",
    "scatter_reduce": "scatter_reduce",
    "sum": "sum",
    "var": "var",
    "gelu": "gelu",
    "hardtanh": "hardtanh",
    "leaky_relu": "leaky_relu",
    "bitwise_not": "bitwise_not",
    "logical_not": "logical_not",
    "where": "where",
}


def core_aten_ops():
    """(name, overload, schema) of every op tagged core, sorted."""
    ops = []
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name, None)
        if not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if torch.Tag.core in op.tags:
                ops.append((name, overload, str(op._schema)))
    return sorted(ops)


def ember_names():
    """The names of ember's public functions, Tensor methods and nn::functional functions."""
    names = set()
    decl = re.compile(r"^\s*(?:inline\s+|static\s+|friend\s+)*[\w:<>,&\s*]+?[\s&*](\w+)\(", re.M)
    files = glob.glob(os.path.join(ROOT, "core/ops/*.h")) + [os.path.join(ROOT, "core/tensor.h")]
    files += glob.glob(os.path.join(ROOT, "nn/functional/*.h"))
    for path in files:
        text = re.sub(r"//.*", "", open(path).read())
        names.update(decl.findall(text))
    return names


def status(name, have):
    if name in have:  # a backward ember exposes as a function of its own (embedding_dense_backward)
        return f"`{name}`"
    if name.endswith("_backward"):
        forward = ALIASES.get(name[: -len("_backward")], name[: -len("_backward")].lstrip("_"))
        return f"autograd of `{forward}`" if forward in have else "—"
    target = ALIASES.get(name, name)
    return f"`{target}`" if target in have else "—"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "docs/core_aten.md"))
    args = parser.parse_args()
    have = ember_names()
    ops = core_aten_ops()
    rows, covered = [], 0
    for name, overload, schema in ops:
        s = status(name, have)
        covered += s != "—"
        rows.append(f"| `aten.{name}.{overload}` | {s} |")
    with open(args.out, "w") as f:
        f.write("# PyTorch's Core ATen opset in ember\n\n[← back to the README](../README.md)\n\n")
        f.write(
            "The ops PyTorch tags `core` (torch " + torch.__version__.split("+")[0] + "): the set "
            "`torch.export` programs are lowered to, and the set the libtorch-surface and export work "
            "aim to cover. For each, the ember function that computes it (by name; PyTorch's internal "
            "spellings such as `_softmax` or `native_layer_norm` map to their public functions), or a "
            "dash. Written by `scripts/core_aten_status.py` from the installed torch and ember's "
            "headers; rerun it after adding ops.\n\n"
        )
        f.write(f"Covered: {covered} of {len(ops)} overloads.\n\n| Core ATen op | ember |\n|---|---|\n")
        f.write("\n".join(rows) + "\n")
    print(f"{args.out}: {covered} of {len(ops)} core ATen overloads covered")


if __name__ == "__main__":
    main()
