#!/usr/bin/env bash
# The cold root's device reads on the same blocks from two builds' stores: BEFORE (a build
# whose trie table holds the witness's nodes alone, e.g. 9517675) and AFTER (this one: the
# padded tries' virtual nodes too, a client's node count). Each store is built by its own
# binary from the same dump at the same --pad-to; each point is one cold pass (1 thread,
# batch 1, gas-used), root off and after, on demand and prefetched (`keys`), the two builds
# alternating. The root's device reads are the pass's major page faults (results.json's
# `major_faults`, the timed window's) with the root after less those with it off; divide
# by the blocks for a figure per block. Run from the repository root:
#
#   git worktree add ../gigagas-before 9517675 && (cd ../gigagas-before && cargo build --release -p gigagas)
#   cargo build --release -p gigagas
#   BEFORE=../gigagas-before/target/release/gigagas bench-configs/trie-tables.sh
#
# Environment (all optional):
#   AFTER   the binary of this build (target/release/gigagas)
#   OUT     where the dump, stores, configs and results go (target/trie-tables)
#   GAS     gas per block (300000000)   BLOCKS  blocks (10)   PAD  each store's size (4GiB)
#   ROUNDS  rounds of every point (2)
set -eu
BEFORE=${BEFORE:?the binary of the build before, e.g. ../gigagas-before/target/release/gigagas}
AFTER=${AFTER:-target/release/gigagas}
OUT=${OUT:-target/trie-tables}
GAS=${GAS:-300000000}
BLOCKS=${BLOCKS:-10}
PAD=${PAD:-4GiB}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
dump=$OUT/mainnet-like.gigagas
[ -s "$dump" ] || "$AFTER" generate --profile mainnet-like --gas-per-block "$GAS" \
  --blocks "$BLOCKS" --seed 45 --state-size --storage-size -o "$dump"
for side in before after; do
  bin=$BEFORE; [ "$side" = after ] && bin=$AFTER
  [ -d "$OUT/store-$side" ] || "$bin" state build "$dump" -o "$OUT/store-$side" --pad-to "$PAD"
  for root in off after; do
    for io in on-demand prefetch; do
      cat > "$OUT/$side-$root-$io.toml" <<EOF
description = "cold root device reads: the $side build's store, root $root, $io"
dumps = ["$dump"]
stores = ["$OUT/store-$side"]
io = ["$io"]
cache = ["cold"]
bal_design = ["keys"]
memory = false
threads = [1]
batch = [1]
schedulers = ["gas-used"]
state_root = ["$root"]
sequential = false
warmup = 0
repeats = 1
min_sample_ms = 0
EOF
    done
  done
done
echo "round side root io major_faults"
for round in $(seq "$ROUNDS"); do
  for io in on-demand prefetch; do
    for root in off after; do
      for side in before after; do
        bin=$BEFORE; [ "$side" = after ] && bin=$AFTER
        dir=$OUT/results-$side-$root-$io-$round
        rm -rf "$dir"
        "$bin" sweep "$OUT/$side-$root-$io.toml" --results-dir "$dir" > "$dir.log" 2>&1
        faults=$(grep -o '"major_faults": [0-9.]*' "$(find "$dir" -name results.json)" | head -1)
        echo "$round $side $root $io ${faults#*: }"
      done
    done
  done
done
