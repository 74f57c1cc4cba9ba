#!/usr/bin/env bash
# Live updates and coordination (issues 4 and 5), each against its own bar:
#   change latency through the mount (write in BACKING returned → visible), p50/p99,
#     for payload rewrite, create, delete and rename, at 1,000 and at ITEMS items;
#   a burst of 10,000 payload rewrites at ITEMS items: time until the views settle;
#   small-file write/read throughput through bundles/ with and without coordination.
# Usage: bash Benchmarks/live-bench.sh BACKING   (BACKING is copied, never changed)
set -euo pipefail
cd "$(dirname "$0")/.."
source_backing=$1
source Benchmarks/lib/work.sh live
items=$(find "$source_backing" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l)

latency_at() {  # count
    local backing=$work/latency-$1
    if [ "$1" -eq "$items" ]; then cp -a "$source_backing" "$backing"; else "$bin_dir/queryfs-sample" --count "$1" --seed 3 "$backing"; fi
    # The copy's write-back (hundreds of MB at 100,000 items) would otherwise
    # run under the first samples and measure the disk, not queryfs.
    sync
    "$queryfs" mount "$backing" "$mnt"
    "$bench" latency "$mnt" "$backing" --samples "${SAMPLES:-200}"
    "$queryfs" unmount "$mnt"
    rm -rf "$backing"
}

echo "== change latency at 1000 items"
latency_at 1000
echo "== change latency at $items items (bar: within 1.5x of the 1000-item figures)"
latency_at "$items"

burst=$(( items < 10000 ? items : 10000 ))
echo "== burst: $burst payload rewrites at $items items"
backing=$work/burst
cp -a "$source_backing" "$backing"
sync
"$queryfs" mount "$backing" "$mnt"
start=$(date +%s%N)
n=0
for bundle in "$backing"/*/; do
    n=$((n + 1))
    printf '<?xml version="1.0"?><plist version="1.0"><dict><key>webTitle</key><string>burst %d</string><key>tags</key><array><string>burst</string></array></dict></plist>' "$n" > "$bundle/payload.plist"
    [ "$n" -ge "$burst" ] && break
done
written=$(date +%s%N)
deadline=$(( written + 60000000000 ))
until [ "$(ls "$mnt/tag/burst" 2>/dev/null | wc -l)" -eq "$burst" ]; do
    if [ "$(date +%s%N)" -gt "$deadline" ]; then echo "  FAILED: tag/burst never reached $burst entries in 60 s"; break; fi
    sleep 0.01
done
settled=$(date +%s%N)
printf '  writes took %d ms; views settled %d ms after the last write returned (bar: <= 3000 ms)\n' \
    $(( (written - start) / 1000000 )) $(( (settled - written) / 1000000 ))
"$queryfs" unmount "$mnt"

echo "== small files through bundles/ (4 KiB, 2000 files; best of 3 mounts x 3 rounds, alternating): coordination cost"
first=$(find "$backing" -mindepth 1 -maxdepth 1 -type d ! -name ".*" -printf "%f\n" -quit)
native=$("$bench" smallfiles "$backing/$first")
best() {  # "write read" pairs on stdin -> the best of each
    awk '{ if ($1 > w) w = $1; if ($2 > r) r = $2 } END { print w, r }'
}
runs_with=() runs_without=()
for round in 1 2 3; do
    "$queryfs" mount "$backing" "$mnt"
    runs_with+=("$("$bench" smallfiles "$mnt/bundles/$first")")
    "$queryfs" unmount "$mnt"
    "$queryfs" mount "$backing" "$mnt" --no-coordination
    runs_without+=("$("$bench" smallfiles "$mnt/bundles/$first")")
    "$queryfs" unmount "$mnt"
done
coordinated=$(printf '%s\n' "${runs_with[@]}" | best)
uncoordinated=$(printf '%s\n' "${runs_without[@]}" | best)
awk -v c="$coordinated" -v u="$uncoordinated" -v n="$native" 'BEGIN {
    split(c, cw, " "); split(u, uw, " "); split(n, nw, " ")
    printf "  write: %d files/s coordinated, %d without = %.2fx (cost %.0f%%; bar <= 10%%); native %d\n", cw[1], uw[1], cw[1] / uw[1], (1 - cw[1] / uw[1]) * 100, nw[1]
    printf "  read:  %d files/s coordinated, %d without = %.2fx (reads take no lock); native %d\n", cw[2], uw[2], cw[2] / uw[2], nw[2]
}'
