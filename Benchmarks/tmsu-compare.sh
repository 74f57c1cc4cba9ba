#!/usr/bin/env bash
# queryfs against TMSU (issue 34), side by side in one run on the same
# generated reading list: every tag an item has in its payload is given to
# the same bundle folder in a TMSU database, then each row is timed for both
# and printed with its ratio (queryfs / TMSU; bar: <= 1.0x), with the floor a
# freshness check cannot go under — a stat-only walk of the same tree.
#   ls and ls -l of a tag folder, mounted; a two-tag query folder, mounted
#   `queryfs ls BACKING tag/T` (mount up; none: stamps compared; --trust-index)
#     against `tmsu files T`
#   mount to a live listing of the tag folder (--trust-index; default)
#   daemon RSS once every tag folder was listed with ls -l
# Usage: bash Benchmarks/tmsu-compare.sh TMSU_BINARY [SIZE] [TAG] [TAG2]
#   (default 100000, Work, and the tag sharing most items with it).
#   TMSU is not packaged in Debian; build it from source in GOPATH mode with
#   Debian's Go packages (the lines this machine used; nothing of it is committed):
#     apt-get install golang-go golang-github-hanwen-go-fuse-dev \
#       golang-github-mattn-go-sqlite3-dev golang-golang-x-crypto-dev
#     mkdir -p /tmp/gopath/src/github.com/oniony
#     git clone https://github.com/oniony/TMSU /tmp/gopath/src/github.com/oniony/TMSU
#     cd /tmp/gopath/src/github.com/oniony/TMSU
#     GO111MODULE=off GOPATH=/tmp/gopath:/usr/share/gocode go build -o /tmp/tmsu-bin/tmsu .
#   (TMSU 0.8.0, Go 1.19.8.)
# Environment: QUERYFS_BIN, QUERYFS_BENCH_DIR (default /tmp/queryfs-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
tmsu=$(readlink -f "${1:?usage: tmsu-compare.sh TMSU_BINARY [SIZE] [TAG] [TAG2]}")
size=${2:-100000}
tag=${3:-Work}
mkdir -p "${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}"
source Benchmarks/lib/work.sh tmsu
export XDG_CACHE_HOME=$work/cache
tmnt=$work/tmsu-mnt
# `tmsu init DIR` makes DIR/.tmsu/db: a folder of its own, never BACKING.
db=$work/tmsu/.tmsu/db
mkdir -p "$tmnt"
trap 'if grep -q " $tmnt " /proc/mounts; then fusermount -u -z "$tmnt" 2>/dev/null || fusermount3 -u -z "$tmnt"; fi; cleanup' EXIT

corpus=${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}/scale-$size
if [ ! -f "$corpus/.complete" ]; then
    rm -rf "$corpus"
    "$bin_dir/queryfs-sample" --count "$size" --seed 1 "$corpus" >/dev/null
    touch "$corpus/.complete"
fi

if awk -v c="$corpus" '$1 == c' /proc/mounts | grep -q .; then
    echo "tmsu-compare: $corpus is mounted already; unmount it first (the rows without a mount would ask it)" >&2
    exit 1
fi

now_ns() { date +%s%N; }
seconds_of() { local start; start=$(now_ns); "$@" >/dev/null 2>&1 || true; awk -v ns=$(( $(now_ns) - start )) 'BEGIN { printf "%.3f", ns / 1e9 }'; }
best3() { local a b c; a=$(seconds_of "$@"); b=$(seconds_of "$@"); c=$(seconds_of "$@"); printf '%s\n' "$a" "$b" "$c" | sort -g | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
rss_mb() { awk -v field="${2:-VmRSS}:" '$1 == field { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }  # PID [FIELD of /proc/PID/status]
row() { printf '  %-58s queryfs %9s   TMSU %9s   %s\n' "$1" "$2" "$3" "$(ratio "$2" "$3")"; }
tmsu_pid() { pgrep -f -- "$tmnt" | while read -r pid; do [ "$(readlink "/proc/$pid/exe")" = "$tmsu" ] && echo "$pid"; done | head -1; }

# 1. The same tags in TMSU: each tag folder of a queryfs mount names its bundles.
"$queryfs" mount "$corpus" "$mnt"
tags=$(ls "$mnt/tag")
# The second tag: the one without a space sharing most items with the first (TMSU's query folder names it as is).
tag2=${4:-$(grep -v ' ' <<<"$tags" | while IFS= read -r other; do [ "$other" = "$tag" ] && continue; printf '%s %s\n' "$(ls "$mnt/query/tag:$tag tag:$other" | wc -l)" "$other"; done | sort -rn | awk 'NR == 1 { print $2 }')}
start=$(now_ns)
mkdir -p "$work/tmsu"; "$tmsu" init "$work/tmsu" >/dev/null 2>&1
while IFS= read -r name; do
    # TMSU tag names take no spaces here: "to read" is to_read on both sides of the comparison that uses it.
    tmsu_name=${name// /_}
    find "$mnt/tag/$name" -mindepth 1 -maxdepth 1 -type l -printf '%l\n' | sed "s|.*/|$corpus/|" | tr '\n' '\0' \
        | xargs -0 -r -n 2000 "$tmsu" --database="$db" tag --tags="$tmsu_name" >/dev/null 2>&1
done < <(ls "$mnt/tag")
echo "== $size items, $(echo "$tags" | wc -l) tags; TMSU tagged in $(awk -v ns=$(( $(now_ns) - start )) 'BEGIN { printf "%.0f", ns / 1e9 }') s"
echo "   tag '$tag' ($(ls "$mnt/tag/$tag" | wc -l) items), query '$tag and $tag2' ($(ls "$mnt/query/tag:$tag tag:$tag2" | wc -l) items); best of 3, warm page cache"

# 2. Mounted: both up at once.
"$tmsu" --database="$db" mount "$tmnt"
for _ in $(seq 100); do [ -d "$tmnt/tags" ] && break; sleep 0.1; done
row "ls of a tag folder, mounted" "$(best3 ls "$mnt/tag/$tag")" "$(best3 ls "$tmnt/tags/$tag")"
row "ls -l of that folder" "$(best3 ls -l "$mnt/tag/$tag")" "$(best3 ls -l "$tmnt/tags/$tag")"
row "two-tag query folder" "$(best3 ls "$mnt/query/tag:$tag tag:$tag2")" "$(best3 ls "$tmnt/queries/$tag and $tag2")"
row "queryfs ls BACKING tag/$tag, mount up / tmsu files $tag" "$(best3 "$queryfs" ls "$corpus" "tag/$tag")" "$(best3 "$tmsu" --database="$db" files "$tag")"
while IFS= read -r name; do ls -l "$mnt/tag/$name" >/dev/null; ls -l "$tmnt/tags/${name// /_}" >/dev/null 2>&1 || true; done <<<"$tags"
sleep 2
row "daemon RSS (MB) once every tag folder was listed (ls -l)" "$(rss_mb "$(daemon_pid)")" "$(rss_mb "$(tmsu_pid)")"
# Of which private memory (heap, stacks) and mapped files (mostly the program's own code, shared with the page cache).
row "  of it anonymous (heap, stacks), MB" "$(rss_mb "$(daemon_pid)" RssAnon)" "$(rss_mb "$(tmsu_pid)" RssAnon)"
row "  of it mapped files (code), MB" "$(rss_mb "$(daemon_pid)" RssFile)" "$(rss_mb "$(tmsu_pid)" RssFile)"
fusermount -u "$tmnt" 2>/dev/null || fusermount3 -u "$tmnt"
pid=$(daemon_pid); "$queryfs" unmount "$mnt"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done

# 3. Without a mount, and the start.
tmsu_files=$(best3 "$tmsu" --database="$db" files "$tag")
row "the same without a mount (stamps compared)" "$(best3 "$queryfs" ls "$corpus" "tag/$tag")" "$tmsu_files"
row "the same without a mount, --trust-index" "$(best3 "$queryfs" ls "$corpus" "tag/$tag" --trust-index)" "$tmsu_files"
# Mount, then the first listing of LIST (a folder below the mount point): seconds.
queryfs_start() {  # LIST [MOUNT OPTION]
    local start; start=$(now_ns)
    "$queryfs" mount "$corpus" "$mnt" ${2:+"$2"} 2>/dev/null; ls "$mnt/$1" >/dev/null
    awk -v ns=$(( $(now_ns) - start )) 'BEGIN { printf "%.3f", ns / 1e9 }'
    local pid; pid=$(daemon_pid); "$queryfs" unmount "$mnt"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}
tmsu_start() {  # LIST
    local start; start=$(now_ns)
    "$tmsu" --database="$db" mount "$tmnt"
    for _ in $(seq 500); do ls "$tmnt/$1" >/dev/null 2>&1 && break; sleep 0.01; done
    awk -v ns=$(( $(now_ns) - start )) 'BEGIN { printf "%.3f", ns / 1e9 }'
    fusermount -u "$tmnt" 2>/dev/null || fusermount3 -u "$tmnt"
}
tmsu_tags=$(tmsu_start tags)
row "mount to a live listing of the tags, --trust-index" "$(queryfs_start tag --trust-index)" "$tmsu_tags"
row "mount to a live listing of the tags, default" "$(queryfs_start tag)" "$tmsu_tags"
tmsu_folder=$(tmsu_start "tags/$tag")
row "mount to a live listing of tag $tag, --trust-index" "$(queryfs_start "tag/$tag" --trust-index)" "$tmsu_folder"
row "mount to a live listing of tag $tag, default" "$(queryfs_start "tag/$tag")" "$tmsu_folder"
floor=$(best3 find "$corpus" -printf '%s %T@\n')
echo "  stat-walk floor (find -printf over BACKING): $floor s; default queryfs ls without a mount against it: $(ratio "$(best3 "$queryfs" ls "$corpus" "tag/$tag")" "$floor") (bar <= 1.2x)"
