#!/usr/bin/env bash
# A long run of a live mount (issue 30; not part of the tests or CI). On a
# generated reading list: random changes in BACKING (bundles added, edited,
# retitled, tagged, untagged, deleted) and through views (ln -s into tag
# folders, rm from them, mv in by-name to retitle), two readers listing every
# view, a kill -9 of the daemon and a remount every few minutes, and every
# view compared with a fresh `queryfs ls --no-index BACKING VIEW` once the
# changes settle. One line per interval: the daemon's RSS, its open
# descriptors, changes so far, change latency p50/p99; a summary at the end.
# Exits non-zero if a view did not settle, a change never showed, or a
# reader failed while mounted. The driver is scripts/soak.py.
#
# Usage: scripts/soak.sh [SECONDS]      30 minutes by default (make soak; make soak SOAK_SECONDS=180)
# Environment: SOAK_ITEMS (2000), SOAK_REPORT_EVERY (60 s; a sixth of runs under 10 minutes),
#   SOAK_KILL_EVERY (180 s; a third of runs under 9 minutes), SOAK_SEED (7),
#   SOAK_MOUNT_OPTIONS (extra options for every mount, e.g. --no-events),
#   QUERYFS_BIN (a built queryfs, with queryfs-sample beside it; else the debug build is made)
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-1800}
items=${SOAK_ITEMS:-2000}
report_every=${SOAK_REPORT_EVERY:-$(( duration >= 600 ? 60 : (duration / 6 > 10 ? duration / 6 : 10) ))}
kill_every=${SOAK_KILL_EVERY:-$(( duration >= 540 ? 180 : (duration / 3 > 20 ? duration / 3 : 20) ))}

scripts/install-deps.sh
if [ -z "${QUERYFS_BIN:-}" ]; then
    swift build --product queryfs
    swift build --product queryfs-sample
fi
bin_dir=$(dirname "${QUERYFS_BIN:-$PWD/.build/debug/queryfs}")
queryfs=$bin_dir/queryfs

work=$(mktemp -d /tmp/queryfs-soak.XXXXXX)
backing=$work/backing
mnt=$work/mnt
mkdir -p "$mnt"
# The mount's index file goes here, not into ~/.cache.
export XDG_CACHE_HOME=$work/cache
cleanup() {
    status=$?
    if grep -q " $mnt " /proc/mounts; then "$queryfs" unmount "$mnt" || fusermount3 -u -z "$mnt" || true; fi
    if [ "$status" -ne 0 ] && [ -f "$work/mount.log" ]; then
        cp "$work/mount.log" "/tmp/queryfs-soak-$(date +%Y%m%d-%H%M%S).log"
        echo "soak: the mount's log is kept in /tmp/queryfs-soak-*.log" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin_dir/queryfs-sample" --count "$items" --seed 7 "$backing"
# shellcheck disable=SC2086 # options are words
"$queryfs" mount "$backing" "$mnt" --log "$work/mount.log" ${SOAK_MOUNT_OPTIONS:-}
/usr/bin/python3 scripts/soak.py --mount-options="${SOAK_MOUNT_OPTIONS:-}" --queryfs "$queryfs" --backing "$backing" --mount "$mnt" --log "$work/mount.log" \
    --duration "$duration" --report-every "$report_every" --kill-every "$kill_every" --seed "${SOAK_SEED:-7}"
