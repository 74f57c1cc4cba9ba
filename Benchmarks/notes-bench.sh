#!/usr/bin/env bash
# Notes at scale (issue 31): SIZE Markdown notes with front matter in FOLDERS
# nested folders (queryfs-sample --shape notes), each figure against native
# work on the same tree in the same run:
#   scan, cold (page cache dropped, root only) and warm: `queryfs ls BACKING
#     by-name --no-index` (every note listed, opened and its front matter
#     parsed) against `rg --files-with-matches '^tags:'` over the same tree
#     (bar: <= 1.5x rg's time) and a stat-only walk (`find -printf`)
#   the floor of that scan: Benchmarks/floors/front-matter-floor.c (C, the
#     same walk and reads, libyaml's events over each YAML block, nothing built)
#   the same listing with its index, warm: stamps compared (the default) and
#     --trust-index (no note opened: not a scan, what a second run costs)
#   mount to a live listing, cold and warm (no index file)
#   change latency p99 at the deepest folders (queryfs-bench notes-latency)
#     against the flat reading list of the same size (queryfs-bench latency)
#     (bar: within 1.5x)
#   daemon RSS once every view and tag folder was listed, per item, against
#     the reading list of the same size (bar: <= 1.2x)
# Usage: bash Benchmarks/notes-bench.sh [SIZE [FOLDERS]]   (default 100000 1000;
#   a folder instead of SIZE: as many notes as it has items, scripts/bench.sh's way)
#   Corpora are generated once under QUERYFS_BENCH_DIR (notes-SIZE-FOLDERS,
#   scale-SIZE); the latency samples rewrite, create and remove notes there.
# Environment: QUERYFS_BIN, QUERYFS_BENCH_DIR (default /tmp/queryfs-bench), SAMPLES (default 300)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh ripgrep gcc libyaml
mkdir -p "${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}"
source Benchmarks/lib/work.sh notes
export XDG_CACHE_HOME=$work/cache
size=${1:-100000}
folders=${2:-1000}
# scripts/bench.sh passes its reading list: the notes are as many as its items.
case $size in *[!0-9]*) size=$(find "$size" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l); folders=$(( size / 100 > 0 ? size / 100 : 1 )) ;; esac
samples=${SAMPLES:-300}
root=${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}

now_ns() { date +%s%N; }
ms_of() { local start; start=$(now_ns); "$@" >/dev/null 2>&1 || true; echo $(( ($(now_ns) - start) / 1000000 )); }
drop_caches() { if [ "$(id -u)" -eq 0 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi; }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
rss_kb() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
unmount() {
    local pid; pid=$(daemon_pid || true)
    "$queryfs" unmount "$mnt"
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}

notes=$root/notes-$size-$folders
if [ ! -f "$notes/.complete" ]; then
    rm -rf "$notes"
    echo "generating $size notes in $folders folders: $(ms_of "$bin_dir/queryfs-sample" --shape notes --count "$size" --folders "$folders" --seed 1 "$notes") ms"
    touch "$notes/.complete"
fi
flat=$root/scale-$size
if [ ! -f "$flat/.complete" ]; then
    rm -rf "$flat"
    echo "generating a reading list of $size items: $(ms_of "$bin_dir/queryfs-sample" --count "$size" --seed 1 "$flat") ms"
    touch "$flat/.complete"
fi
files=$(find "$notes" -name '*.md' -not -path '*/.*' | wc -l)
echo "== $files notes in $(find "$notes" -mindepth 1 -type d -not -path '*/.*' | wc -l) folders ($notes)"

# 1. The scan against rg and a stat walk, cold then warm (median of three).
drop_caches; scan_cold=$(ms_of "$queryfs" ls "$notes" by-name --no-index)
drop_caches; rg_cold=$(ms_of rg --files-with-matches '^tags:' "$notes")
drop_caches; find_cold=$(ms_of find "$notes" -printf '%s %T@\n')
scan_warm=$(median3 "$(ms_of "$queryfs" ls "$notes" by-name --no-index)" "$(ms_of "$queryfs" ls "$notes" by-name --no-index)" "$(ms_of "$queryfs" ls "$notes" by-name --no-index)")
rg_warm=$(median3 "$(ms_of rg --files-with-matches '^tags:' "$notes")" "$(ms_of rg --files-with-matches '^tags:' "$notes")" "$(ms_of rg --files-with-matches '^tags:' "$notes")")
find_warm=$(median3 "$(ms_of find "$notes" -printf '%s %T@\n')" "$(ms_of find "$notes" -printf '%s %T@\n')" "$(ms_of find "$notes" -printf '%s %T@\n')")
floor_bin=$work/front-matter-floor
gcc -O2 -o "$floor_bin" Benchmarks/floors/front-matter-floor.c -lyaml -lpthread
drop_caches; floor_cold=$(ms_of "$floor_bin" "$notes")
floor_warm=$(median3 "$(ms_of "$floor_bin" "$notes")" "$(ms_of "$floor_bin" "$notes")" "$(ms_of "$floor_bin" "$notes")")
"$floor_bin" "$notes"
"$queryfs" ls "$notes" by-name >/dev/null  # writes the index (XDG_CACHE_HOME is the work folder)
indexed_warm=$(median3 "$(ms_of "$queryfs" ls "$notes" by-name)" "$(ms_of "$queryfs" ls "$notes" by-name)" "$(ms_of "$queryfs" ls "$notes" by-name)")
trusted_warm=$(median3 "$(ms_of "$queryfs" ls "$notes" by-name --trust-index)" "$(ms_of "$queryfs" ls "$notes" by-name --trust-index)" "$(ms_of "$queryfs" ls "$notes" by-name --trust-index)")
listed=$("$queryfs" ls "$notes" by-name --no-index | wc -l)
rg_count=$(rg --files-with-matches '^tags:' "$notes" | wc -l)

# 2. Mount to a live listing, cold and warm.
drop_caches; mount_cold=$(ms_of "$queryfs" mount "$notes" "$mnt" --no-index); unmount
mount_warm=$(ms_of "$queryfs" mount "$notes" "$mnt" --no-index)

# 3. Memory once every view and tag folder was listed, then change latency at depth.
"$queryfs" views "$mnt" | cut -f1 | while IFS= read -r view; do ls -f "$mnt/$view" >/dev/null; done
sleep 3
notes_rss=$(rss_kb "$(daemon_pid)")
notes_items=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["items"])' "$mnt/.queryfs/status")
notes_latency=$("$bench" notes-latency "$mnt" "$notes" --samples "$samples")
echo "$notes_latency"
unmount

"$queryfs" mount "$flat" "$mnt" --no-index
"$queryfs" views "$mnt" | cut -f1 | while IFS= read -r view; do ls -f "$mnt/$view" >/dev/null; done
sleep 3
flat_rss=$(rss_kb "$(daemon_pid)")
flat_items=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["items"])' "$mnt/.queryfs/status")
flat_latency=$("$bench" latency "$mnt" "$flat" --samples "$samples")
echo "$flat_latency"
unmount

p99() { echo "$1" | awk -v kind="$2" 'index($0, "  " kind " ") == 1 { for (i = 1; i <= NF; i++) if ($i == "p99") { print $(i + 1); exit } }'; }
per_item() { awk -v kb="$1" -v n="$2" 'BEGIN { printf "%.0f", kb * 1024 / n }'; }
notes_per=$(per_item "$notes_rss" "$notes_items")
flat_per=$(per_item "$flat_rss" "$flat_items")
cat <<END

== notes: $files notes in $folders folders (queryfs $("$queryfs" --version))
  scan, cold:        queryfs ls --no-index ${scan_cold} ms   rg ${rg_cold} ms   find ${find_cold} ms   ratio to rg $(ratio "$scan_cold" "$rg_cold")x (bar <= 1.5x)
  scan, warm:        queryfs ls --no-index ${scan_warm} ms   rg ${rg_warm} ms   find ${find_warm} ms   ratio to rg $(ratio "$scan_warm" "$rg_warm")x (bar <= 1.5x)
                     (queryfs listed $listed items; rg matched $rg_count files with a tags: line)
  the scan's floor:  C + libyaml, nothing built: cold ${floor_cold} ms ($(ratio "$floor_cold" "$rg_cold")x rg)   warm ${floor_warm} ms ($(ratio "$floor_warm" "$rg_warm")x rg)
  with its index:    warm, stamps compared ${indexed_warm} ms ($(ratio "$indexed_warm" "$rg_warm")x rg)   --trust-index ${trusted_warm} ms ($(ratio "$trusted_warm" "$rg_warm")x rg)
  mount to live:     cold ${mount_cold} ms   warm ${mount_warm} ms
  change p99 (ms):   front matter $(p99 "$notes_latency" "front matter")   create $(p99 "$notes_latency" create)   delete $(p99 "$notes_latency" delete)
                     flat reading list: payload rewrite $(p99 "$flat_latency" "payload rewrite")   create $(p99 "$flat_latency" create)   delete $(p99 "$flat_latency" delete)
                     ratio (notes / flat): rewrite $(ratio "$(p99 "$notes_latency" "front matter")" "$(p99 "$flat_latency" "payload rewrite")")x   create $(ratio "$(p99 "$notes_latency" create)" "$(p99 "$flat_latency" create)")x   delete $(ratio "$(p99 "$notes_latency" delete)" "$(p99 "$flat_latency" delete)")x (bar <= 1.5x)
  daemon RSS:        notes $((notes_rss / 1024)) MB for $notes_items items ($notes_per B/item)   reading list $((flat_rss / 1024)) MB for $flat_items items ($flat_per B/item)   ratio per item $(ratio "$notes_per" "$flat_per")x (bar <= 1.2x)
END
