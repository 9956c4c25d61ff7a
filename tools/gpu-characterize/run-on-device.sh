#!/usr/bin/env bash
# Builds and runs gpu-characterize on the GPU machine in one go; run it from the
# repository root:  tools/gpu-characterize/run-on-device.sh [--quick] [args...]
# Results go to ${OUT:-./gpu-out}: measurements.csv, gpu.json, run.log,
# nvidia-smi.txt. Needs nvcc (on PATH or /usr/local/cuda/bin) and cuBLAS; no cmake.
set -uo pipefail

start=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-./gpu-out}
mkdir -p "$out" || { echo "run-on-device: cannot create $out" >&2; exit 1; }

elapsed() { echo "run-on-device: $1 after $(($(date +%s) - start)) s" >&2; }

if command -v nvcc >/dev/null 2>&1; then
  nvcc=$(command -v nvcc)
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=/usr/local/cuda/bin/nvcc
else
  echo "run-on-device: no nvcc on PATH or in /usr/local/cuda/bin" >&2
  exit 1
fi
cuda_root=$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)
for d in "$cuda_root/lib64" "$cuda_root/lib" "$cuda_root/targets/x86_64-linux/lib"; do
  [[ -d $d ]] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu \
    --format=csv 2>&1 || true
else
  echo "run-on-device: nvidia-smi not found" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" --version | tail -n 2
echo "run-on-device: building with $nvcc" >&2
if ! "$nvcc" -O3 -std=c++17 -arch=sm_90 -Xcompiler -Wall,-Wextra \
    -o "$tmp/gpu-characterize" "$here/gpu_characterize.cu" -lcublas; then
  elapsed "build FAILED"
  exit 1
fi
elapsed "built"

timeout -k 15 480 "$tmp/gpu-characterize" --out "$out" "$@" 2>&1 | tee "$out/run.log"
rc=${PIPESTATUS[0]}
if [[ $rc -eq 124 ]]; then echo "run-on-device: gpu-characterize killed after 480 s" >&2; fi
elapsed "gpu-characterize exited with status $rc"
exit "$rc"
