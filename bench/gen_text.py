#!/usr/bin/env python3
"""Deterministic pseudo-text for the xz workload: lines of words drawn (Zipf-like) from a
generated vocabulary, with numbers and some punctuation, so that xz -6 compresses it about
as it does prose/logs (ratio ~3-4).  gen_text.py -s SEED -m MIB -o FILE"""
import argparse
import random

ap = argparse.ArgumentParser()
ap.add_argument("-s", "--seed", type=int, default=1)
ap.add_argument("-m", "--mib", type=float, default=2.0)
ap.add_argument("-o", "--out", required=True)
a = ap.parse_args()
r = random.Random(a.seed)
letters = "etaoinshrdlcumwfgypbvkjxqz"
vocab = ["".join(r.choice(letters[: 8 + i % 18]) for _ in range(r.randint(2, 10))) for i in range(6000)]
weights = [1.0 / (i + 1) for i in range(len(vocab))]
size = int(a.mib * 1024 * 1024)
out, n = [], 0
while n < size:
    words = r.choices(vocab, weights, k=r.randint(4, 16))
    if r.random() < 0.3:
        words.insert(r.randint(0, len(words)), str(r.randint(0, 10 ** r.randint(1, 7))))
    line = " ".join(words) + r.choice([".", ".", ",", ";", ":", "!", "?"]) + "\n"
    out.append(line)
    n += len(line)
with open(a.out, "w") as f:
    f.write("".join(out)[:size])
