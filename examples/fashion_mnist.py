#!/usr/bin/env python3
"""The Fashion-MNIST model of examples/fashion_mnist.cpp, in PyTorch: shows weights moving both ways.

  python3 examples/fashion_mnist.py --eval runs/fmnist/best_model.safetensors
      loads weights trained by ember's trainer and prints their test accuracy in PyTorch
      (it matches the accuracy the ember trainer printed).
  python3 examples/fashion_mnist.py --train --out-dir runs/torch
      trains the same model with the same defaults in PyTorch and writes
      runs/torch/best_model.safetensors, which `build/examples/fashion_mnist --eval PATH` reads.
  python3 examples/fashion_mnist.py --train --epochs 1 --threads 2
      also a side-by-side timing of one epoch against ember's trainer.

Needs torch and safetensors (pip install safetensors); reads the IDX files itself (no
torchvision). Parameter and buffer names are PyTorch's, which ember's state_dict reproduces.
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
from torch import nn
from safetensors.torch import load_file, save_file


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(data_dir, train):
    prefix = "train" if train else "t10k"
    def find(name):
        for candidate in (name, name + ".gz"):
            path = os.path.join(data_dir, candidate)
            if os.path.exists(path):
                return path
        sys.exit(f"missing {name}[.gz] in {data_dir}")
    images = read_idx(find(f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte"))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    x = (x - MEAN) / STD
    return x, torch.from_numpy(labels.astype(np.int64))


# The same normalisation constants as the C++ trainer (Fashion-MNIST train-set statistics).
MEAN, STD = 0.2860, 0.3530


def make_model(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                             nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    model = nn.Module()
    model.features = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))
    model.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128),
                                     nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))
    model.forward = lambda x: model.classifier(model.features(x))
    return model


def accuracy(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    p.add_argument("--eval", metavar="PATH", help="evaluate a safetensors state dict on the test set")
    p.add_argument("--train", action="store_true", help="train the model in PyTorch")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    p.add_argument("--out-dir", default="runs/torch")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = make_model(args.model)
    x_test, y_test = load_split(args.data_dir, train=False)

    if args.eval:
        state = load_file(args.eval)
        model.load_state_dict(state, strict=True)
        print(f"test accuracy {accuracy(model, x_test, y_test) * 100:.2f}% ({args.eval}, PyTorch {torch.__version__})")
        return
    if not args.train:
        p.error("give --eval PATH or --train")

    x, y = load_split(args.data_dir, train=True)
    g = torch.Generator().manual_seed(args.seed)
    perm = torch.randperm(len(x), generator=g)
    val_idx, train_idx = perm[:5000], perm[5000:]
    x_val, y_val, x_tr, y_tr = x[val_idx], y[val_idx], x[train_idx], y[train_idx]
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * (len(x_tr) // args.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps)
    loss_fn = nn.CrossEntropyLoss()
    os.makedirs(args.out_dir, exist_ok=True)
    best = -1.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        t0 = time.time()
        order = torch.randperm(len(x_tr), generator=g)
        total, correct, seen = 0.0, 0, 0
        for i in range(0, len(order) - args.batch_size + 1, args.batch_size):
            idx = order[i:i + args.batch_size]
            out = model(x_tr[idx])
            loss = loss_fn(out, y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            correct += (out.argmax(1) == y_tr[idx]).sum().item()
            seen += len(idx)
        secs = time.time() - t0  # the training pass alone, as the C++ trainer reports it
        val = accuracy(model, x_val, y_val)
        print(f"epoch {epoch}: train loss {total / seen:.4f} acc {correct / seen * 100:.2f}% | "
              f"val acc {val * 100:.2f}% | {secs:.1f} s ({seen / secs:.0f} samples/s)")
        if val > best:
            best = val
            save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                      os.path.join(args.out_dir, "best_model.safetensors"))
    model.load_state_dict(load_file(os.path.join(args.out_dir, "best_model.safetensors")))
    print(f"test accuracy {accuracy(model, x_test, y_test) * 100:.2f}%")


if __name__ == "__main__":
    main()
