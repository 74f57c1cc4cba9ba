#!/usr/bin/env bash
# Benchmarks (not tests): prints figures and ratios against native work done
# in the same run. Usage: scripts/bench.sh [ITEMS]   (default 100000)
#   QUERYFS_BENCH_DIR   where generated data lives (default /tmp/queryfs-bench)
set -euo pipefail
cd "$(dirname "$0")/.."

items=${1:-100000}
scripts/install-deps.sh bindfs
swift build -c release
bin=$PWD/.build/release
dir=${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}
backing=$dir/backing-$items
mkdir -p "$dir"  # a fresh machine has none
export QUERYFS_BIN=$bin/queryfs

# Generated once per size: the same seed always gives the same data.
if [ ! -f "$backing/.complete" ]; then
    echo "generating $items sample bundles in $backing"
    rm -rf "$backing"
    "$bin/queryfs-sample" --count "$items" --seed 1 "$backing"
    touch "$backing/.complete"
fi

echo "== scan ($items items)"
"$bin/queryfs-bench" scan "$backing" --rounds 3

echo
echo "== queryfs ls BACKING by-modified ($items items), wall time, best of 3 (bar: < 3 s)"
best=0
for _ in 1 2 3; do
    start=$(date +%s%N)
    "$bin/queryfs" ls "$backing" by-modified >/dev/null
    elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
    if [ "$best" -eq 0 ] || [ "$elapsed" -lt "$best" ]; then best=$elapsed; fi
done
printf '  %d.%03d s\n' $((best / 1000)) $((best % 1000))

for extra in Benchmarks/*.sh; do
    [ -f "$extra" ] || continue
    # Against TMSU only when one is named (make bench TMSU=PATH): it is built from source, never shipped.
    [ "$(basename "$extra")" = tmsu-compare.sh ] && continue
    echo
    echo "== $(basename "$extra" .sh)"
    bash "$extra" "$backing"
done
if [ -n "${TMSU:-}" ]; then
    echo
    echo "== tmsu-compare"
    bash Benchmarks/tmsu-compare.sh "$TMSU" "$items"
fi
