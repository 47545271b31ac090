#!/usr/bin/env bash
# The simulator's results folders: `gigagas simulate --out` of the runs
# results/whole-block-sim/ holds as pasted terminal output, each a folder with
# simulation.json and table.md (`gigagas report FOLDER` renders it again), all under
# results/whole-block-sim/<date>-<commit>/. Run from the repository root of a clean tree, on
# an idle machine, after `cargo build --release -p gigagas`, `bench-configs/big-blocks.sh`
# (its 300M dump and 4 GiB store) and the 60-block 300M dump and store of
# bench-configs/persistence.toml (its header says how to make them):
#
#   bench-configs/whole-block-sim.sh
#
# About 55 minutes on a 2-core VM (the witness dump 12, the big blocks 3 each, reads beside
# execution 12, persistence on the 60 blocks about 20, the default dump 1). Environment (all
# optional):
#   BIN    the binary (target/release/gigagas)
#   OUT    the folder of this run (results/whole-block-sim/<YYYY-MM-DD>-<commit>)
#   STORE  the witness dump's store, built here if absent (target/state/mainnet-like-witness-8g)
#   BIG    the big-blocks folder (target/big-blocks)
#   MAINNET the default dump's 2 GiB store, built here if absent (target/state/mainnet-2g)
set -eu
BIN=${BIN:-target/release/gigagas}
OUT=${OUT:-results/whole-block-sim/$(date -u +%F)-$(git rev-parse --short=12 HEAD)}
STORE=${STORE:-target/state/mainnet-like-witness-8g}
BIG=${BIG:-target/big-blocks}
MAINNET=${MAINNET:-target/state/mainnet-2g}
[ -d "$STORE" ] || "$BIN" state build dumps/mainnet-like-witness.gigagas -o "$STORE" --pad-to 8GiB
[ -d "$MAINNET" ] || "$BIN" state build dumps/mainnet.gigagas -o "$MAINNET" --pad-to 2GiB
run() {
  name=$1
  shift
  echo "== $name: gigagas simulate $*"
  "$BIN" simulate "$@" --out "$OUT/$name" > /dev/null
}
run witness dumps/mainnet-like-witness.gigagas --state "$STORE" --io prefetch,pipelined \
  --bal-design full,keys --state-root off,after,overlapped --validate 1,2 --threads 1,2,16,32,64
big=(--io prefetch --bal-design full,keys --state-root overlapped --batch 1 --scheduler gas-used
  --validate 1,2 --threads 1,2,16,32,64)
run big-300m "$BIG/mainnet-like-300m.gigagas" --state "$BIG/store-300m" "${big[@]}"
run big-300m-cold "$BIG/mainnet-like-300m.gigagas" --state "$BIG/store-300m" --cache cold \
  "${big[@]}"
# Reads beside execution, warm and cold: the exposed read, the first item's wait.
run big-300m-beside "$BIG/mainnet-like-300m.gigagas" --state "$BIG/store-300m" --io beside \
  --bal-design full,keys --state-root overlapped --batch 1 --scheduler gas-used --validate 1,2 \
  --threads 1,2,16,32,64
run big-300m-beside-cold "$BIG/mainnet-like-300m.gigagas" --state "$BIG/store-300m" \
  --io prefetch,beside --bal-design full,keys --state-root overlapped --batch 1 \
  --scheduler gas-used --cache cold --validate 1,2 --threads 1,2,16,32,64
# The default dump as one mega-block on one reader, warm: beside against prefetch.
run mainnet-beside dumps/mainnet.gigagas --state "$MAINNET" --io prefetch,beside --io-threads 1 \
  --bal-design keys --state-root off --batch 42 --scheduler ols --validate 1,2 \
  --threads 1,2,16,32,64
# Persistence on 60 blocks (the background writer reaches its steady state): each block's
# persist wait and the drain, per block and in the background, beside none.
run big-300m-60-persist "$BIG/mainnet-like-300m-60.gigagas" --state "$BIG/store-300m-60" \
  --cache cold --io prefetch --bal-design keys --state-root overlapped --batch 1 \
  --scheduler gas-used --persist none,block,background --validate 1,2 --threads 1,2,16,32,64 \
  --repeats 1
run mainnet dumps/mainnet.gigagas --threads 1,2,16,64,192 --batch 1,42 --scheduler all,oracle
echo "wrote $OUT"
