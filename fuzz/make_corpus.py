#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer targets into fuzz/corpus/<target>/ (committed; run
this again only to change them). Seeds are small valid inputs, so the fuzzers start from the
formats' structure instead of having to discover it. Standard library only."""
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, raw bytes) -> safetensors file bytes."""
    header, offset, data = {}, 0, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def f64(*v):
    return struct.pack("<%dd" % len(v), *v)


def i64(*v):
    return struct.pack("<%dq" % len(v), *v)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def safetensors_seeds():
    write("fuzz_safetensors", "f32_2x2", safetensors([("w", "F32", [2, 2], f32(1, 2, 3, 4))]))
    write("fuzz_safetensors", "every_dtype", safetensors([
        ("a", "F64", [1], f64(0.5)), ("b", "F16", [2], b"\x00\x3c\x00\xc0"), ("c", "BF16", [1], b"\x80\x3f"),
        ("d", "I64", [], i64(-3)), ("e", "I32", [1], struct.pack("<i", 7)), ("f", "I16", [1], b"\x01\x00"),
        ("g", "I8", [2], b"\x01\xff"), ("h", "U8", [3], b"\x00\x80\xff"), ("i", "BOOL", [2], b"\x00\x01")]))
    write("fuzz_safetensors", "metadata_and_empty", safetensors(
        [("empty", "F32", [0, 3], b""), ("x", "I64", [1, 1], i64(42))], {"format": "pt", "k\u00e9y": "v"}))


def idx_seeds():
    labels = struct.pack(">II", 2049, 4) + bytes([0, 9, 3, 7])
    image = struct.pack(">IIII", 2051, 1, 28, 28) + bytes(random.Random(1).randrange(256) for _ in range(784))
    write("fuzz_idx", "labels", b"\x00" + labels)
    write("fuzz_idx", "image", b"\x01" + image)
    write("fuzz_idx", "labels_empty", b"\x00" + struct.pack(">II", 2049, 0))


def model_state(prefix=""):
    """The state dict of fuzz_state_dict's model: Linear(3, 4) then BatchNorm1d(4)."""
    return [(prefix + "0.weight", "F32", [4, 3], f32(*[0.1 * i for i in range(12)])),
            (prefix + "0.bias", "F32", [4], f32(1, -1, 0.5, 0)),
            (prefix + "1.weight", "F32", [4], f32(1, 1, 1, 1)),
            (prefix + "1.bias", "F32", [4], f32(0, 0, 0, 0)),
            (prefix + "1.running_mean", "F32", [4], f32(0.5, 0, 0, -2)),
            (prefix + "1.running_var", "F32", [4], f32(1, 2, 3, 4)),
            (prefix + "1.num_batches_tracked", "I64", [], i64(5))]


def state_dict_seeds():
    # The first byte picks the load path (fuzz_state_dict.cpp): 0 strict load, 1 non-strict,
    # 2 load_checkpoint, 3 load_checkpoint with a StepLR, 4 load_checkpoint_model.
    write("fuzz_state_dict", "strict", b"\x00" + safetensors(model_state(), {"format": "pt"}))
    write("fuzz_state_dict", "partial", b"\x01" + safetensors(model_state()[:3]))
    sgd = [("optimizer.param_groups.0.%s" % k, "F64", [], f64(v))
           for k, v in [("lr", 0.1), ("momentum", 0.9), ("dampening", 0), ("weight_decay", 0), ("nesterov", 0)]]
    sgd.append(("optimizer.param_groups.0.params", "I64", [4], i64(0, 1, 2, 3)))
    sgd.append(("optimizer.state.0.momentum_buffer", "F32", [4, 3], f32(*[0.01] * 12)))
    rng = [("rng.cpu", "U8", [16], struct.pack("<QQ", 1234, 64))]
    meta = {"ember.checkpoint": "1", "ember.epoch": "2", "ember.step": "10", "ember.best_metric": "nan",
            "ember.has_scheduler": "0", "ember.has_scaler": "0"}
    ckpt = safetensors(model_state("model.") + sgd + rng, meta)
    write("fuzz_state_dict", "checkpoint", b"\x02" + ckpt)
    write("fuzz_state_dict", "checkpoint_model", b"\x04" + ckpt)
    sched = [("scheduler.last_epoch", "I64", [], i64(4)), ("scheduler._step_count", "I64", [], i64(5)),
             ("scheduler.base_lrs.0", "F64", [], f64(0.1)), ("scheduler._last_lr.0", "F64", [], f64(0.05))]
    write("fuzz_state_dict", "checkpoint_scheduler",
          b"\x03" + safetensors(model_state("model.") + sgd + sched + rng, dict(meta, **{"ember.has_scheduler": "1"})))
    # Past findings, kept as seeds so every run replays them: last_epoch as a float64 NaN (an
    # undefined double -> int64 cast in LRScheduler::load_state_dict), num_batches_tracked
    # as a float64 1e300 (the same in copy_).
    nan_epoch = [(k, "F64", [], f64(float("nan"))) if k == "scheduler.last_epoch" else (k, d, s, r)
                 for k, d, s, r in sched]
    write("fuzz_state_dict", "finding_nan_last_epoch",
          b"\x03" + safetensors(model_state("model.") + sgd + nan_epoch + rng, dict(meta, **{"ember.has_scheduler": "1"})))
    huge_count = [(k, "F64", [], f64(1e300)) if k.endswith("num_batches_tracked") else (k, d, s, r)
                  for k, d, s, r in model_state()]
    write("fuzz_state_dict", "finding_huge_num_batches_tracked", b"\x00" + safetensors(huge_count))


def archive_seeds():
    # Archives as ember's samplers and LBFGS write them (core/archive.h: 0-dim int64 counts,
    # 1-d int64 orders, the optimizer's flat state dict).
    def count(k, v):
        return (k, "I64", [], i64(v))

    def order(k, *v):
        return (k, "I64", [len(v)], i64(*v))

    write("fuzz_archive", "sequential", safetensors([count("index", 4), count("size", 10)]))
    write("fuzz_archive", "random", safetensors([count("index", 3), order("indices", 3, 1, 4, 0, 5, 9, 2, 6, 8, 7),
                                                 count("seed", 7), count("epoch", 2)]))
    write("fuzz_archive", "batch", safetensors([count("sampler.index", 4), count("sampler.size", 10)]))
    write("fuzz_archive", "stream", safetensors([count("examples_retrieved_so_far", 4), count("epoch_size", 10)]))
    write("fuzz_archive", "distributed_random", safetensors([count("sample_index_", 8), count("epoch_", 3)]))
    write("fuzz_archive", "distributed", safetensors([count("index", 1), order("indices", 1, 3, 5, 7, 9),
                                                      count("epoch", 1)]))
    opts = [("param_groups.0." + k, "F64", [], f64(v)) for k, v in
            [("lr", 0.5), ("max_iter", 3), ("max_eval", 3), ("tolerance_grad", 1e-7), ("tolerance_change", 1e-9),
             ("history_size", 2), ("line_search_fn", 0)]]
    state = [count("state.0.func_evals", 3), count("state.0.n_iter", 2), ("state.0.t", "F64", [], f64(0.5)),
             ("state.0.prev_loss", "F64", [], f64(1.5)), ("state.0.d", "F32", [3], f32(-1, -1, -1)),
             ("state.0.H_diag", "F32", [], f32(0.5)), ("state.0.prev_flat_grad", "F32", [3], f32(2, 2, 2)),
             ("state.0.old_dirs.0", "F32", [3], f32(1, 1, 1)), ("state.0.old_stps.0", "F32", [3], f32(0.5, 0.5, 0.5)),
             ("state.0.ro.0", "F32", [], f32(0.6))]
    write("fuzz_archive", "lbfgs", safetensors(state + opts + [order("param_groups.0.params", 0)]))


def ops_seeds():
    rnd = random.Random(7)
    for i in range(6):
        write("fuzz_ops", "random_%d" % i, bytes(rnd.randrange(256) for _ in range(48 + 32 * i)))


if __name__ == "__main__":
    safetensors_seeds()
    idx_seeds()
    state_dict_seeds()
    archive_seeds()
    ops_seeds()
