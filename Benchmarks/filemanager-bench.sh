#!/usr/bin/env bash
# File managers on a large view (issue 32): scripts/filemanager-test.sh
# --large at the size of the reading list it is given — each program's time
# to list by-modified/ whole, against a local folder of the same links in
# the same run, with the requests the daemon was sent — after its browse and
# follow checks at 1,000 items, one try each.
# Usage: bash Benchmarks/filemanager-bench.sh [SIZE | FOLDER] [PROGRAM...]
#   (default 100000; a folder: as many items as it has, scripts/bench.sh's
#   way; programs: nautilus pcmanfm, the most used GIO one and the lightest)
# Environment: QUERYFS_BIN (default the release build), QUERYFS_BENCH_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
case $size in *[!0-9]*) size=$(find "$size" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l) ;; esac
shift || true
[ $# -gt 0 ] || set -- nautilus pcmanfm
export QUERYFS_BIN=${QUERYFS_BIN:-$PWD/.build/release/queryfs}
# The table is the result: a bar missed is printed, not a reason to stop the benchmarks.
scripts/filemanager-test.sh --tries 1 --large "$size" "$@" || echo "(a bar above was missed: see FAILED)"
