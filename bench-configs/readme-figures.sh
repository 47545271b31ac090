#!/usr/bin/env bash
# Every generated table of the README from one commit: builds the release binary, makes the
# state stores and dumps the sweeps read, runs each sweep the README shows (some with fewer
# rounds than their config, below), then renders the README's tables from the new folders
# (`gigagas report --readme README.md`). Run from the repository root, on an idle machine, with
# a clean tree, then commit results/ and README.md together:
#
#   bench-configs/readme-figures.sh
#
# Time on an idle 2-core machine: about an hour, estimated from the pass times recorded in the
# newest committed folders (every pass of every row: warm-ups and samples of at least
# min_sample_ms, at the rounds below) plus the untimed work between passes measured on the same
# machine (verification, loading; 0.1 s a pass on dumps/mainnet.gigagas, the schedule
# simulator's 7.5 min in schedulers):
#
#   release build (if not built)   ~10 min      state-root        3 rounds     ~2.5 min
#   stores and big-block dumps     ~3.5 min     state-root-store  3 rounds     ~3 min
#   mainnet        10 rounds       ~1 min       big-blocks        2 rounds     ~5 min
#   schedulers      5 rounds       ~10.5 min    benchmark-compute 2 rounds     ~21 min
#   io              5 rounds       ~2 min       pevm (if its peer is there)   ~10 min, most of
#   bal-designs     5 rounds       ~2.5 min       it building pevm-peer (fat LTO)
#
# Disk: two stores of 8 GiB under target/state/ and 13 GB under target/big-blocks/ (kept for the
# next run: a store or dump already there is reused).
#
# pevm (risechain/pevm, Block-STM) runs only where its peer is present: pevm-peer and pevm's
# sources in $PEERS, the snapshot blocks in $BLOCKS. Its PASS line is recorded as the note of
# results/pevm/ (pevm's figures beside gigagas's, on the same blocks, in the same session).
# Without them the pevm sweep is skipped with a line saying so, and the README's pevm table is
# the newest folder there is, which its line names, or a line saying there is none.
#
# Environment (all optional):
#   GIGAGAS     a release binary to use instead of building target/release/gigagas
#   PEERS       where pevm-peer and pevm are (../shared/peers)
#   BLOCKS      the mainnet snapshot blocks pevm runs (../shared/mainnet-blocks)
#   NOTE        a note recorded with every sweep (e.g. "idle 2-core VM")
#   ALLOW_DIRTY 1: run with uncommitted changes (the folders are then named `<commit>-dirty`)
set -eu
PEERS=${PEERS:-../shared/peers}
BLOCKS=${BLOCKS:-../shared/mainnet-blocks}
NOTE=${NOTE:-}
START=$(date +%s)

if [ -n "$(git status --porcelain)" ] && [ "${ALLOW_DIRTY:-0}" != 1 ]; then
  echo "the tree has uncommitted changes: the figures must come from a commit (ALLOW_DIRTY=1 runs anyway)" >&2
  exit 1
fi
if [ -n "${GIGAGAS:-}" ]; then
  BIN=$GIGAGAS
else
  cargo build --release -p gigagas
  BIN=${CARGO_TARGET_DIR:-target}/release/gigagas
fi

step() { echo "== $* ($(($(date +%s) - START)) s)"; }

# The inputs the sweeps read, made only where missing.
for dump in mainnet mainnet-like-witness; do
  if [ ! -d "target/state/$dump-8g" ]; then
    step "state store target/state/$dump-8g"
    "$BIN" state build "dumps/$dump.gigagas" -o "target/state/$dump-8g" --pad-to 8GiB
  fi
done
step "big-block dumps and stores"
GIGAGAS=$BIN bench-configs/big-blocks.sh

sweep() {
  local name=$1
  shift
  step "sweep $name $*"
  if [ -n "$NOTE" ]; then
    "$BIN" sweep "bench-configs/$name.toml" --note "$NOTE" "$@"
  else
    "$BIN" sweep "bench-configs/$name.toml" "$@"
  fi
}

sweep mainnet
sweep schedulers --repeats 5
sweep io
sweep bal-designs
sweep state-root --repeats 3
sweep state-root-store --repeats 3
sweep big-blocks --repeats 2
sweep benchmark-compute --repeats 2

# pevm beside gigagas on the Byzantium-to-Cancun blocks of $BLOCKS (pevm supports Byzantium on).
if [ -d "$PEERS/pevm-peer" ] && [ -d "$PEERS/pevm" ] && [ -d "$BLOCKS" ]; then
  W=target/pevm
  if [ ! -s "$W/byz.gigagas" ]; then
    step "pevm: importing the blocks"
    rm -rf "$W/byz" && mkdir -p "$W/byz"
    for d in "$BLOCKS"/*/; do
      if [ "$(basename "$d")" -ge 4370000 ] 2>/dev/null; then cp -r "$d" "$W/byz/"; fi
    done
    "$BIN" import snapshot "$W/byz" -o "$W/byz.gigagas"
  fi
  if [ ! -x "$W/bench/target/release/pevm-peer" ]; then
    step "pevm: building pevm-peer"
    rm -rf "$W/bench" "$W/pevm"
    cp -r "$PEERS/pevm-peer" "$W/bench" && cp -r "$PEERS/pevm" "$W/pevm"
    (cd "$W/bench" && CARGO_TARGET_DIR=target cargo build --release)
  fi
  step "pevm: its PASS line"
  PASS=$("$W/bench/target/release/pevm-peer" "$W/byz" 4370000 5 2 | grep '^PASS' | tr '\t' ' ' || true)
  if [ -n "$PASS" ]; then
    echo "$PASS"
    NOTE="${NOTE:+$NOTE; }pevm-peer on the same blocks, 2 threads: $PASS" sweep pevm
  else
    step "pevm skipped: pevm-peer printed no PASS line"
  fi
else
  step "pevm skipped: needs $PEERS/pevm-peer, $PEERS/pevm and $BLOCKS"
fi

step "README.md"
"$BIN" report --readme README.md
step "done"
