#!/usr/bin/env python3
"""Fits the compute model's GEMM constants to OpenXLA's GEMM table.

Usage: tools/fit-gemm-model/fit.py TABLE KEY SMS PEAK_TFLOPS [TILES]

TABLE is OpenXLA's default_matmul_perf_table.txtpb (../shared/peer-inputs/
xla-perf-tables/), KEY an architecture key in it (sm_90, sm_100_B200), or a
CSV file of measured BF16 GEMMs (columns b,m,n,k,TFLOPS; `#` lines are
comments; KEY then only names the fit: tests/data/compute/*.csv), SMS and
PEAK_TFLOPS the GPU's SM count and dense BF16 peak. It grid-searches the launch
floor, the per-tile k overhead and the main-loop efficiency of the model in
src/compute/compute_model.cpp (the best of the tiles and split-K factors,
whole waves) for the least root-mean-square log error over every bf16 shape
(b = 1, 2, 4), and prints them with the errors: the numbers
tests/data/compute/kernel-model.yaml cites.
"""
import csv
import math
import re
import sys

TILES = [(128, 256), (256, 128), (128, 128), (64, 256), (128, 64), (64, 128), (64, 64)]
SPLITS = [1, 2, 4, 8]


def read(path, key):
    if path.endswith('.csv'):
        with open(path, newline='') as f:
            table = csv.DictReader(line for line in f if line.strip() and not line.startswith('#'))
            return [(int(r['b']), int(r['m']), int(r['n']), int(r['k']), float(r['TFLOPS']) * 1e12) for r in table]
    text = open(path).read()
    start = text.index(f'key: "{key}"')
    end = text.find('\nentries {\n  key:', start)
    block = text[start:end if end >= 0 else None]
    rows = []
    pat = r'b: (\d+)\s+m: (\d+)\s+n: (\d+)\s+k: (\d+)\s+flops \{\s*key: "bf16xbf16->bf16"\s+value: (\d+)\s*\}'
    for b, m, n, k, f in re.findall(pat, block):
        rows.append((int(b), int(m), int(n), int(k), float(f)))
    return rows


def model(b, m, n, k, sms, peak, floor, k0, eff, tiles_mn=TILES):
    rate = peak / sms * eff
    best = math.inf
    for tm, tn in tiles_mn:
        tiles = b * math.ceil(m / tm) * math.ceil(n / tn)
        for s in SPLITS:
            if s > 1 and tiles * s > 2 * sms:
                continue
            waves = math.ceil(tiles * s / sms)
            best = min(best, waves * 2 * tm * tn * (math.ceil(k / s) + k0) / rate)
    return floor + best


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    path, key, sms, peak = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) * 1e12
    tiles_mn = TILES
    if len(sys.argv) == 6:  # e.g. 256x256,128x128
        tiles_mn = [tuple(int(x) for x in t.split('x')) for t in sys.argv[5].split(',')]
    rows = read(path, key)
    fits = []
    for floor in [x * 0.5e-6 for x in range(6, 25)]:
        for k0 in range(0, 1025, 32):
            for eff in [x / 100 for x in range(30, 96)]:
                errs = [math.log(model(b, m, n, k, sms, peak, floor, k0, eff, tiles_mn) / (2 * b * m * n * k / f)) for b, m, n, k, f in rows]
                fits.append((math.sqrt(sum(e * e for e in errs) / len(errs)), floor, k0, eff))
    rms, floor, k0, eff = min(fits)
    print(f'{key}: {len(rows)} shapes; launch floor {floor * 1e6:g} us, k_overhead {k0}, efficiency {eff:.2f}; '
          f'rms log error {rms:.3f}')


if __name__ == '__main__':
    main()
