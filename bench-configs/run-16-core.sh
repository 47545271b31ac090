#!/usr/bin/env bash
# The 16-core tables (issue 30) in one go, on a machine with no Rust toolchain: a prebuilt
# binary and the committed dumps only. Run from the repository root:
#
#   GIGAGAS=path/to/gigagas OUT=/some/folder bench-configs/run-16-core.sh
#
# Writes into $OUT: machine.txt (CPU, cores, memory, disk), log.txt (every sweep's output)
# and results.tgz (the results folders, results/<config>/<date>-<commit>/, re-packed after
# every step so a step that overruns its limit loses only itself). Steps run in order of
# importance, each under its own time limit; one that fails or overruns is logged and the
# next one runs.
set -u
BIN=${GIGAGAS:-target/release/gigagas}
OUT=${OUT:-target/16-core}
RESULTS=${RESULTS:-/tmp/gigagas-16-core-results}
NOTE=${NOTE:-"16-core machine, nothing else running"}
mkdir -p "$OUT" "$RESULTS"
LOG=$OUT/log.txt

{
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc)"
  lscpu
  free -g
  uname -a
  lsblk -d -o NAME,SIZE,ROTA,MODEL 2>/dev/null
  df -h . /tmp
  "$BIN" --version
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
"$BIN" --version >/dev/null || { echo "the binary does not start here"; exit 1; }

# step NAME LIMIT_S COMMAND...: run one step under a time limit, log it, re-pack the results.
step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name (limit ${limit} s) start $(date -u +%T)"
  timeout --kill-after=5 "$limit" "$@"
  echo "== $name rc=$? end $(date -u +%T)"
  tar -czf "$OUT/results.tgz" -C "$RESULTS" .
}

# sweep CONFIG LIMIT_S: one sweep as a step. SWEEP_ARGS: extra sweep flags, e.g. "--dry-run"
# to check the configs, "--repeats 1" for a quick look.
sweep() {
  # shellcheck disable=SC2086 # SWEEP_ARGS is a list of flags
  step "$1" "$2" "$BIN" sweep "bench-configs/$1.toml" --results-dir "$RESULTS" --note "$NOTE" ${SWEEP_ARGS:-}
}

{
  sweep mainnet-16c 150
  sweep mainnet-like-16c 300
  sweep batch-size-16c 60
  step state-build 120 "$BIN" state build dumps/mainnet.gigagas -o target/state/mainnet-8g --pad-to 8GiB
  sweep io-16c 240
} 2>&1 | tee -a "$LOG"
