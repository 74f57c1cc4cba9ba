#!/usr/bin/env bash
# The daemon's memory for what a walk of bundles/ makes it hold: RSS before
# and after `ls -l MOUNT/bundles` (a lookup, so a node, per entry), and the
# bytes per entry. Usage: bundles-walk-memory.sh [CORPUS] [QUERYFS_BINARY]
# (default: the 100,000-item corpus of `make bench`, the release build).
set -euo pipefail
corpus=${1:-/tmp/queryfs-bench/scale-100000}
binary=${2:-$(dirname "$0")/../.build/release/queryfs}
[ -d "$corpus" ] || { echo "no corpus at $corpus (Benchmarks/scale-bench.sh makes it)" >&2; exit 2; }
mountpoint=$(mktemp -d /tmp/queryfs-walk-XXXXXX)
trap '"$binary" unmount "$mountpoint" >/dev/null 2>&1 || true; rmdir "$mountpoint"' EXIT
"$binary" mount "$corpus" "$mountpoint" --trust-index >/dev/null 2>&1
sleep 8  # the background reconciliation ends and gives its memory back
pid=$(pgrep -f -- "--ready-fd 3 $corpus $mountpoint" | head -1)
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
before=$(rss)
entries=$(ls -l "$mountpoint/bundles" | tail -n +2 | wc -l)
sleep 2
after=$(rss)
echo "entries: $entries; daemon RSS before: $before kB, after ls -l bundles/: $after kB; per entry: $(( (after - before) * 1024 / entries )) bytes"
