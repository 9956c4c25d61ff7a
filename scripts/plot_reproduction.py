#!/usr/bin/python3
"""Plots of `acesim reproduce ace-isca21` (docs/reproduction.md).

Reads DIR/results.csv and writes DIR/breakdown.png, DIR/network_utilization.png,
DIR/hbm_vs_network.png and DIR/speedup.png. acesim writes this script into DIR
and runs it with Debian's python3 and python3-matplotlib.
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

PAPER_SPEEDUP = {"resnet50": 1.41, "gnmt": 1.12, "dlrm": 1.13}
NAMES = {"resnet50": "ResNet-50", "gnmt": "GNMT", "dlrm": "DLRM"}


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def best_baseline(rows, workload, npus):
    cands = [r for r in rows if r["workload"] == workload and int(r["npus"]) == npus
             and (r["config"].startswith("baseline-") or r["config"] == "no-overlap")]
    return min(cands, key=lambda r: float(r["iteration_time_ns"]))


def pick(rows, workload, npus, config):
    for r in rows:
        if r["workload"] == workload and int(r["npus"]) == npus and r["config"] == config:
            return r
    return None


def main(out):
    rows = load(os.path.join(out, "results.csv"))
    workloads = [w for w in ["resnet50", "gnmt", "dlrm"] if any(r["workload"] == w for r in rows)]
    sizes = sorted({int(r["npus"]) for r in rows})

    # 1. Iteration-time breakdown per configuration.
    fig, axes = plt.subplots(1, len(workloads), figsize=(5 * len(workloads), 4), squeeze=False)
    for ax, w in zip(axes[0], workloads):
        labels, comp, exp = [], [], []
        for n in sizes:
            for name, r in [("no-overlap", pick(rows, w, n, "no-overlap")), ("best base", best_baseline(rows, w, n)),
                            ("ace", pick(rows, w, n, "ace")), ("ideal", pick(rows, w, n, "ideal"))]:
                if r is None:
                    continue
                labels.append(f"{n}\n{name}")
                comp.append(float(r["compute_time_ns"]) / 1e6)
                exp.append(float(r["exposed_comm_ns"]) / 1e6)
        x = range(len(labels))
        ax.bar(x, comp, label="compute")
        ax.bar(x, exp, bottom=comp, label="exposed communication")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=6, rotation=90)
        ax.set_ylabel("iteration time (ms)")
        ax.set_title(NAMES[w])
        ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, os.path.join(out, "breakdown.png"))

    # 2. Network-bandwidth utilization: over the run (top) and while
    # communication is in flight (bottom, the paper's "effective" one).
    metrics = [("network_utilization", "over the run"), ("network_utilization_in_flight", "while in flight")]
    fig, axes = plt.subplots(2, len(workloads), figsize=(5 * len(workloads), 7), squeeze=False)
    for row, (key, what) in enumerate(metrics):
        for ax, w in zip(axes[row], workloads):
            for name in ["ideal", "ace", "best baseline", "no-overlap"]:
                ys = []
                for n in sizes:
                    r = best_baseline(rows, w, n) if name == "best baseline" else pick(rows, w, n, name)
                    ys.append(100 * float(r[key]) if r else 0)
                ax.plot(sizes, ys, marker="o", label=name)
            ax.set_xscale("log", base=2)
            ax.set_xticks(sizes)
            ax.set_xticklabels([str(s) for s in sizes])
            ax.set_xlabel("NPUs")
            ax.set_ylabel(f"network utilization, {what} (%)")
            ax.set_title(NAMES[w])
            ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, os.path.join(out, "network_utilization.png"))

    # 3. HBM bandwidth needed versus network bandwidth achieved.
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for executor, marker in [("sm", "o"), ("ace", "s")]:
        xs = [float(r["network_GBps_per_npu"]) for r in rows if r["executor"] == executor]
        ys = [float(r["hbm_comm_GBps_per_npu"]) for r in rows if r["executor"] == executor]
        ax.scatter(xs, ys, marker=marker, alpha=0.6, label=executor)
    top = max([float(r["network_GBps_per_npu"]) for r in rows] + [1.0])
    ax.plot([0, top], [0, 3.5 * top], "k--", linewidth=0.8, label="3.5 HBM bytes per network byte")
    ax.plot([0, top], [0, top], "k:", linewidth=0.8, label="1 HBM byte per network byte")
    ax.set_xlabel("network bandwidth achieved per NPU (GB/s)")
    ax.set_ylabel("HBM bandwidth used by communication (GB/s)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, os.path.join(out, "hbm_vs_network.png"))

    # 4. ACE's speedup over the best baseline versus network size.
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for w in workloads:
        ys = [float(best_baseline(rows, w, n)["iteration_time_ns"]) / float(pick(rows, w, n, "ace")["iteration_time_ns"])
              for n in sizes]
        line, = ax.plot(sizes, ys, marker="o", label=f"{NAMES[w]} (acesim)")
        ax.axhline(PAPER_SPEEDUP[w], color=line.get_color(), linestyle="--", linewidth=0.8,
                   label=f"{NAMES[w]} (paper, average)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("NPUs")
    ax.set_ylabel("speedup of ACE over the best baseline")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, os.path.join(out, "speedup.png"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
