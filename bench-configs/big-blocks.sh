#!/usr/bin/env bash
# The dumps and stores of bench-configs/big-blocks.toml: mainnet-like blocks
# of 300M gas (eight) and 1G gas (four), their tries padded to mainnet's depth
# (`--state-size`: 300 million accounts, seven levels of full branches above every touched
# path; `--storage-size`: the tokens' and the NFT's storage at 128 million slots, six levels),
# each with its own MDBX store padded to 4 GiB, its trie tables filled to a client's node count.
# Too big to commit (about 10 MB of dump, 4.4 GB of store each); everything is made from the repository alone, deterministically
# (the same seed gives byte-identical dumps). Run from the repository root:
#
#   cargo build --release -p gigagas
#   bench-configs/big-blocks.sh                  # about 3 minutes here
#   gigagas sweep bench-configs/big-blocks.toml  # results/big-blocks/
#
# Environment (all optional):
#   GIGAGAS  the binary (target/release/gigagas)
#   OUT      where the dumps and stores go (target/big-blocks; the config reads them there)
#   PAD      each store's size (4GiB)
#   SIZES    what to make: label:gas:blocks, space-separated ("300m:300000000:8 1g:1000000000:4";
#            30M and 100M dumps of ten blocks, as earlier sweeps ran them: 30m:30000000:10
#            100m:100000000:10)
# A dump or store already there is kept (delete it to make it again).
set -eu
BIN=${GIGAGAS:-target/release/gigagas}
OUT=${OUT:-target/big-blocks}
PAD=${PAD:-4GiB}
SIZES=${SIZES:-300m:300000000:8 1g:1000000000:4}
mkdir -p "$OUT"
for size in $SIZES; do
  IFS=: read -r name gas blocks <<< "$size"
  dump=$OUT/mainnet-like-${name}.gigagas
  store=$OUT/store-${name}
  if [ -s "$dump" ]; then
    echo "== $dump exists: kept"
  else
    echo "== generating $dump"
    "$BIN" generate --profile mainnet-like --gas-per-block "$gas" --blocks "$blocks" \
      --seed 45 --state-size --storage-size -o "$dump"
  fi
  if [ -d "$store" ]; then
    echo "== $store exists: kept (a store built from another dump is refused by the sweep)"
  else
    echo "== building $store"
    "$BIN" state build "$dump" -o "$store" --pad-to "$PAD"
  fi
done
