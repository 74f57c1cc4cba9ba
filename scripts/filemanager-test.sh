#!/usr/bin/env bash
# A real file manager follows a view live (issue 15): pcmanfm under Xvfb
# shows MOUNT/by-modified; a bundle is added directly in BACKING; without a
# refresh, what pcmanfm's own window holds is read back (Ctrl+A, Ctrl+C:
# the files it shows, as its clipboard offers them) and must include the new
# entry. The same is done on a --no-events mount, which must not show it:
# the events are what pcmanfm follows.
# Usage: scripts/filemanager-test.sh   (installs xvfb pcmanfm xdotool xclip; exits non-zero on failure)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh xvfb pcmanfm xdotool xclip
queryfs=${QUERYFS_BIN:-$PWD/.build/debug/queryfs}
[ -x "$queryfs" ] || swift build
work=$(mktemp -d /tmp/queryfs-fm.XXXXXX)
display=:$((90 + RANDOM % 100))
xvfb=""; manager=""
cleanup() {
    [ -n "$manager" ] && kill "$manager" 2>/dev/null || true
    [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
    if grep -q " $work/mnt " /proc/mounts; then "$queryfs" unmount "$work/mnt" || fusermount3 -u -z "$work/mnt"; fi
    rm -rf "$work"
}
trap cleanup EXIT

Xvfb "$display" -screen 0 1280x1024x24 >/dev/null 2>&1 &
xvfb=$!
export DISPLAY=$display
for _ in $(seq 50); do xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.1; done
# pcmanfm keeps its settings here: a scratch home, so the user's are neither read nor changed.
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_RUNTIME_DIR=$work/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"

bundle() {  # BACKING NAME TITLE: a bundle made beside BACKING and renamed in, as a sync tool does
    mkdir -p "$work/staging"
    printf '<?xml version="1.0"?><plist version="1.0"><dict><key>webTitle</key><string>%s</string></dict></plist>' "$3" > "$work/staging/payload.plist"
    mv "$work/staging" "$1/$2"
}

# What pcmanfm's window shows: select all, copy, read its clipboard (file URIs).
shown() {
    local window
    window=$(xdotool search --sync --onlyvisible --class pcmanfm | head -1)
    xdotool windowactivate --sync "$window" 2>/dev/null || xdotool windowfocus --sync "$window"
    # Click into the file list (the left pane would otherwise have the keyboard).
    xdotool mousemove --window "$window" 700 300 click 1
    sleep 0.3
    xdotool key --clearmodifiers ctrl+a ctrl+c
    sleep 0.5
    xclip -o -selection clipboard -t text/uri-list 2>/dev/null | tr -d '\r\000' | grep -a . | sed 's|.*/||; s|%20| |g' | sort || true
}

run() {  # MODE: on | off
    local flags="" mnt=$work/mnt backing=$work/backing-$1
    [ "$1" = off ] && flags=--no-events
    mkdir -p "$mnt" "$backing"
    for n in $(seq 1 30); do bundle "$backing" "item-$n.hpwebsite" "Item $n"; sleep 0.01; done
    "$queryfs" mount "$backing" "$mnt" $flags
    pcmanfm --no-desktop "$mnt/by-modified" >/dev/null 2>&1 &
    manager=$!
    xdotool search --sync --onlyvisible --class pcmanfm >/dev/null
    sleep 1.5
    shown > "$work/before"
    sleep 1.1  # a new second: the new bundle is the newest
    bundle "$backing" "new.hpwebsite" "Brand new"
    sleep 3
    shown > "$work/after"
    ls "$mnt/by-modified" | sort > "$work/ls"
    kill "$manager"; wait "$manager" 2>/dev/null || true; manager=""
    "$queryfs" unmount "$mnt"
    echo "events $1: pcmanfm showed $(wc -l < "$work/before") entries, then $(wc -l < "$work/after") 3 s after a bundle was added in BACKING; ls shows $(wc -l < "$work/ls")"
    if [ "$1" = on ] && ! cmp -s "$work/after" "$work/ls"; then
        echo "FAILED: pcmanfm's window differs from ls without a refresh:"; diff "$work/after" "$work/ls" | head; exit 1
    fi
    if [ "$1" = on ]; then echo "  pcmanfm shows every entry under its new name, '0001 Brand new.hpwebsite' first"; fi
    if [ "$1" = off ] && ! cmp -s "$work/after" "$work/before"; then echo "FAILED: with --no-events pcmanfm still changed (the test would prove nothing)"; exit 1; fi
    return 0
}

run on
run off
echo "pcmanfm follows the mount live"
