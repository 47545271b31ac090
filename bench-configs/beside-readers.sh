#!/usr/bin/env bash
# Readers beside execution: `mainnet.gigagas` as one mega-block from a warm store, `keys`,
# prefetch and beside at 1 and 2 threads, memory in the same rounds, once with the default
# readers (beside: one per core the workers leave free; prefetch: 8) and once per
# `--io-threads` in READERS. Prints, per run and point, MGas/s, the ratio to memory at the
# same thread count, and the read's CPU per key: the pass's CPU time (user + system, median
# sample) less memory's at the same thread count, over the accounts and slots read. Run
# from the repository root on an idle machine:
#
#   gigagas state build dumps/mainnet.gigagas -o target/state/mainnet-2g --pad-to 2GiB
#   cargo build --release -p gigagas
#   bench-configs/beside-readers.sh
#
# Environment (all optional): GIGAGAS (target/release/gigagas), STORE
# (target/state/mainnet-2g), READERS ("1 2 4 8"), REPEATS (9), OUT (target/beside-readers).
set -eu
BIN=${GIGAGAS:-target/release/gigagas}
STORE=${STORE:-target/state/mainnet-2g}
READERS=${READERS:-1 2 4 8}
REPEATS=${REPEATS:-9}
OUT=${OUT:-target/beside-readers}
mkdir -p "$OUT"
for n in default $READERS; do
  flag=()
  [ "$n" = default ] || flag=(--io-threads "$n")
  "$BIN" run dumps/mainnet.gigagas --state "$STORE" --io prefetch,beside --cache warm \
    --bal-design keys --threads 1,2 --batch 42 --scheduler ols --warmup 2 \
    --repeats "$REPEATS" "${flag[@]}" --json "$OUT/readers-$n.json" > /dev/null
  python3 - "$OUT/readers-$n.json" "$n" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))['rows'] if r['mode'] == 'bal-parallel']
cpu = lambda r: r['summary']['median']['cpu']['user_s'] + r['summary']['median']['cpu']['system_s']
gas = lambda r: r['summary']['median']['ggas_per_s'] * 1e3
store_of = lambda r: r['state'].get('store') if isinstance(r.get('state'), dict) else None
memory = {r['threads']: r for r in rows if not store_of(r)}
for r in rows:
    store = store_of(r)
    if not store:
        continue
    m = memory[r['threads']]
    keys = r['io']['accounts'] + r['io']['slots']
    print('readers %-7s %dt %-8s %6.0f MGas/s  %.2fx memory  read CPU %.2f us/key' % (
        sys.argv[2], r['threads'], store['io'], gas(r), gas(r) / gas(m),
        (cpu(r) - cpu(m)) / keys * 1e6))
PY
done
