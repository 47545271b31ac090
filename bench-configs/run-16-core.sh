#!/usr/bin/env bash
# The 16-core measurements (the seed's table shapes, the harness's cost at 16 threads, the chunk
# cut against one item per claim, the access-list designs) in at most 8 minutes, on a machine
# with no Rust toolchain: a prebuilt binary and the committed dumps only. Run from the
# repository root:
#
#   GIGAGAS=path/to/gigagas OUT=/some/folder bench-configs/run-16-core.sh
#
# The binary: a release build that keeps its symbol table, so the CPU profiles name functions:
#
#   cargo build --release -p gigagas && strip --strip-debug target/release/gigagas
#
# (`strip --strip-debug` drops the line tables and keeps the symbols; a plain `strip` removes
# both, and the profiles then show bare addresses. The script says which one it was given.)
#
# Output: ONE archive, $OUT/16-core.tgz, holding machine.txt (CPU, cores, memory, disk, kernel
# tick, the binary), log.txt (every step's output), results/<config>/<run>/ (one results folder
# per `gigagas run`), profiles/ (flamegraphs and folded stacks) and processes/ (the concurrent
# single-thread runs). It is re-packed after every step, so a step that overruns its limit, or a
# machine taken back early, loses only what had not finished. The working folder (in TMPDIR) is
# removed once the last packing is done.
#
# Time: every step runs under its own `timeout`, in order of importance, and a step runs only if
# its whole limit fits in what is left of BUDGET_S (480 s); so the script ends within BUDGET_S
# whatever happens, and the steps that do not fit are logged as skipped. The limits of steps a–d
# (with the transfers dump) add up to 395 s; the lower-priority rest after them runs only as far
# as the budget goes (raise BUDGET_S on a longer lease).
#
#   a. mainnet (dumps/mainnet.gigagas) as one mega-block (batch 42) at 1 and 16 threads, ols,
#      gas-used, heavy-first and oracle: chunked claims, then one item per claim (`--one-item-claims`),
#      alternating twice (4 × 25 s)
#   b. transfers (generate --profile transfers --blocks 20 --seed 1; 30 s) at 1 and 16 threads,
#      batch 20, ols: chunked and one item per claim, alternating twice (4 × 40 s)
#   c. 16 separate single-thread transfers processes at once, one pinned per core, beside b's
#      16-thread runs (45 s)
#   d. --cpu-profile of mainnet, one mega-block, gas-used, at 1 and 16 threads (60 s)
#   e. the whole block on the big-blocks dumps (bench-configs/big-blocks.sh, made here if
#      target/big-blocks lacks them: about 13 GB): for 30M, 100M and 300M, a warm store run
#      with the root overlapped at 1 and 16 threads (prefetch and pipelined, full and keys),
#      and `gigagas simulate --state` validated at 1 and 16 threads, so the whole-block
#      projection made from one-thread profiles is checked at 16 (3 × 150 s, and the
#      generation's 240 s)
#   then, if time remains: erc20 at 1 and 16 threads; transfers pinned (--pin); mainnet at
#   1–16 threads; pevm beside gigagas (PEVM, BLOCKS); the sweeps mainnet-16c, batch-size-16c,
#   mainnet-like-16c; the I/O store, io-16c and bal-designs.
#
# Environment (all optional):
#   GIGAGAS    the binary (target/release/gigagas)
#   OUT        where the archive goes (target/16-core)
#   BUDGET_S   the whole script's time, seconds (480)
#   THREADS    the wide thread count and the number of concurrent processes (16); THREADS=2
#              smoke-tests the script on a 2-core machine
#   REPEATS    measured rounds per run (5)
#   STEPS      which of a, b, c, d, e and rest to run, e.g. "a" or "a b" (all); the machine's
#              description always runs
#   ONE_ITEM   0: leave out the one-item-per-claim runs (they are also left out, with a line in
#              the log, when the binary refuses --one-item-claims)
#   BASELINE   a second binary (e.g. a build of cf0977f, the last 16-core run) run in steps a
#              and b beside GIGAGAS's chunked runs, alternating, so old and new are paired
#              in one call
#   PEVM, BLOCKS  a pevm-peer binary and its blocks (the lower-priority pevm step)
#   NOTE       recorded with the sweeps
set -u
START=$(date +%s)
BIN=${GIGAGAS:-target/release/gigagas}
OUT=${OUT:-target/16-core}
BUDGET_S=${BUDGET_S:-480}
THREADS=${THREADS:-16}
REPEATS=${REPEATS:-5}
STEPS=${STEPS:-all}
ONE_ITEM=${ONE_ITEM:-1}
BASELINE=${BASELINE:-}
NOTE=${NOTE:-"16-core machine, nothing else running"}
# Kept free at the end for the last packing.
RESERVE_S=5
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gigagas-16-core.XXXXXX")
RESULTS=$WORK/results
ARCHIVE=$OUT/16-core.tgz
mkdir -p "$OUT" "$RESULTS" "$WORK/profiles" "$WORK/processes" target
LOG=$WORK/log.txt

# pack: the whole of $WORK into the one archive (written beside it, then renamed).
pack() {
  tar -czf "$ARCHIVE.part" -C "$WORK" . && mv -f "$ARCHIVE.part" "$ARCHIVE"
}

# left: seconds of the budget still free.
left() {
  echo $((BUDGET_S - RESERVE_S - ($(date +%s) - START)))
}

# want GROUP: whether STEPS asks for this group of steps.
want() {
  [ "$STEPS" = all ] || [[ " $STEPS " == *" $1 "* ]]
}

# step NAME LIMIT_S COMMAND...: run one step under its time limit (the kill after a grace of
# 3 s included), if the limit fits in what is left; log it; re-pack.
step() {
  local name=$1 limit=$2 rc
  shift 2
  if [ "$(left)" -lt "$limit" ]; then
    echo "== $name skipped: its limit of ${limit} s does not fit in the $(left) s left"
    return 0
  fi
  echo "== $name (limit ${limit} s, $(left) s left) start $(date -u +%T)"
  timeout --kill-after=3 $((limit - 3)) "$@"
  rc=$?
  echo "== $name rc=$rc end $(date -u +%T)"
  pack
}

# A binary that keeps its symbol table names the profiles' functions.
symbols() {
  if command -v readelf >/dev/null; then
    readelf -S "$1" 2>/dev/null | grep -q '\.symtab'
  else
    grep -qa '_ZN16gigagas_executor' "$1"
  fi
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc)"
  lscpu
  free -g
  uname -a
  echo "kernel tick (CONFIG_HZ): $(grep -s '^CONFIG_HZ=' "/boot/config-$(uname -r)" || echo unknown)"
  echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)"
  lsblk -d -o NAME,SIZE,ROTA,MODEL 2>/dev/null
  df -h . /tmp
  echo "binary: $BIN"
  timeout 10 "$BIN" --version
  sha256sum "$BIN"
  if symbols "$BIN"; then echo "symbol table: kept"; else echo "symbol table: NONE (build it with strip --strip-debug, not strip)"; fi
  if [ -n "$BASELINE" ]; then
    echo "baseline: $BASELINE"
    timeout 10 "$BASELINE" --version
    sha256sum "$BASELINE"
  fi
} >"$WORK/machine.txt" 2>&1
cat "$WORK/machine.txt"
timeout 10 "$BIN" --version >/dev/null || { echo "the binary does not start here"; pack && rm -rf -- "$WORK"; exit 1; }
symbols "$BIN" || echo "WARNING: $BIN has no symbol table: the profiles will show addresses only"

# The one-item variant: the hidden option of the binary under test.
ONE_ITEM_FLAG=--one-item-claims
if [ "$ONE_ITEM" != 1 ]; then
  ONE_ITEM_FLAG=
elif ! timeout 10 "$BIN" run "$ONE_ITEM_FLAG" --help >/dev/null 2>&1; then
  echo "NOTE: $BIN refuses $ONE_ITEM_FLAG: the one-item runs are left out"
  ONE_ITEM_FLAG=
fi

# ab CONFIG LIMIT_S DUMP FLAGS...: the chunked and one-item-per-claim runs of one dump (and the
# baseline's, if given), alternating, two rounds; each run a step of its own and a results
# folder results/CONFIG/<variant>-<round>/.
ab() {
  local config=$1 limit=$2 dump=$3 round
  shift 3
  for round in 1 2; do
    step "$config chunked $round" "$limit" "$BIN" run "$dump" "$@" --out "$RESULTS/$config/chunked-$round"
    if [ -n "$ONE_ITEM_FLAG" ]; then
      step "$config one-item $round" "$limit" "$BIN" run "$dump" "$@" "$ONE_ITEM_FLAG" \
        --out "$RESULTS/$config/one-item-$round"
    fi
    if [ -n "$BASELINE" ]; then
      step "$config baseline $round" "$limit" "$BASELINE" run "$dump" "$@" \
        --out "$RESULTS/$config/baseline-$round"
    fi
  done
}

# generate PROFILE: a 20-block synthetic dump in target/, kept if already there.
generate() {
  local profile=$1
  if [ -s "target/$profile.gigagas" ]; then
    echo "== target/$profile.gigagas exists: kept"
  else
    step "generate $profile" 30 "$BIN" generate --profile "$profile" --blocks 20 --seed 1 \
      -o "target/$profile.gigagas"
  fi
}

# processes DUMP N LIMIT_S: N single-thread processes at once, one pinned per core, each under
# the limit; their rows and the sum of their medians. Beside the same dump's N-thread run in
# one process (step b), this is what the machine itself costs a transaction.
processes() {
  local dump=$1 n=$2 limit=$3 i
  if [ "$(left)" -lt "$limit" ]; then
    echo "== $n processes skipped: its limit of ${limit} s does not fit in the $(left) s left"
    return 0
  fi
  echo "== $n concurrent 1-thread processes on $dump, one per core (limit ${limit} s) start $(date -u +%T)"
  for i in $(seq 0 $((n - 1))); do
    timeout --kill-after=3 $((limit - 3)) taskset -c "$i" "$BIN" run "$dump" --threads 1 --batch 20 \
      --scheduler ols --no-baseline --repeats "$REPEATS" --json "$WORK/processes/process-$i.json" \
      >"$WORK/processes/process-$i.txt" 2>&1 &
  done
  wait
  grep -hE '^\| 1 ' "$WORK"/processes/process-*.txt
  # The MGas/s column (the 6th field) is the median sample.
  grep -hE '^\| 1 ' "$WORK"/processes/process-*.txt |
    awk -F'|' '{ split($6, a, " "); s += a[1]; k++ } END { printf "== %d processes, medians summed: %.0f MGas/s\n", k, s }'
  echo "== $n processes end $(date -u +%T)"
  pack
}

# scaling NAME DUMP LIMIT_S [FLAGS...]: one dump as one mega-block at 1–THREADS threads, both
# schedulers, no baseline.
scaling() {
  local name=$1 dump=$2 limit=$3 threads=1 t
  shift 3
  for t in 2 4 8 "$THREADS"; do
    [ "$t" -le "$THREADS" ] && [[ ",$threads," != *",$t,"* ]] && threads="$threads,$t"
  done
  step "scaling $name" "$limit" "$BIN" run "$dump" --threads "$threads" --batch 1000 \
    --scheduler ols,gas-used --repeats "$REPEATS" --no-baseline --out "$RESULTS/scaling-16c/$name" "$@"
}

# sweep CONFIG LIMIT_S: one sweep config as a step. SWEEP_ARGS: extra sweep flags.
sweep() {
  # shellcheck disable=SC2086 # SWEEP_ARGS is a list of flags
  step "sweep $1" "$2" "$BIN" sweep "bench-configs/$1.toml" --results-dir "$RESULTS" --note "$NOTE" ${SWEEP_ARGS:-}
}

{
  # a. Real blocks: the chunk cut against one item per claim.
  if want a; then
    ab mainnet-ab-16c 25 dumps/mainnet.gigagas --threads "1,$THREADS" --batch 42 \
      --scheduler ols,gas-used,heavy-first,oracle --repeats "$REPEATS" --no-baseline
  fi
  # b. Transfers: chunks must keep their gain.
  if want b || want c; then
    generate transfers
  fi
  if want b; then
    ab transfers-ab-16c 40 target/transfers.gigagas --threads "1,$THREADS" --batch 20 \
      --scheduler ols --repeats "$REPEATS" --no-baseline
  fi
  # c. The machine's own share: THREADS single-thread processes beside b's THREADS-thread runs.
  if want c; then
    processes target/transfers.gigagas "$THREADS" 45
  fi
  # d. A profile of every worker (samples per CPU second at 1 and 16 threads).
  if want d; then
    step "profile mainnet" 60 "$BIN" run dumps/mainnet.gigagas --threads "1,$THREADS" --batch 42 \
      --scheduler gas-used --repeats 3 --no-baseline --cpu-profile "$WORK/profiles/mainnet" \
      --cpu-profile-ms 2000 --out "$RESULTS/profile-mainnet-16c"
  fi
  # e. The whole block (read, execution, root) on big blocks: measured at 1 and 16 threads, and
  # projected from one-thread profiles (the simulator's validation at 16 is the held-out check).
  if want e; then
    if [ ! -d target/big-blocks/store-300m ]; then
      step "big-blocks dumps" 240 env GIGAGAS="$BIN" OUT=target/big-blocks bench-configs/big-blocks.sh
    fi
    for gas in 30 100 300; do
      [ -d "target/big-blocks/store-${gas}m" ] || continue
      step "whole block ${gas}M run" 75 "$BIN" run "target/big-blocks/mainnet-like-${gas}m.gigagas" \
        --state "target/big-blocks/store-${gas}m" --no-memory --cache warm --io prefetch,pipelined \
        --bal-design full,keys --state-root overlapped --threads "1,$THREADS" --batch 1 \
        --scheduler ols --repeats 3 --no-baseline --out "$RESULTS/whole-block-16c/${gas}m"
      step "whole block ${gas}M simulate" 75 "$BIN" simulate "target/big-blocks/mainnet-like-${gas}m.gigagas" \
        --state "target/big-blocks/store-${gas}m" --io prefetch,pipelined --bal-design full,keys \
        --state-root overlapped --threads "1,2,$THREADS,32,64" --validate "1,$THREADS" \
        --profile-repeats 3 --repeats 3
    done
  fi
  # The rest, lower priority, as far as the budget goes.
  if want rest; then
    generate erc20
    step "erc20" 40 "$BIN" run target/erc20.gigagas --threads "1,$THREADS" --batch 20 \
      --scheduler ols,gas-used --repeats "$REPEATS" --no-baseline --out "$RESULTS/erc20-16c"
    step "transfers pinned" 40 "$BIN" run target/transfers.gigagas --threads "1,$THREADS" --batch 20 \
      --scheduler ols --repeats "$REPEATS" --no-baseline --pin --out "$RESULTS/transfers-pinned-16c"
    scaling mainnet dumps/mainnet.gigagas 60
    # pevm beside gigagas on the 32 shared mainnet blocks (a pevm-peer carried in $PEVM, the
    # blocks in $BLOCKS; its PASS line is the one to compare).
    if [ -n "${PEVM:-}" ] && [ -n "${BLOCKS:-}" ]; then
      for t in 4 8 16; do
        step "pevm ${t}t" 60 "$PEVM" "$BLOCKS" 4370000 5 "$t"
      done
    fi
    sweep mainnet-16c 90
    sweep batch-size-16c 60
    sweep mainnet-like-16c 300
    step "state build" 90 "$BIN" state build dumps/mainnet.gigagas -o target/state/mainnet-8g --pad-to 8GiB
    sweep io-16c 180
    # The access-list designs on the same store, warm and cold, at 1, 2 and 16 threads.
    sweep bal-designs 420
  fi
  echo "== done in $(($(date +%s) - START)) s; archive $ARCHIVE"
} 2>&1 | tee -a "$LOG"
pack && rm -rf -- "$WORK"
