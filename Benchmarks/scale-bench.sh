#!/usr/bin/env bash
# Scale (issue 17): the same figures at each size, side by side, each
# against native work on the same disk in the same run:
#   mount time without the index file, cold (page cache dropped, root
#     only) and warm; with it, cold and warm (stamps compared, then live) and
#     trusted (live at once; the background reconciliation's time too)
#   queryfs ls BACKING tag/Work without a mount: every item read
#     (--no-index), stamps compared with the index; with BACKING mounted:
#     answered by the mount's folder, and from the index file it keeps
#     current (--trust-index)
#   ls and ls -l of by-modified, of tag/Work and of a query folder: first and warm
#     (native: ls -f and ls -l of BACKING itself, as many entries)
#   daemon RSS once every view and tag folder was listed once (at once, and
#     3 s later: what the daemon keeps)
#   inotify watches held, and how changes are followed
#   change latency p50/p99 (queryfs-bench latency)
#   walk of bundles/ (stat everything, read every payload) with the daemon
#     held to 4,096 descriptors (prlimit), against the same walk of BACKING
#     and of bindfs (up to 100,000 items); errors counted (bar: none); the
#     requests the walk sent (the status file's kernelRequests) and what one
#     open and close costs through the mount against native
# Usage: bash Benchmarks/scale-bench.sh [SIZE | BACKING]…   (default: 100000 1000000)
#   SIZE gets its own corpus, QUERYFS_BENCH_DIR/scale-SIZE, generated once
#   (queryfs-sample --seed 1); a BACKING (scripts/bench.sh passes one) is
#   copied first. The latency figures change 2 × SAMPLES items of the
#   corpus (titles); nothing else is written.
#   With several sizes, the summary also gives each size's change latency
#   p99 against the first size's (issue 17's bar: 1,000,000 within 1.5× of 1,000).
# Environment: QUERYFS_BIN, QUERYFS_BENCH_DIR (default /tmp/queryfs-bench), SAMPLES (default 300)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}"
source Benchmarks/lib/work.sh scale
# bindfs's mount point: detached before the scratch folder is removed, which
# would otherwise reach through it into the corpus.
bind=$work/bindfs
mkdir -p "$bind"
trap 'if grep -q " $bind " /proc/mounts; then fusermount3 -u -z "$bind"; fi; cleanup' EXIT
# Index files of this run go here, not into the user's cache.
export XDG_CACHE_HOME=$work/cache
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
# p99 of 100 samples is the slowest one, so a single stray delay (another
# process taking a core of two for 10 ms) decides it; of 300 it is the third
# slowest. Each size's latency output lists its four slowest samples too.
samples=${SAMPLES:-300}

now_ns() { date +%s%N; }
ms_of() { local start; start=$(now_ns); "$@" >/dev/null 2>&1 || true; echo $(( ($(now_ns) - start) / 1000000 )); }
drop_caches() { if [ "$(id -u)" -eq 0 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi; }
unmount() {  # and wait for the daemon to have written its index
    local pid; pid=$(daemon_pid || true)
    "$queryfs" unmount "$mnt"
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}
rss_mb() { awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
status_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$mnt/.queryfs/status" "$1"; }
index_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["index"].get(sys.argv[2]))' "$mnt/.queryfs/status" "$1"; }
requests() { python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["kernelRequests"]))' "$mnt/.queryfs/status"; }
requests_since() {  # the requests sent since $1 (a requests reading), the status file's own reads left out
    python3 -c 'import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(", ".join(f"{k} {after[k] - before.get(k, 0)}" for k in sorted(after, key=lambda k: -(after[k] - before.get(k, 0))) if after[k] - before.get(k, 0) > 2))' "$1" "$(requests)"
}
open_close_us() {  # microseconds per open and close of one file, 20,000 times
    python3 -c 'import os, sys, time
n = 20000; start = time.perf_counter()
for _ in range(n): os.close(os.open(sys.argv[1], os.O_RDONLY))
print(f"{(time.perf_counter() - start) / n * 1e6:.1f}")' "$1"
}
walk() {  # prints the number of errors
    { find "$1" -printf '%s %T@\n' >/dev/null; find "$1" -name 'payload.*' -type f -print0 | xargs -0 cat >/dev/null; } 2>&1 | wc -l
}

declare -A fig
for index in "${!sizes[@]}"; do
    size=${sizes[$index]}
    corpus=${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}/scale-$size
    if [ -d "$size" ]; then  # a backing directory: a copy, so the latency figures change nothing of it
        corpus=$work/copy
        cp -a "$size" "$corpus"
        size=$(find "$corpus" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l)
        sizes[$index]=$size
        touch "$corpus/.complete"
        fig[$size,generate]="(copied)"
    elif [ ! -f "$corpus/.complete" ]; then
        rm -rf "$corpus"
        fig[$size,generate]=$(ms_of "$bin_dir/queryfs-sample" --count "$size" --seed 1 "$corpus")
        touch "$corpus/.complete"
    else
        fig[$size,generate]="(cached)"
    fi
    echo "== $size items ($corpus)"

    drop_caches
    fig[$size,mount_cold]=$(ms_of "$queryfs" mount "$corpus" "$mnt" --no-index)
    unmount
    fig[$size,mount_warm]=$(ms_of "$queryfs" mount "$corpus" "$mnt" --no-index)
    unmount
    # The index file: written by a first mount, then cold, warm and trusted starts from it.
    "$queryfs" mount "$corpus" "$mnt"
    unmount
    fig[$size,index_mb]=$(du -m "$XDG_CACHE_HOME"/queryfs/*.index | awk '{ s += $1 } END { print s }')
    drop_caches
    fig[$size,mount_cold_index]=$(ms_of "$queryfs" mount "$corpus" "$mnt")
    unmount
    fig[$size,mount_warm_index]=$(ms_of "$queryfs" mount "$corpus" "$mnt")
    unmount
    fig[$size,mount_trust]=$(ms_of "$queryfs" mount "$corpus" "$mnt" --trust-index)
    for _ in $(seq 600); do [ "$(index_field reconciled)" = True ] && break; sleep 0.1; done
    fig[$size,reconcile]=$(index_field reconciliationSeconds)
    unmount
    # Commands without a mount: everything read, then stamps compared with the index.
    fig[$size,cli_noindex]=$(ms_of "$queryfs" ls "$corpus" tag/Work --no-index)
    fig[$size,cli_stamps]=$(ms_of "$queryfs" ls "$corpus" tag/Work)
    "$queryfs" mount "$corpus" "$mnt"
    # BACKING mounted: the mount's folder answers (its first listing); with
    # an index option, the index file the mount keeps current.
    fig[$size,cli_live]=$(ms_of "$queryfs" ls "$corpus" tag/Work)
    fig[$size,cli_kept]=$(ms_of "$queryfs" ls "$corpus" tag/Work --trust-index)

    fig[$size,native_ls]=$(ms_of ls -f "$corpus")
    fig[$size,native_lsl]=$(ms_of ls -l "$corpus")
    query="query/title~*Guide*"
    for view in by-modified tag/Work "$query"; do
        fig[$size,ls_first,$view]=$(ms_of ls "$mnt/$view")
        fig[$size,lsl_first,$view]=$(ms_of ls -l "$mnt/$view")
        fig[$size,lsl_warm,$view]=$(ms_of ls -l "$mnt/$view")
        fig[$size,ls_warm,$view]=$(ms_of ls "$mnt/$view")
        fig[$size,entries,$view]=$(ls -f "$mnt/$view" | grep -vc '^\.\.\?$' || true)
    done
    # Every built-in view and tag folder listed once, then the daemon's memory.
    "$queryfs" views "$mnt" | cut -f1 | while IFS= read -r view; do ls -f "$mnt/$view" >/dev/null; done
    pid=$(daemon_pid)
    fig[$size,rss_at_once]=$(rss_mb "$pid")
    # What stays: a query folder's evaluation cache lives 2 s, and listings'
    # garbage goes back after a quiet second (DEVELOPERS.md, the memory section).
    sleep 3
    fig[$size,rss]=$(rss_mb "$pid")
    fig[$size,watches]=$(status_field inotifyWatches)
    fig[$size,mode]=$(status_field changeNotification)
    latency=$("$bench" latency "$mnt" "$corpus" --samples "$samples")
    echo "$latency"
    fig[$size,latency]=$(echo "$latency" | awk '/p50 .* p99 / {
        p50 = ""; p99 = ""  # the first of each: the bar text names p99 too
        for (i = 1; i <= NF; i++) { if ($i == "p50" && p50 == "") p50 = $(i + 1); if ($i == "p99" && p99 == "") p99 = $(i + 1) }
        printf "%s%s p50 %s p99 %s", sep, $1 == "payload" ? "rewrite" : $1, p50, p99; sep = ", " }')
    for kind in rewrite create rename delete; do
        fig[$size,p99,$kind]=$(echo "${fig[$size,latency]}" | tr ',' '\n' | awk -v kind="$kind" '$1 == kind { print $5 }')
    done
    unmount

    # The walk, warm on both sides (one untimed run first), the daemon held to 4,096 descriptors.
    walk "$corpus" >/dev/null
    fig[$size,native_walk]=$(ms_of walk "$corpus")
    prlimit --nofile=4096:4096 "$queryfs" mount "$corpus" "$mnt"
    fig[$size,walk_errors_first]=$(walk "$mnt/bundles")
    before=$(requests)
    start=$(now_ns)
    fig[$size,walk_errors]=$(walk "$mnt/bundles")
    fig[$size,walk]=$(( ($(now_ns) - start) / 1000000 ))
    fig[$size,walk_requests]=$(requests_since "$before")
    fig[$size,walk_fds]=$(ls "/proc/$(daemon_pid)/fd" | wc -l)
    # What one round trip costs here: the floor under every request above.
    payload=$(find "$corpus" -mindepth 2 -maxdepth 2 -name 'payload.*' -print -quit)
    fig[$size,open_native]=$(open_close_us "$payload")
    fig[$size,open_mount]=$(open_close_us "$mnt/bundles/${payload#"$corpus"/}")
    unmount
    # bindfs, the general FUSE mirror, walked the same way (warm); its walk
    # at a million items takes most of an hour, so only up to 100,000.
    if [ "$size" -le 100000 ] && command -v bindfs >/dev/null; then
        bindfs "$corpus" "$bind"
        walk "$bind" >/dev/null
        fig[$size,bindfs_walk]=$(ms_of walk "$bind")
        fusermount3 -u "$bind"
    else
        fig[$size,bindfs_walk]="not run"
    fi
done

# "-" where either side was not measured.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
echo
echo "== summary (ms unless said; ratios against native work in the same run)"
for size in "${sizes[@]}"; do
    echo "-- $size items"
    echo "  generate corpus:            ${fig[$size,generate]} ms"
    echo "  mount, no index, cold / warm:    ${fig[$size,mount_cold]} / ${fig[$size,mount_warm]}"
    echo "  mount from the index (${fig[$size,index_mb]} MB), cold / warm: ${fig[$size,mount_cold_index]} / ${fig[$size,mount_warm_index]} ($(ratio "${fig[$size,mount_warm_index]}" "${fig[$size,mount_warm]}") of no index)"
    echo "  mount trusting the index:        ${fig[$size,mount_trust]} ($(ratio "${fig[$size,mount_trust]}" "${fig[$size,mount_warm]}") of no index; reconciled in the background in ${fig[$size,reconcile]} s)"
    echo "  queryfs ls BACKING tag/Work:     every item read ${fig[$size,cli_noindex]}, stamps compared ${fig[$size,cli_stamps]}, mounted: the mount's folder ${fig[$size,cli_live]} ($(ratio "${fig[$size,cli_live]}" "${fig[$size,cli_noindex]}") of reading), the index it keeps ${fig[$size,cli_kept]}"
    for view in by-modified tag/Work "query/title~*Guide*"; do
        printf '  %-28s ls first %6s warm %6s (native ls -f %s: %s)   ls -l first %6s warm %6s (%s of warm; native ls -l %s)\n' \
            "$view (${fig[$size,entries,$view]})" "${fig[$size,ls_first,$view]}" "${fig[$size,ls_warm,$view]}" \
            "${fig[$size,native_ls]}" "$(ratio "${fig[$size,ls_warm,$view]}" "${fig[$size,native_ls]}")" \
            "${fig[$size,lsl_first,$view]}" "${fig[$size,lsl_warm,$view]}" \
            "$(ratio "${fig[$size,lsl_first,$view]}" "${fig[$size,lsl_warm,$view]}")" "${fig[$size,native_lsl]}"
    done
    echo "  daemon RSS, every view listed: ${fig[$size,rss]} MB 3 s later (${fig[$size,rss_at_once]} MB at once)"
    echo "  changes followed by:        ${fig[$size,mode]}, ${fig[$size,watches]} inotify watches"
    echo "  change latency (ms):        ${fig[$size,latency]}"
    if [ "$size" != "${sizes[0]}" ]; then
        echo "    p99 against ${sizes[0]} items: $(for kind in rewrite create rename delete; do printf '%s %s  ' "$kind" "$(ratio "${fig[$size,p99,$kind]}" "${fig[${sizes[0]},p99,$kind]}")"; done)"
    fi
    echo "  walk of bundles/ (4,096 fds): ${fig[$size,walk]} vs native ${fig[$size,native_walk]} = $(ratio "${fig[$size,walk]}" "${fig[$size,native_walk]}"), errors ${fig[$size,walk_errors_first]} first / ${fig[$size,walk_errors]} warm, daemon fds after ${fig[$size,walk_fds]}; bindfs ${fig[$size,bindfs_walk]} ($(ratio "${fig[$size,bindfs_walk]}" "${fig[$size,native_walk]}"))"
    echo "    requests the warm walk sent: ${fig[$size,walk_requests]}"
    echo "    one open and close of a payload: ${fig[$size,open_mount]} us through the mount, ${fig[$size,open_native]} us native"
done
