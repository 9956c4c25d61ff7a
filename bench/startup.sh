#!/usr/bin/env bash
# Start-up cost: wall time of whole acesim processes on small commands, where
# loading, initialisation and exit are most of the time.
#
#   bench/startup.sh [-n RUNS] ACESIM [ACESIM ...]
#
# Times RUNS (default 200) whole-process runs of each command below for each
# binary, taking turns between the binaries so that the machine's load hits
# them alike, and prints the mean, median and minimum per run in ms. Several
# binaries (e.g. main's and a branch's) give a comparison from one run; on a
# noisy machine the median and the minimum are steadier than the mean, and
# ratios from one run are what to compare, not figures from different runs.
# The first row, /bin/true, is the floor: what starting any process costs
# from bash.
# Exits 1 on bad arguments, 2 when a command fails.
set -euo pipefail

runs=200
if [[ ${1:-} == -n ]]; then
  runs=${2:-}
  shift 2 || true
  [[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench/startup.sh: -n needs a positive number" >&2; exit 1; }
fi
if (($# == 0)); then
  echo "usage: bench/startup.sh [-n RUNS] ACESIM [ACESIM ...]" >&2
  exit 1
fi
for b in "$@"; do
  [[ -x $b ]] || { echo "bench/startup.sh: $b is not an executable" >&2; exit 1; }
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

labels=(
  "--version"
  "collective --bytes 1KiB"
  "run (ring of 8, 1 iteration)"
)
# The arguments of command $1 (an index into labels), into the array args.
set_args() {
  case $1 in
    0) args=(--version) ;;
    1) args=(collective --bytes 1KiB) ;;
    2) args=(run --platform "$here/platforms/ring_8.yaml" --iterations 1) ;;
  esac
}

# One timed run; appends its microseconds to the array named by $1.
time_one() {
  local -n acc=$1
  shift
  # EPOCHREALTIME (bash 5) reads the clock without starting a process.
  local t0=${EPOCHREALTIME/[.,]/}
  "$@" >/dev/null || { echo "bench/startup.sh: $* failed" >&2; exit 2; }
  local t1=${EPOCHREALTIME/[.,]/}
  acc+=($((t1 - t0)))
}

stats() {  # microsecond samples -> "mean median min" in ms
  printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1; s += $1 }
    END { printf "%8.2f %8.2f %8.2f", s / NR / 1000, v[int((NR + 1) / 2)] / 1000, v[1] / 1000 }'
}

printf 'runs per row: %d\n' "$runs"
printf '%-30s %-40s %8s %8s %8s\n' command binary "mean ms" "median" "min ms"
floor=()
for ((i = 0; i < runs; ++i)); do time_one floor /bin/true; done
printf '%-30s %-40s %s\n' "/bin/true (floor)" "" "$(stats "${floor[@]}")"

for c in "${!labels[@]}"; do
  set_args "$c"
  # One sample array per binary: t_0, t_1, ...
  bins=("$@")
  for k in "${!bins[@]}"; do declare -a "t_$k=()"; done
  for b in "${bins[@]}"; do  # warm the page cache
    "$b" "${args[@]}" >/dev/null || { echo "bench/startup.sh: $b ${args[*]} failed" >&2; exit 2; }
  done
  for ((i = 0; i < runs; ++i)); do
    for k in "${!bins[@]}"; do time_one "t_$k" "${bins[k]}" "${args[@]}"; done
  done
  for k in "${!bins[@]}"; do
    declare -n samples="t_$k"
    printf '%-30s %-40s %s\n' "${labels[c]}" "${bins[k]}" "$(stats "${samples[@]}")"
    unset -n samples
  done
done
