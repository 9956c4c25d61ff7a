#!/usr/bin/env python3
"""All-reduce bus bandwidth against message size for the sm, ace and ideal
executors on the default platform (64 NPUs, a 4x4x4 torus): one sweep of
3 x 13 points, drawn with matplotlib (docs/python.md, "A worked example").

    PYTHONPATH=build/python /usr/bin/python3 examples/python/sweep_plot.py --out busbw.png
"""

import argparse

import matplotlib

matplotlib.use("Agg")  # draws to a file; no display needed
import matplotlib.pyplot as plt

import acesim

EXECUTORS = ["sm", "ace", "ideal"]
SIZES = [2**k for k in range(16, 29)]  # 64 KiB .. 256 MiB


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="busbw-vs-bytes.png", help="the PNG to write")
    parser.add_argument("--platform", default="default", help="a platform file or preset")
    args = parser.parse_args()

    records = acesim.sweep({
        "command": "collective",
        "options": {"platform": args.platform, "op": "all-reduce"},
        "grid": {"executor": EXECUTORS, "bytes": SIZES},
    })
    table = acesim.rows(records)
    errors = [row for row in table if row["error"]]
    if errors:
        raise SystemExit(f"point {errors[0]['point']}: {errors[0]['error']}")

    print(f"{'bytes':>12}" + "".join(f"{e + ' busbw':>14}" for e in EXECUTORS) + "  (GB/s)")
    by = {(row["executor"], row["bytes"]): row["busbw_GBps"] for row in table}
    for size in SIZES:
        print(f"{size:>12}" + "".join(f"{by[e, size]:>14.2f}" for e in EXECUTORS))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    # ace and ideal coincide for a collective running alone: a dashed line
    # over markers keeps both visible.
    styles = {"sm": dict(marker="o"), "ace": dict(marker="s", markersize=7), "ideal": dict(linestyle="--", color="black")}
    for executor in EXECUTORS:
        ax.plot(SIZES, [by[executor, size] for size in SIZES], label=executor, **styles[executor])
    ax.set_xscale("log", base=2)
    ax.set_xlabel("all-reduce size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(f"all-reduce on {table[0]['platform']}")
    ax.grid(True, alpha=0.3)
    ax.legend(title="executor")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
