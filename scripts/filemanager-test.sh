#!/usr/bin/env bash
# Real file managers on a mount (issues 15 and 32), each under Xvfb with its
# own D-Bus session; what a window shows is read back from the program itself
# (select all, copy, its clipboard's file URIs), never from a screenshot.
#   browse: the root, a view, a tag folder, a query folder and a bundle, each
#     opened TRIES times from a fresh start: seconds until the window lists
#     exactly what `ls` lists (bar: never a hang, and within 1 s of the same
#     program on a local copy of the place: the times include its own start)
#   follow: an item added, retitled and removed in BACKING shows in the open
#     by-name/ without a refresh (bar: 3 s); the first program is also run on a
#     --no-events mount, which must not follow (the events are what it follows)
#   edit: F2 in by-name/ retitles; Delete (Move to Trash) in a tag folder
#     untags, into the mount's trash, and `gio trash --restore` tags again; the
#     new-folder key in tag/ makes a tag, in query/ saves a query
#   open: Return on a desktop entry (desktop-entries) hands its URL to the
#     default browser (a stand-in that writes it down); so do `gio open` and
#     `kioclient5 exec` (kioclient with dolphin)
#   drag: an entry dragged onto the nested tag folder beside it, with
#     Ctrl+Shift (a link) and plainly (a move): it joins that tag
#   --large N: by-modified/ at N items against a folder of the same N links on
#     the local disk, in the same run, with the requests the daemon was sent
# Usage: scripts/filemanager-test.sh [--short] [--tries N] [--large N] [--edits | --browse] [PROGRAM...]
#   (--edits: the edits alone; --browse: the browse rows alone)
#   programs: nautilus nemo caja thunar pcmanfm dolphin (default: every one;
#   --short: pcmanfm, 3 tries — what CI runs). Installs what it runs.
#   Prints one table row per program and check; exits non-zero when a bar
#   fails (--short: only on a hang or a wrong listing, as a busy CI machine
#   would make a timed bar flaky; the times are printed all the same).
set -euo pipefail
cd "$(dirname "$0")/.."
tries=20; large=0; programs=(); timed=1; only_edits=0; only_browse=0
while [ $# -gt 0 ]; do
    case $1 in
        --short) tries=3; programs=(pcmanfm); timed=0 ;;
        --tries) tries=$2; shift ;;
        --large) large=$2; shift ;;
        --edits) only_edits=1 ;;
        --browse) only_browse=1 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) programs+=("$1") ;;
    esac
    shift
done
[ ${#programs[@]} -gt 0 ] || programs=(nautilus nemo caja thunar pcmanfm dolphin)
kio=(); for program in "${programs[@]}"; do [ "$program" = dolphin ] && kio=(kioclient); done
scripts/install-deps.sh xvfb xdotool xclip dbus-daemon gio "${kio[@]}" "${programs[@]}"
queryfs=${QUERYFS_BIN:-$PWD/.build/debug/queryfs}
sample=${QUERYFS_SAMPLE_BIN:-$(dirname "$queryfs")/queryfs-sample}
[ -x "$queryfs" ] && [ -x "$sample" ] || swift build
work=$(mktemp -d /tmp/queryfs-fm.XXXXXX)
chmod 755 "$work"
source scripts/filemanager/session.sh
cleanup() {
    fm_stop_display
    # Every mount under the work folder: the queryfs mounts, and the FUSE
    # mount gvfsd-fuse made in the session's runtime folder (killed with its
    # session, it leaves that mount behind, and rm -rf failed on it: EBUSY).
    awk -v work="$work/" 'index($2, work) == 1 { print $2 }' /proc/mounts | sort -r | while read -r mnt; do
        case $mnt in
            "$work"/mnt*) "$queryfs" unmount "$mnt" || fusermount3 -u -z "$mnt" ;;
            *) fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" || true ;;
        esac
    done
    rm -rf "$work"
}
trap cleanup EXIT
# Killed, it still ends every program and service it started: a GVFS trash
# monitor left behind holds every new mount open, and `fusermount3 -u` fails.
trap 'exit 143' TERM INT HUP
# The programs keep their settings, thumbnails and recent files here: a
# scratch home, so the user's are neither read nor changed.
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache \
       XDG_DATA_HOME=$work/home/.local/share XDG_RUNTIME_DIR=$work/run NO_AT_BRIDGE=1
# GTK 4 (Nautilus) draws with GL, under Xvfb Mesa's llvmpipe on the CPU, whose
# animated "Loading…" starved Nautilus's own loading in 3 of 26 opens; cairo
# is the cost a desktop's GPU gives (README, "Each file manager").
export GSK_RENDERER=cairo
mkdir -p "$HOME/.config" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
printf '[KDE]\nSingleClick=false\n' > "$HOME/.config/kdeglobals"
fm_start_display
failed=0
row() { printf '%-9s %-26s %s\n' "$@"; }
fail() { row "$1" "$2" "$3  FAILED"; failed=1; }
requests() { /usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["kernelRequests"]))' "$1/.queryfs/status"; }
request_delta() {
    /usr/bin/python3 -c 'import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(" ".join(f"{k} {after[k] - before.get(k, 0)}" for k in sorted(after, key=lambda k: before.get(k, 0) - after[k]) if after[k] > before.get(k, 0)))' "$1" "$2"
}

bundle() {  # BACKING NAME TITLE: a bundle made beside BACKING and renamed in, as a sync tool does
    mkdir -p "$work/staging"
    printf '<?xml version="1.0"?><plist version="1.0"><dict><key>webTitle</key><string>%s</string></dict></plist>' "$3" > "$work/staging/payload.plist"
    mv "$work/staging" "$1/$2"
}
# What `ls` lists in DIR (without hidden names, which file managers hide), sorted.
listed() { ls "$1" | sort; }

# A local copy of what MOUNT/PLACE lists, at DEST: links to the same bundles
# in BACKING, folders as folders, files copied — what the program shows for
# the same entries without the mount, measured in the same run.
replica() {  # PLACE DEST
    local name target
    mkdir -p "$2"
    while IFS= read -r -d '' name; do
        if [ -L "$mnt/$1/$name" ]; then target=$(readlink "$mnt/$1/$name"); ln -s "$backing/${target##*/}" "$2/$name"
        elif [ -d "$mnt/$1/$name" ]; then mkdir "$2/$name"
        else cp "$mnt/$1/$name" "$2/$name"; fi
    done < <(find "$mnt/$1" -mindepth 1 -maxdepth 1 -printf '%f\0')
}
# Seconds until PROGRAM lists DIR exactly as ls does, TRIES times from a fresh start: the sorted times.
browse_times() {  # PROGRAM DIR
    listed "$2" > "$work/want"
    for _ in $(seq "$tries"); do
        local start
        start=$(date +%s%N)
        fm_start "$1" "$2"
        if fm_focus 20; then fm_until_shows "$work/want" 20 "$start" || true; else echo "never(no-window)"; fi
        fm_stop
    done | sort -g
}
# "median M s, max X s[; N of T never complete]" of sorted times.
summary() {
    awk '$1 ~ /^never/ { never++; why = why " " substr($1, 6); next } { s[++n] = $1 } END {
        if (n) printf "median %.1f s, max %.1f s", s[int((n + 1) / 2)], s[n]
        if (never) printf "%s%d of %d never complete%s", (n ? "; " : ""), never, n + never, why }'
}
median() { awk '$1 !~ /^never/ { s[++n] = $1 } END { print (n ? s[int((n + 1) / 2)] : 999) }'; }

# 1. Browse, at 1,000 items, each place against its local copy.
backing=$work/backing; mnt=$work/mnt
"$sample" --count 1000 --seed 1 "$backing" >/dev/null
mkdir -p "$mnt"
"$queryfs" mount "$backing" "$mnt"
tag=$(ls "$mnt/tag" | awk "NR == 1")
bundle_name=$(ls "$mnt/bundles" | awk "NR == 1")
places=("" by-name "tag/$tag" "query/tag:$tag -archived" "bundles/$bundle_name")
for index in "${!places[@]}"; do replica "${places[$index]}" "$work/local/$index"; done
if [ "$only_edits" = 0 ]; then
echo "== $(ls "$mnt/bundles" | wc -l) items; each place opened $tries times from a fresh start, and a local copy of it as often"
echo "   (seconds from the program's start until its window lists exactly what ls lists; bar: never a hang, and within 1 s of the local copy)"
for program in "${programs[@]}"; do
    for index in "${!places[@]}"; do
        place=${places[$index]}
        before=$(requests "$mnt")
        browse_times "$program" "$mnt/$place" > "$work/times-mount"
        requests_sent=$(request_delta "$before" "$(requests "$mnt")")
        browse_times "$program" "$work/local/$index" > "$work/times-local"
        label="browse ${place:-/}"
        result="mount $(summary < "$work/times-mount"); local $(summary < "$work/times-local")  (requests: $requests_sent)"
        if grep -q never "$work/times-mount" || { [ "$timed" = 1 ] && awk -v m="$(median < "$work/times-mount")" -v l="$(median < "$work/times-local")" 'BEGIN { exit !(m > l + 1) }'; }; then
            fail "$program" "${label:0:26}" "$result"
        else
            row "$program" "${label:0:26}" "$result"
        fi
    done
done

fi

# 2. Follow: changes made in BACKING show in the open by-name/ without a refresh.
# The view as the mount lists it once it holds the change — a name with
# TEXT is present, or absent — into the file the window is compared with.
settled() {  # MOUNT present|absent TEXT
    local found
    for _ in $(seq 100); do
        found=absent; ls "$1/by-name" | grep -F "$3" >/dev/null && found=present
        [ "$found" = "$2" ] && break
        sleep 0.05
    done
    listed "$1/by-name" > "$work/want"
}
# by-name/ as NAME<TAB>TARGET lines, the target a bundle of BACKING.
links() { find "$1/by-name" -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%f\t%l\n' | sed "s|\t[./]*bundles/|\t$backing/|" | sort; }
follow() {  # PROGRAM MOUNT BACKING: prints "add A s, retitle B s, remove C s"; keeps the listings in $work/step-*
    local program=$1 mnt=$2 backing=$3 start result=""
    rm -f "$work"/step-*
    links "$mnt" > "$work/step-0"
    fm_start "$program" "$mnt/by-name"
    fm_focus 20 || { echo "no window"; return 1; }
    listed "$mnt/by-name" > "$work/want"
    fm_until_shows "$work/want" 20 "$(date +%s%N)" >/dev/null || { echo "never listed"; fm_stop; return 1; }
    start=$(date +%s%N); bundle "$backing" followed.hpwebsite "Aardvark first"
    settled "$mnt" present "Aardvark first"; result="add $(fm_until_shows "$work/want" 10 "$start" || true) s"
    links "$mnt" > "$work/step-1"
    start=$(date +%s%N)
    printf '<?xml version="1.0"?><plist version="1.0"><dict><key>webTitle</key><string>Zebra last</string></dict></plist>' > "$backing/followed.hpwebsite/payload.plist.new"
    mv "$backing/followed.hpwebsite/payload.plist.new" "$backing/followed.hpwebsite/payload.plist"
    settled "$mnt" present "Zebra last"; result="$result, retitle $(fm_until_shows "$work/want" 10 "$start" || true) s"
    links "$mnt" > "$work/step-2"
    start=$(date +%s%N); rm -r "$backing/followed.hpwebsite"
    settled "$mnt" absent "Zebra last"; result="$result, remove $(fm_until_shows "$work/want" 10 "$start" || true) s"
    links "$mnt" > "$work/step-3"
    fm_stop
    echo "$result"
}
# The same three changes as renames of links in a local folder (what the
# mount's replay makes the kernel report), watched by the same program.
follow_local() {  # PROGRAM: prints "add A s, retitle B s, remove C s"
    local program=$1 dir=$work/follow-local result="" step start
    [ -f "$work/step-3" ] || { echo "not run: the follow on the mount stopped before its last step"; return 0; }
    rm -rf "$dir"; mkdir -p "$dir"
    while IFS=$'\t' read -r name target; do ln -s "$target" "$dir/$name"; done < "$work/step-0"
    fm_start "$program" "$dir"
    fm_focus 20 || { echo "no window"; return 1; }
    listed "$dir" > "$work/want"
    fm_until_shows "$work/want" 20 "$(date +%s%N)" >/dev/null || { echo "never listed"; fm_stop; return 1; }
    for step in 1 2 3; do
        start=$(date +%s%N)
        /usr/bin/python3 scripts/filemanager/transition.py "$dir" "$work/step-$((step - 1))" "$work/step-$step"
        listed "$dir" > "$work/want"
        result="$result${result:+, }$(echo "add retitle remove" | cut -d' ' -f$step) $(fm_until_shows "$work/want" 10 "$start" || true) s"
    done
    fm_stop
    echo "$result"
}
if [ "$only_browse" = 1 ]; then "$queryfs" unmount "$mnt"; exit $failed; fi
if [ "$only_edits" = 0 ]; then
echo "== follow: seconds until the open by-name/ shows the change made in BACKING, renumbered"
for program in "${programs[@]}"; do
    # (a failed follow still prints its reason: the row says it, set -e does not swallow it)
    result=$(follow "$program" "$mnt" "$backing") || true
    if echo "$result" | grep -q never || { [ "$timed" = 1 ] && echo "$result" | awk -F'[ ,]+' '{ for (i = 2; i <= NF; i += 3) if ($i + 0 > 3) bad = 1 } END { exit !bad }'; }; then
        fail "$program" "follow" "$result"
    else
        row "$program" "follow" "$result"
    fi
    row "$program" "follow, local disk" "$(follow_local "$program")  (the same renames of links in a local folder)"
done
"$queryfs" unmount "$mnt"
# Without events the first program must not follow: otherwise the check above proves nothing.
"$queryfs" mount "$backing" "$mnt" --no-events
fm_start "${programs[0]}" "$mnt/by-name"; fm_focus 20 || true
listed "$mnt/by-name" > "$work/want"
# A window that never listed the view would show no new item either: that proves nothing, and fails.
listed_at_all=$(fm_until_shows "$work/want" 20 "$(date +%s%N)") || true
bundle "$backing" unseen.hpwebsite "Aardvark unseen"
sleep 3; fm_shown > "$work/after"; fm_stop
if [[ $listed_at_all == never* ]]; then fail "${programs[0]}" "no events: no follow" "the window never listed by-name/ ($listed_at_all): the check proves nothing"
elif grep -q "Aardvark unseen" "$work/after"; then fail "${programs[0]}" "no events: no follow" "it followed without events: the check proves nothing"
else row "${programs[0]}" "no events: no follow" "the new item stayed unshown for 3 s, as it should"; fi
"$queryfs" unmount "$mnt"
fi

# 3. Edits with the programs' own gestures, and opening an item of a view of desktop entries.
source scripts/filemanager/edits.sh
source scripts/filemanager/open.sh
source scripts/filemanager/drag.sh
grep -q " $mnt " /proc/mounts && "$queryfs" unmount "$mnt"
printf 'desktop-entries = ["by-created"]\n' >> "$backing/.queryfs.toml"
open_setup
"$queryfs" mount "$backing" "$mnt"
echo "== edits with each program's own keys (F2, Delete, its new-folder key; its dialogs answered with their default button);"
echo "   open: Return on the first desktop entry of by-created/ (desktop-entries), as a double-click"
for program in "${programs[@]}"; do edit_checks "$program"; open_check "$program"; drag_check "$program"; done
with_kio=0; for program in "${programs[@]}"; do [ "$program" = dolphin ] && with_kio=1; done
open_commands_check "$with_kio"
"$queryfs" unmount "$mnt"

# 4. Large: by-modified/ at N items, against the same N links on the local disk.
if [ "$large" -gt 0 ]; then
    big=${QUERYFS_BENCH_DIR:-/tmp/queryfs-bench}/scale-$large
    if [ ! -f "$big/.complete" ]; then rm -rf "$big"; "$sample" --count "$large" --seed 1 "$big" >/dev/null; touch "$big/.complete"; fi
    "$queryfs" mount "$big" "$mnt"
    native=$work/native; mkdir -p "$native"
    # The same names, each a link to its bundle in BACKING itself.
    ls -f "$mnt/by-modified" | grep -v '^\.' | while IFS= read -r name; do
        target=$(readlink "$mnt/by-modified/$name"); ln -s "$big/${target##*/}" "$native/$name"
    done
    echo "== large: by-modified/ at $large items, against a local folder of the same $large links (seconds until the whole view is listed)"
    for program in "${programs[@]}"; do
        listed "$native" > "$work/want"
        start=$(date +%s%N); fm_start "$program" "$native"; fm_focus 60 || true
        local_time=$(fm_until_shows "$work/want" 300 "$start" || true); fm_stop
        listed "$mnt/by-modified" > "$work/want"
        before=$(requests "$mnt")
        start=$(date +%s%N); fm_start "$program" "$mnt/by-modified"; fm_focus 60 || true
        mount_time=$(fm_until_shows "$work/want" 300 "$start" || true); fm_stop
        sent=$(request_delta "$before" "$(requests "$mnt")")
        # No payload read for a listing (thumbnailers, MIME sniffing, deep
        # counts): READ is the harness's own two reads of the status file.
        reads=$(echo "$sent" | awk '{ for (i = 1; i < NF; i += 2) if ($i == "READ") print $(i + 1) }')
        if [ "${reads:-0}" -gt 8 ]; then fail "$program" "large ($large)" "mount $mount_time s, local disk $local_time s; $reads READ requests: payloads were read  (requests: $sent)"
        else row "$program" "large ($large)" "mount $mount_time s, local disk $local_time s  (requests: $sent)"; fi
    done
    "$queryfs" unmount "$mnt"
fi
exit $failed
