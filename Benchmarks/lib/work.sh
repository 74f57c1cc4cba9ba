# Sourced by the benchmark scripts: the binaries (QUERYFS_BIN, else the
# release build), a scratch folder under QUERYFS_BENCH_DIR with an empty
# mount point, and a cleanup that unmounts and removes it however the script ends.
# Usage: source Benchmarks/lib/work.sh NAME   → $queryfs $bench $work $mnt
bin_dir=$(dirname "${QUERYFS_BIN:-$PWD/.build/release/queryfs}")
queryfs=$bin_dir/queryfs
bench=$bin_dir/queryfs-bench
work=$(mktemp -d "${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}/$1.XXXXXX")
mnt=$work/mnt
mkdir -p "$mnt"
cleanup() {
    if grep -q " $mnt " /proc/mounts; then "$queryfs" unmount "$mnt" || fusermount3 -u -z "$mnt" || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

daemon_pid() {  # the daemon serving $mnt: a queryfs whose arguments hold -f and $mnt, in any order
    local pid
    for pid in $(pgrep -x queryfs); do
        if tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$mnt" &&
            tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "-f"; then
            echo "$pid"
            return
        fi
    done
}
