# Sourced by scripts/filemanager-test.sh: drag and drop in the program's
# own window, with the mouse. A tag folder holding one entry and one
# nested tag folder shows both side by side; the entry is dragged onto the
# folder — with Ctrl+Shift (a link) and plainly (the program's default,
# a move on one filesystem) — and what it did is read back from the mount.
# Needs session.sh, edits.sh, $mnt, $work, row and fail.

# The window-relative point of NAME: the first point of a grid over the
# file area whose click selects NAME, read back from the program's
# clipboard (no screenshot, whatever the program's layout). The grid keeps
# off the sidebar and toolbars (left 30 %, top 20 %), where a click would go
# elsewhere (Dolphin's places panel is a third of its window: not dragged in).
fm_point_of() {  # NAME
    local window geometry width height x y
    window=$(fm_window)
    [ -n "$window" ] || return 1
    geometry=$(xdotool getwindowgeometry "$window" | awk '/Geometry/ { print $2 }')
    width=${geometry%x*}; height=${geometry#*x}
    # Past the double-click time: a first click where the last one was would open what is there.
    sleep 1
    for y in $(seq $(( height / 5 )) 30 $(( height * 4 / 5 ))); do
        for x in $(seq $(( width * 3 / 10 )) 40 $(( width - 30 ))); do
            # (xclip stays to serve the selection until a copy takes it: never on this function's output.)
            printf '' | xclip -selection clipboard >/dev/null 2>&1 || true
            xdotool mousemove --window "$window" "$x" "$y" click 1
            sleep 0.35
            # NAME alone: a click beside every entry may leave a select-all as it was.
            if [ "$(fm_selected)" = "$1" ]; then echo "$x $y"; return 0; fi
        done
    done
    return 1
}

# Presses at FROM, moves in steps to TO and lets go there, holding KEYS
# (xdotool names, or "") from once the drag has begun: held at the press,
# Ctrl+Shift extends the selection instead (GTK).
fm_drag() {  # FROM_X FROM_Y TO_X TO_Y KEYS
    local window step
    window=$(fm_window)
    xdotool mousemove --window "$window" "$1" "$2"; sleep 0.3
    xdotool mousedown 1; sleep 0.3
    for step in 1 2 3 4 5 6 7 8 9 10; do
        xdotool mousemove --window "$window" $(( $1 + ($3 - $1) * step / 10 )) $(( $2 + ($4 - $2) * step / 10 )); sleep 0.08
        if [ "$step" = 3 ] && [ -n "$5" ]; then xdotool keydown "$5"; sleep 0.2; fi
    done
    sleep 0.6
    # QUERYFS_FM_SHOTS=DIR: the screen just before the drop, for a look at what the program did.
    [ -z "${QUERYFS_FM_SHOTS:-}" ] || import -window root "$QUERYFS_FM_SHOTS/drag-$(date +%s%N).png" 2>/dev/null || true
    xdotool mouseup 1; sleep 0.3
    [ -z "$5" ] || xdotool keyup "$5"
}

# Whether ITEM's entry is in tag folder TAG (its link leads to the bundle).
tagged_with() {  # TAG ITEM
    ls -l "$mnt/tag/$1" 2>/dev/null | grep -F -- "/bundles/$2" >/dev/null
}

# ITEM's tags as its payload holds them, comma-separated.
payload_tags() {  # ITEM
    /usr/bin/python3 -c 'import plistlib, sys; print(", ".join(plistlib.load(open(sys.argv[1], "rb")).get("tags", [])))' "$backing/$1/payload.plist"
}

drag_check() {  # PROGRAM
    local program=$1 kind keys source item entry from to dialogs
    # xdotool's press-move-release starts no drag in Thunar's icon view, and
    # Dolphin's drop lands beside its target: not automated there (README).
    case $program in thunar|dolphin) row "$program" "drag into tag/" "not automated (the harness cannot drag there)"; return 0 ;; esac
    for kind in link plain; do
        keys=$([ "$kind" = link ] && echo ctrl+shift || echo "")
        source="drag-$kind-$program"
        # A tag of its own, one entry and one nested tag folder in it.
        item=$(ls "$mnt/bundles" | sed -n "$([ "$kind" = link ] && echo 3 || echo 4)p")
        mkdir "$mnt/tag/$source" "$mnt/tag/$source/into"
        ln -s "../../bundles/$item" "$mnt/tag/$source/new"
        entry=$(ls "$mnt/tag/$source" | grep -v '^into$' | sed -n 1p)
        listed "$mnt/tag/$source" > "$work/want"
        fm_start "$program" "$mnt/tag/$source"
        if fm_focus 20 && fm_until_shows "$work/want" 20 "$(date +%s%N)" >/dev/null \
            && from=$(fm_point_of "$entry") && to=$(fm_point_of into); then
            # shellcheck disable=SC2086 # the points are two numbers each
            fm_drag $from $to "$keys"
            dialogs=$(fm_answer_dialogs)
            if [ "$(find "$mnt/tag/$source/into" -mindepth 1 -maxdepth 1 -type d ! -type l | wc -l)" != 0 ]; then
                fail "$program" "$kind drag into tag/" "a folder was made in the view${dialogs:+; dialogs: $dialogs}"
            elif eventually tagged_with "$source/into" "$item"; then
                row "$program" "$kind drag into tag/" "joined; tags now: $(payload_tags "$item")${dialogs:+; dialogs: $dialogs}"
            else
                row "$program" "$kind drag into tag/" "nothing changed${dialogs:+; dialogs: $dialogs}"
            fi
        else fail "$program" "$kind drag into tag/" "the entry or the folder was not found in the window"; fi
        fm_stop
    done
}
