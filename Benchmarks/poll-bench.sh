#!/usr/bin/env bash
# Polling a network backing directory (issue 18): BACKING is bindfs (FUSE)
# over a plain folder, so changes made in the folder — as another machine
# would make them — raise no notification and are found by polling alone.
#   the daemon's CPU while idle for a minute, polling every item (default
#     interval, 5 s) against the same mount of the plain folder (no polling)
#   detection latency p50/p99: a payload rewritten in the folder until its
#     entry is first in by-modified through the mount
# Usage: bash Benchmarks/poll-bench.sh [SIZE | BACKING]   (default 100000; corpus
#   QUERYFS_BENCH_DIR/scale-SIZE, generated once; a BACKING is copied first). Environment: SAMPLES (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}"
source Benchmarks/lib/work.sh poll
export XDG_CACHE_HOME=$work/cache
size=${1:-100000}
samples=${SAMPLES:-10}
corpus=${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}/scale-$size
if [ -d "$size" ]; then  # a backing directory (scripts/bench.sh passes one): a copy, since probes rewrite payloads
    corpus=$work/copy
    cp -a "$size" "$corpus"
    size=$(find "$corpus" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l)
elif [ ! -f "$corpus/.complete" ]; then
    rm -rf "$corpus"
    "$bin_dir/queryfs-sample" --count "$size" --seed 1 "$corpus" >/dev/null
    touch "$corpus/.complete"
fi
bound=$work/bound
mkdir -p "$bound"
bindfs --no-allow-other "$corpus" "$bound"
trap 'fusermount3 -u "$bound" 2>/dev/null || fusermount3 -u -z "$bound" || true; cleanup' EXIT

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
idle_cpu() {  # CPU seconds the daemon used over 60 idle seconds
    local pid before; pid=$(daemon_pid); before=$(cpu_ticks "$pid")
    sleep 60
    awk -v a="$before" -v b="$(cpu_ticks "$pid")" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }'
}

"$queryfs" mount "$corpus" "$mnt"
sleep 5
local_cpu=$(idle_cpu)
"$queryfs" unmount "$mnt"

"$queryfs" mount "$bound" "$mnt"
sleep 5
polling=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["pollingSeconds"], s["backingFilesystem"])' "$mnt/.queryfs/status")
network_cpu=$(idle_cpu)

width=$(( ${#size} > 4 ? ${#size} : 4 ))
latencies=()
for i in $(seq "$samples"); do
    item=$(ls "$corpus" | grep "\.hpwebsite$" | sed -n "$(( (i * 7919) % (size / 2) + 1 ))p")
    # Unique to this run: a lookup of an older probe's title would resolve at once (stale names stay resolvable).
    title="Poll probe $$-$i"
    start=$(date +%s%N)
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>title</key><string>%s</string></dict></plist>\n' "$title" \
        > "$corpus/$item/payload.plist"
    entry="$mnt/by-modified/$(printf "%0${width}d" 1) $title.hpwebsite"
    until [ -L "$entry" ]; do
        sleep 0.02
        if [ $(( ($(date +%s%N) - start) / 1000000000 )) -ge 600 ]; then echo "not seen after 600 s: $entry" >&2; exit 1; fi
    done
    latencies+=($(( ($(date +%s%N) - start) / 1000000 )))
done
"$queryfs" unmount "$mnt"

sorted=$(printf '%s\n' "${latencies[@]}" | sort -n)
p50=$(echo "$sorted" | awk -v n="$samples" 'NR == int((n + 1) / 2)')
p99=$(echo "$sorted" | tail -n 1)
echo "== polling $size items on a network-style filesystem (bindfs; polling every $polling)"
echo "  daemon CPU per idle minute: ${network_cpu} s polling (= $(awk -v c="$network_cpu" 'BEGIN { printf "%.1f", c / 60 * 100 }') % of one core) vs ${local_cpu} s on the plain folder (notifications only)"
echo "  change made underneath -> first in by-modified: p50 ${p50} ms, p99 ${p99} ms (max of $samples samples)"
