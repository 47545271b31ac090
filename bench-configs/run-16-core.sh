#!/usr/bin/env bash
# The 16-core tables (issues 30, 36 and 37) in one go, on a machine with no Rust toolchain: a prebuilt
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

# scaling NAME DUMP LIMIT_S [FLAGS...]: one dump as one mega-block at 1–16 threads, both
# schedulers, the sequential baseline beside them, results and CPU profiles of the 16-thread
# points (issue 36: the in-process cost per transaction; --cpu-profile needs no perf).
scaling() {
  local name=$1 dump=$2 limit=$3
  shift 3
  mkdir -p "$RESULTS/scaling-16c/$name"
  step "scaling-$name" "$limit" "$BIN" run "$dump" --threads 1,2,4,8,16 --batch 1000 \
    --scheduler ols,gas-used --repeats 5 --out "$RESULTS/scaling-16c/$name/results" \
    --cpu-profile "$RESULTS/scaling-16c/$name/profile" --cpu-profile-point "BAL 16t b1000 ols" \
    --cpu-profile-ms 3000 "$@"
}

# processes DUMP N: N single-thread processes at once, one per core (pinned), beside one
# alone: what the machine itself costs a transaction, apart from the process.
processes() {
  local dump=$1 n=$2
  echo "== $n concurrent 1-thread processes on $dump"
  timeout 60 "$BIN" run "$dump" --threads 1 --batch 1000 --scheduler ols --no-baseline --repeats 5 2>&1 | grep -E '^\| 1 '
  for i in $(seq 0 $((n - 1))); do
    timeout 100 taskset -c "$i" "$BIN" run "$dump" --threads 1 --batch 1000 --scheduler ols --no-baseline \
      --repeats 5 >"$OUT/process-$i.txt" 2>&1 &
  done
  wait
  grep -hE '^\| 1 ' "$OUT"/process-*.txt
}

{
  # Issue 36 first: transfers, erc20 and mainnet as one mega-block, 1–16 threads.
  step generate 60 sh -c "'$BIN' generate --profile transfers --blocks 20 --seed 1 -o target/transfers.gigagas \
    && '$BIN' generate --profile erc20 --blocks 20 --seed 1 -o target/erc20.gigagas"
  scaling transfers target/transfers.gigagas 120
  scaling erc20 target/erc20.gigagas 120
  scaling mainnet dumps/mainnet.gigagas 150
  scaling mainnet-pinned dumps/mainnet.gigagas 150 --pin
  processes target/transfers.gigagas 16
  # pevm beside gigagas on the 32 shared mainnet blocks (a stripped pevm-peer carried in
  # $PEVM, the blocks in $BLOCKS; its PASS line is the one to compare).
  if [ -n "${PEVM:-}" ] && [ -n "${BLOCKS:-}" ]; then
    for t in 4 8 16; do
      step "pevm-${t}t" 120 "$PEVM" "$BLOCKS" 4370000 5 "$t"
    done
  fi
  sweep mainnet-16c 150
  sweep mainnet-like-16c 300
  sweep batch-size-16c 60
  step state-build 120 "$BIN" state build dumps/mainnet.gigagas -o target/state/mainnet-8g --pad-to 8GiB
  sweep io-16c 240
  # Issue 37: the access-list designs (full, keys, writes, none) on the same store, warm and
  # cold, at 1, 2 and 16 threads, per block and one mega-block.
  sweep bal-designs 420
} 2>&1 | tee -a "$LOG"
