#!/usr/bin/env bash
# Runs every test: the engine's unit tests and the integration tests, which
# really mount (root or a user allowed to use /dev/fuse). A test that cannot
# mount fails; the tests that need root are skipped for another user, and
# every skip is listed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh fio attr git gio inotify-tools make man bindfs pyfuse3 strace
swift build
# The git-sync test replays the real reading list's history when it sits
# beside this repository (as in CI); from a plain clone it makes its own.
history=../shared/data/hpdata.bundle
if [ -z "${QUERYFS_HISTORY_BUNDLE:-}" ] && [ -f "$history" ]; then
    export QUERYFS_HISTORY_BUNDLE=$PWD/$history
fi
# A test process that dies (a trap, a signal) never reaches its teardown:
# what its fixtures left mounted is unmounted here, and said, so one crash
# does not leave mounts behind for the next run. Only mounts this run made:
# another run's, up before this one started, are left alone.
# queryfs at ROOT/mnt first, then what a test mounted as its backing
# directory under it (faultfs, bindfs at ROOT/backing).
fixture_mounts() {
    awk '$3 ~ /^fuse/ && $2 ~ /\/queryfs-it-[^\/]*\/mnt$/ { print $2 }' /proc/mounts
    awk '$3 ~ /^fuse/ && $2 ~ /\/queryfs-it-[^\/]*\/backing$/ { print $2 }' /proc/mounts
}
mounts_before=$(fixture_mounts)
unmount_leftovers() {
    fixture_mounts | while read -r mount; do
        grep -qxF -- "$mount" <<<"$mounts_before" && continue
        echo "test.sh: unmounting $mount, left by a test process that died" >&2
        fusermount3 -u "$mount" || umount -l "$mount"
    done
}
trap unmount_leftovers EXIT
# XCTest only: Swift Testing would close the output with a "0 tests" line.
# The output is kept to list, at the end, every test skipped and why (those
# that need root skip as another user; CI runs as root and skips none).
log=$(mktemp /tmp/queryfs-test-log.XXXXXX)
status=0
swift test --disable-swift-testing "$@" 2>&1 | tee "$log" || status=$?
skipped=$(grep -E ": Test skipped|' skipped \(" "$log" | grep -v "^Test Case" || true)
echo "skipped: $( [ -n "$skipped" ] && grep -c . <<<"$skipped" || echo 0 )"
[ -z "$skipped" ] || sed 's/^/  /' <<<"$skipped"
rm -f "$log"
[ "$status" -eq 0 ] || exit "$status"
# A short pass of every fuzzer, so a target that no longer builds, or an
# input that now crashes, fails here (scripts/fuzz.sh 300 is the real run).
if [ $# -eq 0 ]; then
    scripts/fuzz.sh 5
    # The library's documentation builds without a warning: every public
    # symbol documented, every link resolved (scripts/docs.sh prints where it is).
    scripts/docs.sh
    # A real file manager browses and follows the mount (the short form:
    # pcmanfm, 3 tries each; scripts/filemanager-test.sh runs every program).
    scripts/filemanager-test.sh --short
fi
