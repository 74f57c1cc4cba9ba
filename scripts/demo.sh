#!/usr/bin/env bash
# Generates a sample reading list, mounts it with queryfs and shows the
# views; unmounts at the end (pass --keep to leave it mounted).
set -euo pipefail
cd "$(dirname "$0")/.."

keep=false
[ "${1:-}" = "--keep" ] && keep=true

scripts/install-deps.sh
swift build
bin=.build/debug
demo=${QUERYFS_DEMO_DIR:-/tmp/queryfs-demo}
backing=$demo/backing
mnt=$demo/mnt

if grep -qs " $mnt fuse" /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
rm -rf "$backing"
mkdir -p "$backing" "$mnt"
$bin/queryfs-sample --count 48 --seed 1 "$backing"

show() { printf '\n$ %s\n' "$*"; "$@"; }

$bin/queryfs mount "$backing" "$mnt"
$keep || trap '$bin/queryfs unmount "$mnt"' EXIT

show ls "$mnt"
show ls "$mnt/by-name"
show ls -l "$mnt/unarchived" | sed -n 1,7p  # sed reads to the end: no SIGPIPE under pipefail
show ls "$mnt/tag"
first=$(ls "$mnt/by-modified" | sed -n 1p)
show readlink "$mnt/by-modified/$first"
show cat "$mnt/by-modified/$first/payload.plist"
show ls "$mnt/query/tag:swift -archived sort:title"
show mkdir "$mnt/query/tag:linux modified>30d"   # saved into BACKING/.queryfs.toml
show cat "$backing/.queryfs.toml"
show ls "$mnt/query"
show $bin/queryfs ls "$backing" 'tag:linux or size>2KB sort:-size'
show $bin/queryfs views "$backing"
show $bin/queryfs status "$backing"           # mounted: the daemon answers from memory
show cat "$mnt/.queryfs/status"
cat <<END

To keep it: sudo make install (queryfs --version; man queryfs; man 5 queryfs), then
an fstab line mounts a reading list at boot, once every view is ready:
  $backing $mnt fuse.queryfs defaults,_netdev,nofail 0 0
and: sudo mount $mnt
END
if $keep; then
    printf '\nMounted at %s (backing: %s). Unmount with: %s/queryfs unmount %s\n' "$mnt" "$backing" "$bin" "$mnt"
fi
