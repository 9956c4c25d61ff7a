#!/usr/bin/env python3
"""Derive Kineto traces with the irregularities of real clusters' traces from
HTA's two real ranks of a 128-rank job (tests/data/kineto/ws128_sampled.rank{0,1}),
for the reader's repairs (docs/formats.md, "PyTorch profiler (Kineto) traces"):

  ws128_defects.rank0.json.gz  rank 0 with
      - 3 kernels, 2 cudaLaunchKernel calls and the ProfilerStep#552 annotation
        written twice (the copies appended at the end of traceEvents);
      - the runtime calls that launched its first 5 GPU activities left out (a
        profiling window that opened on the CPU after they were launched);
      - its first device-to-device copy queued 1-10 us behind a kernel of at
        least 60 us on its stream moved earlier, to start 33 us before that
        kernel ends (as a real 16-rank A100 trace has one).
  ws128_skewed.rank1.json.gz   rank 1 with every timestamp 2.5 s later (a
      clock offset between the ranks' hosts).

Usage (from the repository root; the output is the same bytes every run):

    python3 tools/kineto-defects/derive.py [tests/data/kineto]
"""
import gzip
import io
import json
import sys

SKEW_US = 2_500_000
OVERLAP_US = 33


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def save(trace, path):
    text = json.dumps(trace, separators=(",", ":")).encode()
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as g:
        g.write(text)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def gpu(e):
    return e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")


def runtime(e):
    return e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")


def defects(trace):
    events = trace["traceEvents"]
    acts = sorted((e for e in events if gpu(e)), key=lambda e: e["ts"])
    calls = sorted((e for e in events if runtime(e)), key=lambda e: e["ts"])
    launching = {e["args"]["correlation"] for e in acts}
    # The launches of the first 5 GPU activities, left out.
    dropped = {a["args"]["correlation"] for a in acts[:5]}
    assert all(c in launching for c in dropped)
    # A device-to-device copy queued just behind a long kernel on its stream,
    # moved to start OVERLAP_US before that kernel ends.
    last = {}
    moved = None
    for a in acts:
        s = (a["args"]["device"], a["args"]["stream"])
        p = last.get(s)
        if (moved is None and p is not None and a["cat"] == "gpu_memcpy" and "DtoD" in a["name"] and p["cat"] == "kernel"
                and p["dur"] >= 60 and 1 <= a["ts"] - (p["ts"] + p["dur"]) <= 10):
            moved = a
            a["ts"] = p["ts"] + p["dur"] - OVERLAP_US
        last[s] = a
    assert moved is not None and moved["args"]["correlation"] not in dropped
    # Events written twice: three kernels, two launches, a step.
    kernels = [a for a in acts if a["cat"] == "kernel" and a["args"]["correlation"] not in dropped]
    twice = [kernels[100], kernels[200], kernels[300]]
    twice += [c for c in calls if c["name"] == "cudaLaunchKernel" and c["args"]["correlation"] not in dropped][500:502]
    twice += [e for e in events if e.get("ph") == "X" and e.get("name") == "ProfilerStep#552"]
    assert len(twice) == 6
    kept = [e for e in events if not (runtime(e) and e["args"]["correlation"] in dropped)]
    trace["traceEvents"] = kept + [json.loads(json.dumps(e)) for e in twice]
    return trace


def skewed(trace):
    for e in trace["traceEvents"]:
        if "ts" in e:
            e["ts"] += SKEW_US
    return trace


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "tests/data/kineto"
    save(defects(load(f"{d}/ws128_sampled.rank0.json.gz")), f"{d}/ws128_defects.rank0.json.gz")
    save(skewed(load(f"{d}/ws128_sampled.rank1.json.gz")), f"{d}/ws128_skewed.rank1.json.gz")


if __name__ == "__main__":
    main()
