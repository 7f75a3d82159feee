#!/usr/bin/env python3
"""The character-level GPT of examples/char_gpt.cpp, in PyTorch: the same model (module names,
so the two read each other's safetensors files), the same batches (splitmix64 of seed, stream,
index and row — not an RNG, so both sides draw the same offsets), the same AdamW parameter
groups, warmup + cosine LambdaLR and gradient clipping.

Given the initial weights ember wrote (`char_gpt --save-init init.safetensors ...`) and dropout
0, it prints the same loss curve as `char_gpt --init init.safetensors ...`:

    build/examples/char_gpt --data t.txt --n-layer 2 --n-embd 64 --save-init /tmp/init.safetensors
    python3 examples/char_gpt.py --data t.txt --n-layer 2 --n-embd 64 --init /tmp/init.safetensors \
        --losses /tmp/torch_losses.csv

Needs torch and safetensors, not ember. Options mirror char_gpt's (training ones only).
"""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file

MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def get_batch(data, seed, stream, index, batch, block):
    span = data.numel() - block - 1
    starts = []
    for r in range(batch):
        key = splitmix64(seed ^ splitmix64(((stream << 62) ^ (index << 20) ^ r) & MASK64))
        starts.append(key % span)
    x = torch.stack([data[s:s + block] for s in starts])
    y = torch.stack([data[s + 1:s + 1 + block] for s in starts])
    return x, y


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head, self.dropout = n_head, dropout
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        return self.resid_dropout(self.proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class Mlp(nn.Module):
    def __init__(self, n_embd, dropout):
        super().__init__()
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.proj = nn.Linear(4 * n_embd, n_embd)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = Mlp(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self, vocab, block, n_layer, n_head, n_embd, dropout):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, n_embd)
        self.pos_emb = nn.Embedding(block, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(n_embd, n_head, dropout) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def read_text(path):
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path)
                       if os.path.isfile(os.path.join(path, n)) and not os.path.islink(os.path.join(path, n))
                       and not n.endswith((".dat", ".u8")))
        return b"".join(open(os.path.join(path, n), "rb").read() for n in names)
    return open(path, "rb").read()


def lr_factor(it, a):
    if it < a.warmup:
        return (it + 1) / (a.warmup + 1)
    floor = a.min_lr / a.lr
    if it >= a.max_iters:
        return floor
    progress = (it - a.warmup) / max(1, a.max_iters - a.warmup)
    return floor + 0.5 * (1 - floor) * (1 + math.cos(math.pi * progress))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="/usr/share/games/fortunes")
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--max-iters", type=int, default=2000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--init", required=True, help="initial weights (char_gpt --save-init)")
    p.add_argument("--losses", help="write every step's training loss (CSV)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)

    text = read_text(a.data)
    vocab = sorted(set(text))
    id_of = {b: i for i, b in enumerate(vocab)}
    data = torch.tensor([id_of[b] for b in text], dtype=torch.long)
    n_train = len(text) * 9 // 10
    train = data[:n_train]

    model = Gpt(len(vocab), a.block_size, a.n_layer, a.n_head, a.n_embd, 0.0)
    model.load_state_dict(load_file(a.init))
    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda it: lr_factor(it, a))
    out = open(a.losses, "w") if a.losses else None
    model.train()
    for step in range(a.max_iters):
        opt.zero_grad()
        step_loss = 0.0
        for micro in range(a.grad_accum):
            x, y = get_batch(train, a.seed, 0, step * a.grad_accum + micro, a.batch_size, a.block_size)
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)) / a.grad_accum
            loss.backward()
            step_loss += loss.item()
        if a.grad_clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        sched.step()
        if out:
            out.write(f"{step + 1},{step_loss:.9g}\n")
        if (step + 1) % 50 == 0 or step + 1 == a.max_iters:
            print(f"step {step + 1}/{a.max_iters} | train loss {step_loss:.4f}")


if __name__ == "__main__":
    main()
