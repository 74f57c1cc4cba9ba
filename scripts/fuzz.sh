#!/usr/bin/env bash
# Fuzzes every parser that reads what users and sync tools hand queryfs —
# binary and XML property lists, JSON, the query language, the
# configuration, the index file, notes' front matter (YAML, TOML) — with libFuzzer and AddressSanitizer, each for SECONDS:
#   scripts/fuzz.sh [SECONDS]          (default 60; CI runs a 5-second pass)
# New inputs go to $QUERYFS_FUZZ_DIR (default /tmp/queryfs-fuzz), the
# committed seeds in Fuzz/Corpus stay as they are; a crash, hang (over 10 s)
# or memory blow-up (over 2 GiB) leaves its input in crashes/ there, makes
# this script fail, and becomes a unit test (HostileInputTests).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
work=${QUERYFS_FUZZ_DIR:-/tmp/queryfs-fuzz}
scripts/install-deps.sh
# gold fails to link sanitized Swift here ("internal error in
# format_file_lineno"): the toolset links with lld, which ships with Swift.
build() { swift build -c release --package-path Fuzz --toolset "$PWD/Fuzz/toolset.json" -Xswiftc -sanitize=fuzzer,address; }
# Once more from scratch when it fails: SwiftPM kept the root package's
# modules from before a source file was added to them, and the build then
# missed that file ("cannot find 'TerminalText' in scope", stop 48).
if ! build; then
    echo "fuzz.sh: the build failed; building again from scratch" >&2
    rm -rf Fuzz/.build/release Fuzz/.build/*/release
    build
fi
mkdir -p "$work/crashes"
failed=0
printf '%-16s %12s %10s\n' target executions result
for target in binary-plist xml-plist json query configuration index-file front-matter xmp; do
    corpus=$work/corpus/$target
    log=$work/$target.log
    mkdir -p "$corpus"
    status=0
    # The Swift runtime's own crash reporter would stand in libFuzzer's way.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
        "Fuzz/.build/release/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$work/crashes/$target-" -print_final_stats=1 "$corpus" "Fuzz/Corpus/$target" >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ "$status" -eq 0 ]; then
        result="0 crashes"
    else
        result="FAILED ($(grep -m1 -oE 'ERROR: libFuzzer: [a-z -]+|ERROR: AddressSanitizer: [a-z-]+|SUMMARY: .*' "$log" || echo "exit $status"))"
        failed=1
    fi
    printf '%-16s %12s %10s\n' "$target" "${runs:-?}" "$result"
done
if [ "$failed" -ne 0 ]; then
    echo "inputs that failed: $work/crashes (logs: $work/*.log)" >&2
    exit 1
fi
