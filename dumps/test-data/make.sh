#!/usr/bin/env bash
# Rebuilds the test data in this folder from the full corpora (the `shared/` folder beside the
# checkout): every file zstd-compressed (level 19) under the same relative path plus `.zst`.
#   bash dumps/test-data/make.sh [/path/to/shared]   (default: $GIGAGAS_CORPORA, else ../shared)
# The tests unpack it themselves (dumps/test-data/corpora.rs); see README.md for what is here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-${GIGAGAS_CORPORA:-$here/../../../shared}}"
src="$(cd "$src" && pwd)"

# Mainnet block folders: the ones the tests name, and one or more per fork (README.md).
blocks="46147 1150000 1796867 2462997 2688148 4864590 5283152 8889776 9068998 11814555
  12522062 15537393 15752489 18426253 19426587 19910734 19934116"
# Fixture folders, whole: the tests pin their counts.
fixtures="ethereum-tests eest/osaka eest/amsterdam-bal eest/bpo-transitions"

pack() { mkdir -p "$(dirname "$here/$1.zst")" && zstd -19 -q -f "$src/$1" -o "$here/$1.zst"; }

rm -rf "$here/mainnet-blocks" "$here/ethereum-tests" "$here/eest"
for b in $blocks; do
  for f in "$src/mainnet-blocks/$b"/*.json; do pack "mainnet-blocks/$b/$(basename "$f")"; done
done
for d in $fixtures; do
  (cd "$src" && find "$d" -type f -name '*.json' | sort) | while read -r f; do pack "$f"; done
done
cp "$src/mainnet-blocks/LICENSE-pevm" "$here/LICENSE-pevm"
du -sh --apparent-size "$here"
