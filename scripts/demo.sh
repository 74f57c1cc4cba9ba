#!/usr/bin/env bash
# Generates a sample reading list, mounts it with queryfs and shows the
# views; then the same for a sample Obsidian-like vault of Markdown notes in
# nested folders. Unmounts both at the end (pass --keep to leave them mounted).
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
vault=$demo/vault
vmnt=$demo/vault-mnt

for old in "$mnt" "$vmnt"; do  # left by an earlier run (--keep, or killed)
    if grep -qs " $old fuse" /proc/mounts; then fusermount3 -u "$old" || fusermount3 -uz "$old"; fi
done
rm -rf "$backing" "$vault"
mkdir -p "$backing" "$mnt" "$vmnt"
$bin/queryfs-sample --count 48 --seed 1 "$backing"
$bin/queryfs-sample --shape notes --count 60 --seed 1 "$vault"

show() { printf '\n$ %s\n' "$*"; "$@"; }

# Each mount is recorded once it is made and unmounted at exit, whatever
# failed in between; one that will not unmount does not keep the others up.
mounted=()
unmount_all() {
    local m
    for m in ${mounted[@]+"${mounted[@]}"}; do  # (an empty array under set -u)
        $bin/queryfs unmount "$m" || echo "demo: could not unmount $m" >&2
    done
}
$keep || trap unmount_all EXIT

$bin/queryfs mount "$backing" "$mnt"
mounted+=("$mnt")

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

# Part two: an Obsidian-like vault. Notes sit in nested folders (its
# .queryfs.toml says recursive = true); their YAML or TOML front matter gives
# titles, tags (nested ones: lang/swift) and archived. .obsidian/ and .trash/
# are hidden, so not items.
printf '\n# A vault of Markdown notes: %s\n' "$vault"
$bin/queryfs mount "$vault" "$vmnt"
mounted+=("$vmnt")
show cat "$vault/.queryfs.toml"
show ls "$vmnt/by-name" | sed -n 1,10p
show ls "$vmnt/tag"
note=$(ls "$vmnt/by-name" | sed -n '/\.md$/p' | sed -n 1p)
show readlink "$vmnt/by-name/$note"           # into bundles/, at the note's folder
show ls "$vmnt/query/tag:reading -archived"
# Any other front-matter key is payload.KEY: queryfs ls reads them all (a
# mount's query/ folders need `queryfs mount --payload-key status` for it).
show $bin/queryfs ls "$vault" 'payload.status=draft sort:title'
cat <<END

To keep it: sudo make install (queryfs --version; man queryfs; man 5 queryfs), then
an fstab line mounts a reading list at boot, once every view is ready:
  $backing $mnt fuse.queryfs defaults,_netdev,nofail 0 0
and: sudo mount $mnt
END
if $keep; then
    printf '\nMounted at %s (backing: %s). Unmount with: %s/queryfs unmount %s\n' "$mnt" "$backing" "$bin" "$mnt"
    printf 'Mounted at %s (backing: %s). Unmount with: %s/queryfs unmount %s\n' "$vmnt" "$vault" "$bin" "$vmnt"
fi
