#!/usr/bin/env python3
"""What other in-situ parameterisations would do on the published runs, held out.

`acesim calibrate runs` fits four shared parameters (docs/in-situ.md). This
study refits other parameterisations on the same linearised steps and judges
each as the calibration does: in sample, leave one run out, leave one stack
out (geomean |error|), with the count of rows acesim is faster on (held out)
and of 2024+ rows (the stacks below) beyond 12% held out. It answers: could a
different split of the parameters meet issue 43's targets?

Inputs, from the build:
  acesim calibrate runs tests/data/llm-runs/runs.csv --json > fit.json
  acesim reproduce llm-runs --out runs       (runs/results.csv: exposed communication)
Usage:
  scripts/in_situ_alternatives.py fit.json runs/results.csv

The fit: least squares on the log step error, each parameter scaled to its
plausible range and held inside it (coordinate descent with golden-section
line searches; on the shared four it gives the calibration's own values).
Standard library only; a few minutes on two cores.
"""
import csv
import json
import math
import sys

# Stacks whose rows ran 2024 software or later (runs.csv's `stack` column).
NEW_STACKS = {"megatron-core", "maxtext", "meta", "mlperf", "rocm-megatron", "megatron-bridge", "torchtitan"}
# Stacks of 2021-2023: DeepSpeed's ZeRO-3 and BLOOM of 2021, Megatron-LM of 2021, llm-foundry of 2023.
OLD_STACKS = {"deepspeed", "megatron-deepspeed", "megatron-lm", "llm-foundry"}


def expected_max_normal(n):
    """E[max of n standard normals] by Simpson's rule (0 for n = 1)."""
    if n <= 1:
        return 0.0
    a, b, steps = -10.0, 10.0, 4000
    h = (b - a) / steps
    total = 0.0
    for i in range(steps + 1):
        x = a + i * h
        cdf = 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))
        pdf = math.exp(-x * x / 2.0) / math.sqrt(2.0 * math.pi)
        weight = 1 if i in (0, steps) else (4 if i % 2 else 2)
        total += weight * x * n * pdf * cdf ** (n - 1)
    return total * h / 3.0


def step(run, v):
    """The run's linearised step at values v (as acesim's linear_step), plus
    exposed communication scaled by v['comm'] where a variant fits it."""
    g = 1.0 + v["straggler_cv"] * run["max_normal"]
    return (run["isolated_s"] + run["d_tensor_s"] * (v["tensor"] * g - 1.0) + run["d_memory_s"] * (v["memory"] * g - 1.0)
            + v["step_fixed_ms"] * 1e-3 + run["comm_s"] * (v.get("comm", 1.0) - 1.0))


def fit(rows, slots, slot_of):
    """Bounded least squares on log errors. slots: [(name, low, high)];
    slot_of(run) -> {param: slot index, or a fixed value (float)}."""
    u = [0.5] * len(slots)

    def values(u, run):
        v = {}
        for param, s in slot_of(run).items():
            v[param] = slots[s][1] + u[s] * (slots[s][2] - slots[s][1]) if isinstance(s, int) else s
        return v

    def objective(u):
        return sum(math.log(step(r, values(u, r)) / r["measured_s"]) ** 2 for r in rows)

    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(40):
        before = u[:]
        for j in range(len(slots)):
            def along(x):
                trial = u[:]
                trial[j] = x
                return objective(trial)
            a, b = 0.0, 1.0
            c, d = b - golden * (b - a), a + golden * (b - a)
            fc, fd = along(c), along(d)
            for _ in range(40):
                if fc < fd:
                    b, d, fd = d, c, fc
                    c = b - golden * (b - a)
                    fc = along(c)
                else:
                    a, c, fc = c, d, fd
                    d = a + golden * (b - a)
                    fd = along(d)
            u[j] = min(((a + b) / 2.0, 0.0, 1.0), key=along)
        if max(abs(x - y) for x, y in zip(u, before)) < 1e-7:
            break
    return [s[1] + x * (s[2] - s[1]) for s, x in zip(slots, u)], (lambda run, u=u: values(u, run))


def geomean(errors):
    return math.exp(sum(abs(math.log(1.0 + e)) for e in errors) / len(errors)) - 1.0


def judge(name, runs, slots, slot_of):
    fitted, at = fit(runs, slots, slot_of)
    error = lambda run, values: run["measured_s"] / step(run, values) - 1.0
    in_sample = [error(r, at(r)) for r in runs]
    one_out = []
    for r in runs:
        _, without = fit([x for x in runs if x is not r], slots, slot_of)
        one_out.append(error(r, without(r)))
    by_stack = {}
    for stack in sorted({r["stack"] for r in runs}):
        by_stack[stack] = fit([x for x in runs if x["stack"] != stack], slots, slot_of)[1]
    stack_out = [error(r, by_stack[r["stack"]](r)) for r in runs]
    new = [e for r, e in zip(runs, one_out) if r["stack"] in NEW_STACKS]
    bounds = [n for (n, lo, hi), v in zip(slots, fitted) if abs(v - lo) < 1e-6 * (hi - lo) or abs(v - hi) < 1e-6 * (hi - lo)]
    values = ", ".join(f"{n} {v:.4g}" for (n, _, _), v in zip(slots, fitted) if any(n == s for s in used_slots(runs, slots, slot_of)))
    print(f"| {name} | {100 * geomean(in_sample):.1f}% | {100 * geomean(one_out):.1f}% | {100 * geomean(stack_out):.1f}% | "
          f"{sum(e > 0 for e in one_out)} of {len(runs)} | {sum(abs(e) > 0.12 for e in new)} of {len(new)} | {values} | "
          f"{', '.join(b for b in bounds if b in used_slots(runs, slots, slot_of)) or 'none'} |")


def used_slots(runs, slots, slot_of):
    used = set()
    for r in runs:
        for s in slot_of(r).values():
            if isinstance(s, int):
                used.add(slots[s][0])
    return used


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    runs = json.load(open(sys.argv[1]))["runs"]
    exposed = {row["id"]: float(row["exposed_comm_s"]) for row in csv.DictReader(open(sys.argv[2]))}
    for r in runs:
        r["max_normal"] = expected_max_normal(r["gpus"])
        r["comm_s"] = exposed[r["id"]]
    base = [("tensor", 1.0, 1.25), ("memory", 0.8, 1.5), ("straggler_cv", 0.0, 0.02), ("step_fixed_ms", 0.0, 50.0)]
    shared = {"tensor": 0, "memory": 1, "straggler_cv": 2, "step_fixed_ms": 3}
    old = lambda r: r["stack"] in OLD_STACKS
    print("| parameters | in sample | leave one out | leave stack out | faster (held out) | 2024+ rows beyond 12% | fitted | at a bound |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    judge("the four, shared (the shipped fit)", runs, base, lambda r: shared)
    judge("memory split by era (2021-23 stacks / 2024+)", runs, base + [("memory_2021_23", 0.8, 1.5)],
          lambda r: {**shared, "memory": 4 if old(r) else 1})
    judge("tensor split by era", runs, base + [("tensor_2021_23", 1.0, 1.25)], lambda r: {**shared, "tensor": 4 if old(r) else 0})
    judge("and collectives in situ (x exposed communication, 1 to 2)", runs, base + [("comm", 1.0, 2.0)],
          lambda r: {**shared, "comm": 4})
    judge("memory allowed to 2", runs, [("tensor", 1.0, 1.25), ("memory", 0.8, 2.0), ("straggler_cv", 0.0, 0.02),
                                        ("step_fixed_ms", 0.0, 50.0)], lambda r: shared)
    judge("straggler_cv allowed to 0.05", runs, [("tensor", 1.0, 1.25), ("memory", 0.8, 1.5), ("straggler_cv", 0.0, 0.05),
                                                 ("step_fixed_ms", 0.0, 50.0)], lambda r: shared)


if __name__ == "__main__":
    main()
