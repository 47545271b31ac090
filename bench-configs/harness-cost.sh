#!/usr/bin/env bash
# The harness's own cost before/after a change, on one machine: two gigagas binaries (OLD, NEW) in alternation on the
# transfers, erc20 and mainnet dumps as one mega-block at 1 and 2 threads (THREADS to change),
# then `gigagas compare` of the default run. Run from the repository root on an idle machine:
#
#   OLD=path/to/old/gigagas NEW=path/to/new/gigagas bench-configs/harness-cost.sh
#
# Writes results.json files into $OUT and prints, per point, MGas/s, wall, the summed
# transaction time ("work"), eff, the ratio to 1 thread, and (new binaries) CPU time in the window.
set -u
OLD=${OLD:?the binary before}; NEW=${NEW:?the binary after}
OUT=${OUT:-target/harness-cost}; THREADS=${THREADS:-1,2}
mkdir -p "$OUT"
[ -f "$OUT/transfers.gigagas" ] || "$NEW" generate --profile transfers --blocks 20 --seed 1 -o "$OUT/transfers.gigagas"
[ -f "$OUT/erc20.gigagas" ] || "$NEW" generate --profile erc20 --blocks 20 --seed 1 -o "$OUT/erc20.gigagas"
show() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r['rows']:
    m = x['summary']['median']; c = m.get('cpu'); v = x.get('vs_one_thread')
    print('  %2dt %-8s %7.0f MGas/s wall %6.1f ms work %6.1f ms eff %.2f %s %s' % (
        x.get('threads', 1), x.get('scheduler') or '-', m['ggas_per_s'] * 1e3, m['wall_s'] * 1e3,
        m['work_s'] * 1e3, m['efficiency'],
        'vs 1t %.2f [%.2f-%.2f]' % (v['median'], v['lo'], v['hi']) if v else '',
        'cpu %.1f+%.1f ms' % (c['user_s'] * 1e3, c['system_s'] * 1e3) if c else ''))
PY
}
for round in 1 2; do
  for side in OLD NEW; do
    bin=${!side}
    for spec in "transfers $OUT/transfers.gigagas 20 ols" "erc20 $OUT/erc20.gigagas 20 ols" \
                "mainnet dumps/mainnet.gigagas 42 ols,gas-used"; do
      set -- $spec
      echo "== $1 $side round $round"
      "$bin" run "$2" --threads "$THREADS" --batch "$3" --scheduler "$4" --repeats 10 \
        --no-baseline --json "$OUT/$1-$side-$round.json" >/dev/null 2>&1 && show "$OUT/$1-$side-$round.json"
    done
    "$bin" run --json "$OUT/default-$side-$round.json" >/dev/null 2>&1
  done
  "$NEW" compare "$OUT/default-OLD-$round.json" "$OUT/default-NEW-$round.json" | tail -3
done
