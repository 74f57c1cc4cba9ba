#!/usr/bin/env bash
# Edits through views (issue 14): ln -s into a tag folder and rm of the
# entry, from the call to its return (when it returns, every view shows it),
# p50/p99, against the native payload rewrite the edit cannot avoid.
# Usage: bash Benchmarks/edit-bench.sh BACKING   (BACKING is copied, never changed)
set -euo pipefail
cd "$(dirname "$0")/.."
source_backing=$1
source Benchmarks/lib/work.sh edit
backing=$work/backing
cp -a "$source_backing" "$backing"
sync
items=$(find "$backing" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l)
"$queryfs" mount "$backing" "$mnt" ${MOUNT_OPTIONS:-}
echo "== edits through a tag folder at $items items"
"$bench" edits "$mnt" "$backing" --samples "${SAMPLES:-200}"
"$queryfs" unmount "$mnt"
