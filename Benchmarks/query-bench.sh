#!/usr/bin/env bash
# Many views at once (issue 6): mount time with 0, QUERIES/10 and QUERIES
# configured views (.queryfs.toml), and the change latency of the live issue
# with the QUERIES views kept current; then QUERIES ad-hoc query folders over
# BACKING's items, each made by one lookup of MOUNT/query/<query>, and the
# same latency with every one of them kept current.
# Usage: bash Benchmarks/query-bench.sh BACKING [QUERIES]   (BACKING is copied, never changed)
set -euo pipefail
cd "$(dirname "$0")/.."
source_backing=$1
queries=${2:-1000}
source Benchmarks/lib/work.sh query
backing=$work/backing
cp -a "$source_backing" "$backing"
sync
items=$(find "$backing" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l)

tags=("swift" "linux" "kernel" "work" "recipes" "photography" "reference" "unicode" "to read" "long read")
query_number() {  # I -> query number I of a varied mix (its thresholds grow with I)
    local i=$1 tag=${tags[$(( $1 % 10 ))]}
    case $((i % 4)) in
        0) echo "tag:\"$tag\" size>$((i * 3))" ;;
        1) echo "-archived title~*$((i % 97))* sort:title" ;;
        2) echo "tag:\"$tag\" | size<$((i * 5)) sort:-size,title" ;;
        *) echo "archived or (tag:\"$tag\" and modified>2025-0$((i % 9 + 1))-01) sort:modified" ;;
    esac
}
echo "== mount time with configured views over $items items (bar: grows no more than linearly)"
for count in 0 $((queries / 10)) "$queries"; do
    # The configured mix repeats every 100 queries, so that N views cost N times one.
    { echo "[views]"; for i in $(seq 1 "$count"); do q=$(query_number $((i % 100 + 1))); echo "\"v$i\" = \"${q//\"/\\\"}\""; done; } \
        > "$backing/.queryfs.toml"
    start=$(date +%s%N)
    "$queryfs" mount "$backing" "$mnt"
    elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
    printf '  %5d views: %6d ms\n' "$count" "$elapsed"
    if [ "$count" = "$queries" ]; then
        echo "== change latency with the $count configured views kept current (bar: p99 <= 100 ms, as without them)"
        "$bench" latency "$mnt" "$backing" --samples "${SAMPLES:-100}"
    fi
    "$queryfs" unmount "$mnt"
done
rm "$backing/.queryfs.toml"

daemon_rss_mib() {  # resident memory of the daemon serving $mnt
    local pid
    pid=$(daemon_pid)
    awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status"
}

# A crawler (a file manager's search, a backup tool) probing 10,000 names
# under query/: at most --query-folders (256) stay live.
"$queryfs" mount "$backing" "$mnt"
before=$(daemon_rss_mib)
start=$(date +%s%N)
for i in $(seq 1 10000); do stat "$mnt/query/title~x$i" >/dev/null; done
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
after=$(daemon_rss_mib)
printf '== 10,000 distinct query/ lookups over %d items: %d ms; daemon RSS %s -> %s MiB; %d folders kept (bar: <= 256)\n' \
    "$items" "$elapsed" "$before" "$after" "$(ls "$mnt/query" | wc -l)"
echo "== change latency after them (bar: as without them)"
"$bench" latency "$mnt" "$backing" --samples "${SAMPLES:-100}"
"$queryfs" unmount "$mnt"

# Every one of the $queries folders kept live, whatever the default limit.
"$queryfs" mount "$backing" "$mnt" --query-folders "$queries"
start=$(date +%s%N)
for i in $(seq 1 "$queries"); do stat "$mnt/query/$(query_number "$i")" >/dev/null; done
made=$(date +%s%N)
printf '== %d query folders over %d items: made in %d ms (%.1f ms each)\n' "$queries" "$items" \
    $(( (made - start) / 1000000 )) "$(awk -v t=$(( made - start )) -v n="$queries" 'BEGIN { print t / n / 1e6 }')"
echo "== change latency with the $queries query folders kept current (bar: p99 <= 100 ms)"
"$bench" latency "$mnt" "$backing" --samples "${SAMPLES:-100}"
