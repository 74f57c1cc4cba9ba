#!/usr/bin/env bash
# SIGTERM to a foreground mount while a burst of edits runs through it, ROUNDS
# times: every round must end with status 0 and no "internal error" (found
# from outside: 1 round in 8-15 ended "invalid memory access", status 70,
# after "fuse: writing device: Bad file descriptor"). Timing-dependent, so a
# loop, not a test: prints each bad round and a last line "N bad of ROUNDS".
# Usage: bash scripts/sigterm-during-edits.sh [QUERYFS_BINARY] [ROUNDS]
set -uo pipefail
queryfs=${1:-$(command -v queryfs)}
rounds=${2:-20}
work=$(mktemp -d)
trap 'mountpoint -q "$work/m" && fusermount3 -u -z "$work/m"; rm -rf "$work"' EXIT
sample=$(dirname "$queryfs")/queryfs-sample
[ -x "$sample" ] || sample=$(dirname "$0")/../.build/release/queryfs-sample
"$sample" --count 300 "$work/corpus" >/dev/null
mkdir -p "$work/m"
burst() {
    cd "$work/m" || return
    for b in bundles/*; do ln -s "../../$b" tag/rock/ 2>/dev/null; done
    for e in tag/rock/*; do rm "$e" 2>/dev/null; done
    for b in bundles/*; do ln -s "../../$b" tag/swift/ 2>/dev/null; done
}
bad=0
for round in $(seq "$rounds"); do
    rm -rf "$work/b"; cp -a "$work/corpus" "$work/b"
    ("$queryfs" mount -f "$work/b" "$work/m" 2>"$work/err"; echo $? >"$work/status") &
    daemon=$!
    for _ in $(seq 50); do [ -d "$work/m/tag" ] && break; sleep 0.1; done
    burst & edits=$!
    sleep "0.$((RANDOM % 5 + 1))"
    pkill -TERM -f -- "mount -f $work/b $work/m\$"
    wait "$edits"; wait "$daemon"
    if [ "$(cat "$work/status")" != 0 ] || grep -q 'internal error' "$work/err"; then
        bad=$((bad + 1)); echo "round $round: status $(cat "$work/status"): $(grep -v 'writing device' "$work/err" | tail -1)"
    fi
    mountpoint -q "$work/m" && fusermount3 -u -z "$work/m"
done
echo "$bad bad of $rounds"
[ "$bad" = 0 ]
