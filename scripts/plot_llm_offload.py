#!/usr/bin/python3
"""Plots of `acesim reproduce llm-offload` (docs/llm-offload.md).

Reads DIR/results.csv and writes DIR/speedup.png (ace's and ideal's speedup
over sm against GPUs, per workload) and DIR/breakdown.png (where each
executor's iteration goes, per workload, at 1,024 GPUs or the largest size
every workload ran at). acesim writes this script into DIR and runs it with
Debian's python3 and python3-matplotlib.
"""
import csv
import io
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def save(fig, path):
    """savefig through memory: writing the file itself reports a full disk, savefig does not."""
    buf = io.BytesIO()
    fig.savefig(buf, dpi=120, format="png")
    with open(path, "wb") as f:
        f.write(buf.getvalue())

EXECUTORS = ["sm", "ace", "ideal"]
PARTS = [("compute_ns", "compute", "#4c72b0"), ("pipeline_bubble_ns", "pipeline bubble", "#bbbbbb"),
         ("exposed_tp_ns", "exposed tp", "#dd8452"), ("exposed_ep_ns", "exposed ep", "#c44e52"),
         ("exposed_pp_ns", "exposed pp", "#8172b3"), ("exposed_dp_ns", "exposed dp", "#55a868"),
         ("other_idle_ns", "other idle", "#937860")]


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def workloads(rows):
    seen = []
    for r in rows:
        if r["workload"] not in seen:
            seen.append(r["workload"])
    return seen


def plot_speedup(rows, out):
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, w in enumerate(workloads(rows)):
        for ex, style in (("ace", "-o"), ("ideal", ":s")):
            pts = sorted((int(r["gpus"]), float(r["speedup_over_sm"])) for r in rows
                         if r["workload"] == w and r["executor"] == ex)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colors[i % len(colors)],
                    label=f"{w}, {ex}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("GPUs (hgx-h100)")
    ax.set_ylabel("speedup over sm (iteration time)")
    ax.axhline(1.0, color="black", linewidth=0.5)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("What an offload engine buys: ace (solid) and ideal (dotted) over sm")
    fig.tight_layout()
    save(fig, os.path.join(out, "speedup.png"))


def breakdown_size(rows):
    sizes = None
    for w in workloads(rows):
        s = {int(r["gpus"]) for r in rows if r["workload"] == w}
        sizes = s if sizes is None else sizes & s
    if not sizes:
        return None
    return 1024 if 1024 in sizes else max(sizes)


def plot_breakdown(rows, out):
    size = breakdown_size(rows)
    if size is None:
        return
    labels, bars = [], []
    for w in workloads(rows):
        for ex in EXECUTORS:
            r = [x for x in rows if x["workload"] == w and x["executor"] == ex and int(x["gpus"]) == size]
            if r:
                labels.append(f"{w}\n{ex}")
                bars.append(r[0])
    fig, ax = plt.subplots(figsize=(max(7.5, 0.55 * len(bars)), 5))
    xs = range(len(bars))
    bottom = [0.0] * len(bars)
    for key, name, color in PARTS:
        vals = [float(b[key]) / 1e6 for b in bars]
        ax.bar(xs, vals, bottom=bottom, color=color, label=name)
        bottom = [a + v for a, v in zip(bottom, vals)]
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=6, rotation=90)
    ax.set_ylabel("ms per iteration (mean over pipeline stages)")
    ax.set_title(f"Where the iteration goes, {size} GPUs")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, os.path.join(out, "breakdown.png"))


def main(out):
    rows = load(os.path.join(out, "results.csv"))
    plot_speedup(rows, out)
    plot_breakdown(rows, out)


if __name__ == "__main__":
    main(sys.argv[1])
