#!/usr/bin/env python3
"""Pastes a study's tables into the doc that shows them, from the current build.

    scripts/update-doc-tables.py STUDY [STUDY ...] [--build DIR]

For each study (llm-runs, megatron, megatron-h100, nccl-tests, simai,
astra-sim-2.0, kineto, llm-offload, offload, placement) it runs `acesim reproduce STUDY` and replaces what
lies between the doc's `<!-- STUDY tables: begin ...-->` and
`<!-- STUDY tables: end -->` markers with the tables the command prints, the
text the tests compare (tests/test_paths.cpp, doc_tables). For llm-runs it
also rewrites each row's bound in tests/validation/llm_runs_test.cpp: the
row's error to 0.1 percentage point, plus 0.5 point.

Only for a deliberate change of results: say why, with before and after, in
the commit. Rebuild the tests afterwards (the bounds are compiled in).
"""
import argparse
import csv
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = {
    "llm-runs": "docs/validation.md",
    "megatron": "docs/validation.md",
    "megatron-h100": "docs/validation.md",
    "nccl-tests": "docs/validation.md",
    "simai": "docs/validation.md",
    "astra-sim-2.0": "docs/validation.md",
    "kineto": "docs/validation.md",
    "llm-offload": "docs/llm-offload.md",
    "offload": "docs/reproduction.md",
    "placement": "docs/cluster.md",
}
BOUNDS_TEST = ROOT / "tests/validation/llm_runs_test.cpp"


def tables(acesim, study, out):
    args = [str(acesim), "reproduce", study, "--out", str(out), "--no-progress"]
    if study in ("llm-offload", "offload"):
        args.append("--no-plots")
    text = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    lines = text.splitlines(keepends=True)
    while lines and (lines[-1].startswith("wrote ") or not lines[-1].strip()):
        lines.pop()
    return "".join(lines)


def splice(doc, study, body):
    path = ROOT / doc
    text = path.read_text()
    begin = text.find(f"<!-- {study} tables: begin")
    end = text.find(f"<!-- {study} tables: end -->")
    if begin < 0 or end < begin:
        sys.exit(f"{doc}: the {study} table markers are missing")
    start = text.index("\n", begin) + 1
    path.write_text(text[:start] + body + text[end:])


def update_bounds(results_csv):
    with open(results_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    test = BOUNDS_TEST.read_text()
    for r in rows:
        error = float(r["error"])
        bound = (round(abs(error) * 1000) + 5) / 1000
        pattern = re.compile(r'\{"' + re.escape(r["id"]) + r'", [0-9.]+\},  // [^\n]*')
        line = f'{{"{r["id"]}", {bound:.3f}}},  // {100 * error:+.1f}%'
        test, n = pattern.subn(lambda _: line, test)
        if n != 1:
            sys.exit(f"{BOUNDS_TEST}: no bound line for {r['id']}")
    BOUNDS_TEST.write_text(test)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("studies", nargs="+", choices=sorted(DOCS))
    ap.add_argument("--build", default="build")
    a = ap.parse_args()
    acesim = (ROOT / a.build / "acesim").resolve()
    for study in a.studies:
        with tempfile.TemporaryDirectory() as out:
            splice(DOCS[study], study, tables(acesim, study, out))
            if study == "llm-runs":
                update_bounds(pathlib.Path(out) / "results.csv")
        print(f"{study}: {DOCS[study]} updated")


if __name__ == "__main__":
    main()
