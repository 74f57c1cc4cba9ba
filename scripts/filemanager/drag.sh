# Sourced by scripts/filemanager-test.sh: drag and drop in the program's
# own window, with the mouse. A tag folder holding one entry and one
# nested tag folder shows both side by side; the entry is dragged onto the
# folder — with Ctrl+Shift (a link) and plainly (the program's default,
# a move on one filesystem) — and what it did is read back from the mount.
# Needs session.sh, edits.sh, $mnt, $work, row and fail.

# The window-relative point of NAME: the middle of where a click selects
# NAME, from the first point of a grid over the file area that does, read
# back from the program's clipboard (no screenshot, whatever the program's
# layout). A drop at an entry's edge lands beside it (Thunar, Dolphin).
# The grid keeps off the sidebar and toolbars (left 30 %, Dolphin's 40 %;
# top 20 %), where a click would go to another folder.
fm_point_of() {  # NAME
    local window geometry width height x y
    window=$(fm_window)
    [ -n "$window" ] || return 1
    geometry=$(xdotool getwindowgeometry "$window" | awk '/Geometry/ { print $2 }')
    width=${geometry%x*}; height=${geometry#*x}
    # Past the double-click time: a first click where the last one was would open what is there.
    sleep 1
    for y in $(seq $(( height / 5 )) 30 $(( height * 4 / 5 ))); do
        # (Dolphin's places panel takes the left third: a click there goes to another folder.)
        for x in $(seq $(( width * $([ "$program" = dolphin ] && echo 4 || echo 3) / 10 )) 40 $(( width - 30 ))); do
            # NAME alone: a click beside every entry may leave a select-all as it was.
            if fm_selects_at "$1" "$window" "$x" "$y"; then fm_middle_of "$1" "$window" "$x" "$y"; return 0; fi
        done
    done
    return 1
}

# Whether a click at X Y (window-relative) selects NAME alone. Points are
# apart by more than a double-click's distance: never one that opens.
fm_selects_at() {  # NAME WINDOW X Y
    local selected
    # (xclip stays to serve the selection until a copy takes it: never on this function's output.)
    printf '' | xclip -selection clipboard >/dev/null 2>&1 || true
    xdotool mousemove --window "$2" "$3" "$4" click 1
    sleep 0.35
    selected=$(fm_selected)
    # Dolphin: Escape leaves the "selection mode" a copy with nothing
    # selected starts (its bar moves every entry down), and clears the
    # selection (an entry clicked while selected would be renamed in place).
    [ "$program" != dolphin ] || { xdotool key --clearmodifiers Escape; sleep 0.3; }
    [ "$selected" = "$1" ]
}

# The middle of NAME's entry from X Y, the first point of it the grid met
# (its top-left edge): as far right and down as a click still selects it,
# halved. A drop on an entry's edge lands beside it in Dolphin.
fm_middle_of() {  # NAME WINDOW X Y
    local right=$3 down=$4 step
    for step in 12 24 36 48 60 72; do fm_selects_at "$1" "$2" $(( $3 + step )) "$4" && right=$(( $3 + step )) || break; done
    for step in 12 24 36 48 60 72; do fm_selects_at "$1" "$2" "$3" $(( $4 + step )) && down=$(( $4 + step )) || break; done
    echo "$(( ($3 + right) / 2 )) $(( ($4 + down) / 2 ))"
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
    # The nested tag folder's name: long enough to wrap, as the entry's
    # title does, so that the grid of fm_point_of cannot miss its label
    # (Dolphin draws no icon here: "into" alone was 28 by 15 pixels).
    local into="into this nested tag folder by dragging an entry onto it"
    for kind in link plain; do
        keys=$([ "$kind" = link ] && echo ctrl+shift || echo "")
        source="drag-$kind-$program"
        # A tag of its own, one entry and one nested tag folder in it.
        item=$(ls "$mnt/bundles" | sed -n "$([ "$kind" = link ] && echo 3 || echo 4)p")
        mkdir "$mnt/tag/$source" "$mnt/tag/$source/$into"
        ln -s "../../bundles/$item" "$mnt/tag/$source/new"
        entry=$(ls "$mnt/tag/$source" | grep -vxF -- "$into" | sed -n 1p)
        listed "$mnt/tag/$source" > "$work/want"
        fm_start "$program" "$mnt/tag/$source"
        if fm_focus 20 && fm_until_shows "$work/want" 20 "$(date +%s%N)" >/dev/null \
            && from=$(fm_point_of "$entry") && to=$(fm_point_of "$into"); then
            # shellcheck disable=SC2086 # the points are two numbers each
            fm_drag $from $to "$keys"
            if [ "$program" = dolphin ] && [ -z "$keys" ]; then
                # Dolphin asks what a plain drop does with a menu (Move Here,
                # Copy Here, Link Here, Cancel) that has no title to find it
                # by: answered as a user who moves, with its first item.
                sleep 1.5
                [ -z "${QUERYFS_FM_SHOTS:-}" ] || import -window root "$QUERYFS_FM_SHOTS/drop-menu-$(date +%s%N).png" 2>/dev/null || true
                xdotool key --clearmodifiers Down Return
                dialogs="its drop menu → Move Here"
            else dialogs=$(fm_answer_dialogs); fi
            if [ "$(find "$mnt/tag/$source/$into" -mindepth 1 -maxdepth 1 -type d ! -type l | wc -l)" != 0 ]; then
                fail "$program" "$kind drag into tag/" "a folder was made in the view${dialogs:+; dialogs: $dialogs}"
            elif eventually tagged_with "$source/$into" "$item"; then
                # A link keeps the first tag, a move leaves it.
                row "$program" "$kind drag into tag/" "joined the nested tag; $(payload_tags "$item" | tr ',' '\n' | grep -x " *$source" >/dev/null && echo "kept" || echo "left") the first${dialogs:+; dialogs: $dialogs}"
            else
                row "$program" "$kind drag into tag/" "nothing changed${dialogs:+; dialogs: $dialogs}"
            fi
        else fail "$program" "$kind drag into tag/" "the entry or the folder was not found in the window"; fi
        fm_stop
    done
}
