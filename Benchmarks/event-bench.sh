#!/usr/bin/env bash
# inotify events for changes made in BACKING (issue 15), each against its bar:
#   change in BACKING returned → event read by an inotify watcher of by-modified,
#     p50/p99, at 1,000 and at ITEMS items (bar: p99 <= 50 ms, within 1.5x between sizes);
#   queryfs status MOUNTPOINT (the daemon's own answer) at both sizes (bar: < 100 ms);
#   the change latency of live-bench (write returned → visible in the view) at
#     ITEMS items with events on and with --no-events, alternating (bar: events cost <= 20 %).
# Usage: bash Benchmarks/event-bench.sh BACKING   (BACKING is copied, never changed)
set -euo pipefail
cd "$(dirname "$0")/.."
source_backing=$1
source Benchmarks/lib/work.sh event
items=$(find "$source_backing" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l)

copy_of() {  # count → a backing of that many items in $work/backing
    rm -rf "$work/backing"
    if [ "$1" -eq "$items" ]; then cp -a "$source_backing" "$work/backing"; else "$bin_dir/queryfs-sample" --count "$1" --seed 3 "$work/backing"; fi
    sync
}

for count in 1000 "$items"; do
    echo "== event latency at $count items"
    copy_of "$count"
    "$queryfs" mount "$work/backing" "$mnt"
    "$bench" events "$mnt" "$work/backing" --samples "${SAMPLES:-200}"
    # queryfs status MOUNTPOINT answers from the daemon (issue 16): best of 5.
    best=0
    for _ in 1 2 3 4 5; do
        start=$(date +%s%N); "$queryfs" status "$mnt" >/dev/null; elapsed=$(( ($(date +%s%N) - start) / 1000 ))
        if [ "$best" -eq 0 ] || [ "$elapsed" -lt "$best" ]; then best=$elapsed; fi
    done
    printf '  queryfs status MOUNTPOINT at %d items: %d.%03d ms, best of 5 (bar: < 100 ms)\n' "$count" $((best / 1000)) $((best % 1000))
    "$queryfs" unmount "$mnt"
done

echo "== change latency at $items items, events on and off (two mounts each, alternating)"
copy_of "$items"
for round in 1 2; do
    for mode in on off; do
        flags=""; [ "$mode" = off ] && flags="--no-events"
        "$queryfs" mount "$work/backing" "$mnt" $flags
        "$bench" latency "$mnt" "$work/backing" --samples "${SAMPLES:-100}" | sed "s/^/  [$mode] /" | tee -a "$work/latency-$mode"
        "$queryfs" unmount "$mnt"
    done
done
# p50 of each kind, averaged over the rounds: events on against off.
for kind in "payload rewrite" create rename delete; do
    on=$(grep "$kind " "$work/latency-on" | awk '{ for (i = 1; i <= NF; i++) if ($i == "p50") { s += $(i + 1); n++ } } END { print s / n }')
    off=$(grep "$kind " "$work/latency-off" | awk '{ for (i = 1; i <= NF; i++) if ($i == "p50") { s += $(i + 1); n++ } } END { print s / n }')
    awk -v k="$kind" -v on="$on" -v off="$off" 'BEGIN { printf "  %-16s p50 events on %.2f ms, off %.2f ms: %.2fx (bar: <= 1.20x)\n", k, on, off, on / off }'
done
