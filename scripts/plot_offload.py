#!/usr/bin/python3
"""Plots of `acesim reproduce offload` (docs/reproduction.md, "Offload engines as they ship").

Reads DIR/results.csv and DIR/dma-sweep.csv and writes DIR/shares.png (the
share of the ideal speedup each configuration realizes, per GEMM +
collective pair of the ConCCL study, with the paper's averages) and
DIR/dma-sweep.png (the SDMA collectives' time over RCCL's by size). acesim
writes this script into DIR and runs it with Debian's python3 and
python3-matplotlib.
"""
import csv
import io
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CONFIGS = ["c3", "prioritized", "partitioned", "dma", "ace"]
PUBLISHED = {"c3": 0.21, "prioritized": 0.42, "partitioned": 0.42, "dma": 0.72}


def save(fig, path):
    """savefig through memory: writing the file itself reports a full disk, savefig does not."""
    buf = io.BytesIO()
    fig.savefig(buf, dpi=120, format="png")
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def shares(rows, out):
    pairs = []
    for r in rows:
        if r["study"] != "conccl":
            continue
        key = (r["gemm"], r["collective"], r["bytes"])
        if key not in pairs:
            pairs.append(key)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(CONFIGS)
    for i, c in enumerate(CONFIGS):
        ys = []
        for key in pairs:
            ys.append(next(float(r["share_of_ideal"]) for r in rows
                           if r["study"] == "conccl" and (r["gemm"], r["collective"], r["bytes"]) == key and r["config"] == c))
        xs = [j + (i - len(CONFIGS) / 2 + 0.5) * width for j in range(len(pairs))]
        bars = ax.bar(xs, ys, width, label=c)
        if c in PUBLISHED:
            ax.axhline(PUBLISHED[c], color=bars.patches[0].get_facecolor(), linestyle="--", linewidth=1)
    ax.set_xticks(range(len(pairs)))
    ax.set_xticklabels([f"{g}\n{op} {int(b) >> 20} MiB" for g, op, b in pairs], rotation=90, fontsize=6)
    ax.set_ylabel("share of the ideal speedup")
    ax.set_title("8 MI300X, GEMM + collective (dashed: ConCCL's published averages)")
    ax.legend(fontsize=7, ncol=5)
    fig.tight_layout()
    save(fig, os.path.join(out, "shares.png"))


def sweep(rows, out):
    fig, ax = plt.subplots(figsize=(6, 4))
    for op in ["all-gather", "all-to-all"]:
        pts = [(float(r["bytes"]), float(r["dma_ns"]) / float(r["rccl_ns"])) for r in rows if r["collective"] == op]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{op}: dma / RCCL")
    ax.axhline(1.0, color="grey", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("time over RCCL's")
    ax.set_title("8 MI300X: SDMA collectives against RCCL")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, os.path.join(out, "dma-sweep.png"))


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "results.csv"), newline="") as f:
        shares(list(csv.DictReader(f)), out)
    with open(os.path.join(out, "dma-sweep.csv"), newline="") as f:
        sweep(list(csv.DictReader(f)), out)


if __name__ == "__main__":
    main()
