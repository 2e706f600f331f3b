#!/usr/bin/env python3
"""Numerics fingerprint: does this machine compute the course's kind of work bit for bit alike?

Trains a small mix of the layers the course uses (convolution, embedding, 2-layer bidirectional
LSTM, GRU, a pre-LN Transformer encoder layer with a causal mask, AdamW, gradient clipping) and
runs a few large matrix products, softmax, GELU, numpy/scipy SVDs; hashes the exact bits and
prints them as JSON.

Usage: python scripts/numerics_fingerprint.py [THREADS]   (under the settings you want to test;
`make fingerprint` runs it under numerics.env). Two machines that print the same hashes under the
same settings and package versions compute these operations identically. Values recorded on
several machines are in tests/data/numerics_fingerprints.json; tests/test_numerics.py compares.
"""
import argparse
import hashlib
import json
import platform

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as sla
import torch
import torch.nn as nn
import torch.nn.functional as F


def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]


def torch_part(threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 10))
    emb = nn.Embedding(300, 48)
    lstm = nn.LSTM(48, 64, num_layers=2, batch_first=True, bidirectional=True)
    gru = nn.GRU(48, 32, batch_first=True)
    enc = nn.TransformerEncoderLayer(48, 4, 192, dropout=0.0, batch_first=True, activation="gelu",
                                     norm_first=True)
    head = nn.Linear(128 + 32 + 48, 300)
    mods = [conv, emb, lstm, gru, enc, head]
    params = [p for m in mods for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=2e-3, weight_decay=0.01)
    x = torch.randn(64, 1, 8, 8)
    y = torch.randint(0, 10, (64,))
    ids = torch.randint(0, 300, (16, 24))
    mask = torch.ones(24, 24, dtype=torch.bool).tril()
    for _ in range(150):
        e = emb(ids)
        h = torch.cat([lstm(e)[0], gru(e)[0], enc(e, src_mask=~mask, is_causal=True)], -1)
        logits = head(h)
        loss = F.cross_entropy(conv(x), y) + F.cross_entropy(
            logits[:, :-1].reshape(-1, 300), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
    q = torch.randn(2, 4, 50, 16)
    attn = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    big = torch.randn(512, 768) @ torch.randn(768, 3072)
    return digest([p.detach().numpy() for p in params]
                  + [attn.numpy(), big.numpy(), F.gelu(big).numpy(), big.softmax(-1).numpy()])


def numpy_part():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((400, 300)).astype(np.float32)
    m = a @ a.T
    u, s, _ = np.linalg.svd(a.astype(np.float64), full_matrices=False)
    c = sp.random(2000, 2000, density=0.01, random_state=0, format="csr")
    _, ss, _ = sla.svds(c, k=20, random_state=0)
    return digest([m, s, np.abs(u[:, :5]), ss])


def cpu_name() -> str:
    """The CPU's model name, family and model (Linux), else the platform's processor string."""
    try:
        info = dict(line.split(":", 1) for line in open("/proc/cpuinfo").read().split("\n\n")[0]
                    .splitlines() if ":" in line)
        info = {k.strip(): v.strip() for k, v in info.items()}
        return f"{info['model name']} (family {info['cpu family']} model {info['model']})"
    except (OSError, KeyError):
        return platform.processor() or platform.machine()


def fingerprint(threads: int = 1) -> dict:
    return {"torch": torch_part(threads), "numpy/scipy": numpy_part(), "threads": threads,
            "torch_version": torch.__version__, "numpy_version": np.__version__,
            "scipy_version": scipy.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "cpu": cpu_name()}


def positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python scripts/numerics_fingerprint.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("threads", type=positive_int, nargs="?", default=1, metavar="THREADS",
                        help="torch's CPU threads (default: 1)")
    print(json.dumps(fingerprint(parser.parse_args().threads)))
