#!/usr/bin/env bash
# The cold root's device reads per block (blocks.csv's `root_faults`: its units' major page
# faults) on the same blocks from two stores of one dump, built by one binary: BEFORE, the
# store unpadded (its trie table the witness's nodes alone, densely packed) and AFTER, the
# big-blocks store (padded to 4 GiB, its trie table at a client's node count). Cold, root
# after, batch 1, gas-used, 1 and 2 threads, read on demand (the root reads its own nodes)
# and prefetched `keys` and `full` (the batch's read takes the root's trie paths in, so the
# root's own count is near 0 and the cost shows in the read); the two stores alternate,
# ROUNDS rounds. Run from the repository root, after bench-configs/big-blocks.sh:
#
#   cargo build --release -p gigagas
#   bench-configs/root-faults.sh       # about 5 minutes a round at 300M on 2 cores
#
# Environment (all optional):
#   GIGAGAS  the binary (target/release/gigagas)   SIZE  300m or 1g (300m)
#   OUT      where the unpadded store and the results folders go (target/root-faults)
#   ROUNDS   rounds (2)
set -eu
BIN=${GIGAGAS:-target/release/gigagas}
SIZE=${SIZE:-300m}
OUT=${OUT:-target/root-faults}
ROUNDS=${ROUNDS:-2}
dump=target/big-blocks/mainnet-like-$SIZE.gigagas
after=target/big-blocks/store-$SIZE
before=$OUT/store-$SIZE-witness
mkdir -p "$OUT"
[ -d "$before" ] || "$BIN" state build "$dump" -o "$before"
for round in $(seq "$ROUNDS"); do
  for side in before after; do
    store=$before; [ "$side" = after ] && store=$after
    dir=$OUT/$SIZE-$side-$round
    rm -rf "$dir"
    "$BIN" run "$dump" --state "$store" --io on-demand,prefetch --bal-design keys,full \
      --cache cold --threads 1,2 --batch 1 --scheduler gas-used --state-root after \
      --warmup 0 --repeats 1 --no-baseline --no-memory --out "$dir" > "$dir.log" 2>&1
    # Per point: the mean root_faults and root_s of a block.
    awk -F, -v side="$side" -v round="$round" '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { k = $col["io"] " " $col["bal_design"] " " $col["threads"] "t"
        n[k]++; f[k] += $col["root_faults"]; r[k] += $col["root_s"] }
      END { for (k in n) printf "%s %s %s: root_faults %.1f, root %.1f ms a block\n",
              round, side, k, f[k] / n[k], 1e3 * r[k] / n[k] }' "$dir/blocks.csv" | sort
  done
done
