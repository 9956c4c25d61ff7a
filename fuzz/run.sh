#!/usr/bin/env bash
# Runs every fuzz target for SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/<target>) and prints what each executed.
#   fuzz/run.sh BUILD_DIR [SECONDS]
# Exits non-zero when a target finds a crash (libFuzzer writes the input as
# crash-* in BUILD_DIR/fuzz-work/<target>; turn it into a regression test).
set -euo pipefail
build=$(cd "${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS]}" && pwd)
seconds=${2:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
status=0
printf '%-16s %12s %10s %s\n' target executions seconds result
for t in native_yaml astra_platform astra_workload sizes chakra kineto model_file simai_workload sweep_grid python_options sweep_resume failure_model cluster_file calibration; do
  bin=$build/fuzz/fuzz_$t
  [[ -x $bin ]] || { echo "fuzz/run.sh: missing $bin" >&2; exit 1; }
  work=$build/fuzz-work/$t
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp "$here/../tests/fuzz/corpus/$t/"* "$work/corpus/"
  log=$work/log.txt
  if (cd "$work" && ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 \
        -print_final_stats=1 corpus >"$log" 2>&1); then
    result=ok
  else
    result="FINDING (see $work)"
    status=1
  fi
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
  printf '%-16s %12s %10s %s\n' "$t" "${execs:-?}" "$seconds" "$result"
done
exit $status
