#!/usr/bin/python3
"""The plot of `acesim sweep plot` (docs/sweeps.md).

acesim picks the points (error rows left out, --where filters applied),
groups them into series by --hue and writes them as JSON; this script draws
them with Debian's python3-matplotlib: python3 plot_sweep.py DATA.json
"""
import io
import json
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


def main():
    with open(sys.argv[1]) as f:
        d = json.load(f)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    categories = d["categories"]
    for s in d["series"]:
        xs = s["x"]
        if categories:
            xs = [categories.index(x) for x in xs]
        ax.plot(xs, s["y"], marker="o", label=s["name"] if s["name"] else None)
    if categories:
        ax.set_xticks(range(len(categories)))
        ax.set_xticklabels(categories, rotation=30 if len(categories) > 6 else 0)
    elif d["logx"]:
        ax.set_xscale("log", base=2 if d["log2"] else 10)
    if d["logy"]:
        ax.set_yscale("log")
    ax.set_xlabel(d["xlabel"])
    ax.set_ylabel(d["ylabel"])
    ax.set_title(d["title"], fontsize=10)
    ax.grid(True, alpha=0.3)
    if any(s["name"] for s in d["series"]):
        ax.legend(title=d["hue"], fontsize=8)
    fig.tight_layout()
    save(fig, d["out"])


if __name__ == "__main__":
    main()
