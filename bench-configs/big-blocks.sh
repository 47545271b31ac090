#!/usr/bin/env bash
# The dumps and stores of bench-configs/big-blocks.toml: mainnet-like blocks
# of 30M, 100M, 300M and 1G gas, ten of each, their tries padded to mainnet's depth
# (`--state-size`: 300 million accounts, seven levels of full branches above every touched
# path; `--storage-size`: the tokens' and the NFT's storage at 128 million slots, six levels),
# each with its own MDBX store padded to 4 GiB. Too big to commit (2 to 24 MB of dump, 4.4 GB of
# store each); everything is made from the repository alone, deterministically
# (the same seed gives byte-identical dumps). Run from the repository root:
#
#   cargo build --release -p gigagas
#   bench-configs/big-blocks.sh                  # 2.5 min here: 55 s generating, 2 min of stores
#   gigagas sweep bench-configs/big-blocks.toml  # results/big-blocks/
#
# Environment (all optional):
#   GIGAGAS  the binary (target/release/gigagas)
#   OUT      where the dumps and stores go (target/big-blocks; the config reads them there)
#   PAD      each store's size (4GiB)
#   BLOCKS   blocks per dump (10)
# A dump or store already there is kept (delete it to make it again).
set -eu
BIN=${GIGAGAS:-target/release/gigagas}
OUT=${OUT:-target/big-blocks}
PAD=${PAD:-4GiB}
BLOCKS=${BLOCKS:-10}
mkdir -p "$OUT"
# size label, gas per block
for size in 30m:30000000 100m:100000000 300m:300000000 1g:1000000000; do
  name=${size%%:*}
  gas=${size#*:}
  dump=$OUT/mainnet-like-${name}.gigagas
  store=$OUT/store-${name}
  if [ -s "$dump" ]; then
    echo "== $dump exists: kept"
  else
    echo "== generating $dump"
    "$BIN" generate --profile mainnet-like --gas-per-block "$gas" --blocks "$BLOCKS" \
      --seed 45 --state-size --storage-size -o "$dump"
  fi
  if [ -d "$store" ]; then
    echo "== $store exists: kept (a store built from another dump is refused by the sweep)"
  else
    echo "== building $store"
    "$BIN" state build "$dump" -o "$store" --pad-to "$PAD"
  fi
done
