# Sourced by scripts/filemanager-test.sh: edits made with each program's own
# gestures — keys sent to its window, its dialogs answered with their
# default button — and what they did to the collection, read back from the
# mount. Needs session.sh, $mnt, $backing, $work, row and fail.

# Waits up to 5 s for COMMAND to succeed.
eventually() { local _; for _ in $(seq 50); do "$@" && return 0; sleep 0.1; done; return 1; }
# (grep reads to the end, not -q: under pipefail an early exit would fail ls with SIGPIPE, and the check with it.)
in_view() { ls "$mnt/$1" | grep -F -- "$2" >/dev/null; }
not_in_view() { ! ls "$mnt/$1" | grep -xF -- "$2" >/dev/null; }
tag_folder() { ls "$mnt/$1" | grep -xF -- "$2" >/dev/null; }
# A saved query is in BACKING's configuration (a query folder merely looked up is listed too, unsaved).
saved_query() { grep -F -- "\"$2\"" "$backing/.queryfs.toml" >/dev/null 2>&1; }

# Opens PLACE in PROGRAM with its first entry alone selected; "" when it never listed the place.
open_with_first_selected() {  # PROGRAM PLACE
    local first
    first=$(ls "$mnt/$2" | sed -n 1p)
    listed "$mnt/$2" > "$work/want"
    fm_start "$1" "$mnt/$2" "$first"
    fm_focus 20 || return 1
    if [ "$1" = dolphin ]; then sleep 3; else fm_until_shows "$work/want" 20 "$(date +%s%N)" >/dev/null || return 1; fi
    fm_select_first "$1"
}

# Where a new folder's name is typed: the dialog the program opened for it
# (Nautilus, Thunar, pcmanfm, Dolphin), given the keyboard — GTK 4 takes it
# only from a click, into the name field across the dialog's lower part —
# or, without a dialog, the name being edited in place (Nemo, Caja).
fm_focus_name_field() {
    local dialog geometry
    dialog=$(fm_dialogs | sed -n 1p)
    [ -n "$dialog" ] || return 0
    xdotool windowfocus "$dialog" 2>/dev/null || true
    geometry=$(xdotool getwindowgeometry "$dialog" | awk '/Geometry/ { print $2 }')
    [ "$program" = nautilus ] && xdotool mousemove --window "$dialog" $(( ${geometry%x*} / 2 )) $(( ${geometry#*x} * 3 / 4 )) click 1
    sleep 0.3
}

edit_checks() {  # PROGRAM
    local program=$1 first dialogs where tag new
    # Rename (F2) in by-name/: the title typed over the whole name, extension kept.
    new="Renamed by $program"
    if open_with_first_selected "$program" by-name; then
        xdotool key --clearmodifiers F2; sleep 2
        xdotool key --clearmodifiers ctrl+a; xdotool type --delay 15 "$new.hpwebsite"; xdotool key --clearmodifiers Return
        dialogs=$(fm_answer_dialogs)
        if eventually in_view by-name " $new.hpwebsite"; then row "$program" "rename (F2)" "retitled${dialogs:+; dialogs: $dialogs}"
        else fail "$program" "rename (F2)" "not retitled${dialogs:+; dialogs: $dialogs}"; fi
    else fail "$program" "rename (F2)" "by-name/ never listed"; fi
    fm_stop

    # Delete (the Delete key: Move to Trash) in the largest tag folder.
    tag=$(for t in "$mnt"/tag/*/; do printf '%s\t%s\n' "$(ls "$t" | wc -l)" "$(basename "$t")"; done | sort -rn | awk -F'\t' 'NR == 1 { print $2 }')
    first=$(ls "$mnt/tag/$tag" | sed -n 1p)
    if open_with_first_selected "$program" "tag/$tag"; then
        xdotool key --clearmodifiers Delete
        dialogs=$(fm_answer_dialogs)
        if eventually not_in_view "tag/$tag" "$first"; then
            where="untagged"
            if [ -L "$mnt/.Trash-$(id -u)/files/$first" ]; then
                where="$where, in the mount's trash"
                # Restore, as the trash's own "Restore" does: the link renamed back.
                gio trash --restore "$(gio trash --list 2>/dev/null | awk -F'\t' -v p="$mnt/tag/$tag/$first" '$2 == p { print $1 }' | sed -n 1p)" 2>/dev/null \
                    && eventually in_view "tag/$tag" "$first" && where="$where; gio trash --restore tagged it again"
            elif [ -L "$HOME/.local/share/Trash/files/$first" ]; then where="$where, a copy of the link in the home trash"
            fi
            row "$program" "trash in tag/" "$where${dialogs:+; dialogs: $dialogs}"
        else fail "$program" "trash in tag/" "still tagged${dialogs:+; dialogs: $dialogs}"; fi
    else fail "$program" "trash in tag/" "tag/$tag never listed"; fi
    fm_stop

    # Copy an entry in by-name/ and paste it into a tag folder it is not in:
    # it joins the tag (the program copies the link), or the program says
    # why not — never a copy of the bundle in the view (a nested tag folder).
    local other title folders_before
    other=$(for t in "$mnt"/tag/*/; do printf '%s\t%s\n' "$(ls "$t" | wc -l)" "$(basename "$t")"; done | sort -n | awk -F'\t' '$1 > 0 && $2 !~ / / && !found { found = $2 } END { print found }')
    first=$(ls "$mnt/by-name" | sed -n 1p); title=${first#* }
    folders_before=$(find "$mnt/tag/$other" -mindepth 1 -maxdepth 1 -type d | wc -l)
    if in_view "tag/$other" " $title"; then row "$program" "copy, paste into tag/" "skipped: '$title' is in tag/$other already"
    elif open_with_first_selected "$program" by-name; then
        xdotool key --clearmodifiers ctrl+c; sleep 0.5
        xdotool key --clearmodifiers ctrl+l; sleep 0.5; xdotool type --delay 10 "$mnt/tag/$other"; xdotool key --clearmodifiers Return; sleep 2
        # Home puts the keyboard in the folder's view (Dolphin leaves it in the
        # location bar: its paste went nowhere, and the row said "nothing made").
        xdotool key --clearmodifiers Home; sleep 0.4; xdotool key --clearmodifiers ctrl+v
        dialogs=$(fm_answer_dialogs)
        if [ "$(find "$mnt/tag/$other" -mindepth 1 -maxdepth 1 -type d | wc -l)" != "$folders_before" ]; then
            fail "$program" "copy, paste into tag/" "a folder was made in tag/$other${dialogs:+; dialogs: $dialogs}"
        elif eventually in_view "tag/$other" " $title"; then row "$program" "copy, paste into tag/" "tagged $other${dialogs:+; dialogs: $dialogs}"
        else row "$program" "copy, paste into tag/" "not tagged, nothing made${dialogs:+; dialogs: $dialogs}"; fi
    else fail "$program" "copy, paste into tag/" "by-name/ never listed"; fi
    fm_stop

    # New folder in tag/ (a tag) and in query/ (a saved query).
    for place in tag query; do
        # A query of each program's own: one saved by the program before would be there already.
        new=$([ "$place" = tag ] && echo "made by $program" || echo "tag:$tag -tag:$program")
        listed "$mnt/$place" > "$work/want"
        fm_start "$program" "$mnt/$place"
        if fm_focus 20 && fm_until_shows "$work/want" 20 "$(date +%s%N)" >/dev/null; then
            xdotool key --clearmodifiers Escape "$(fm_new_folder_key "$program")"; sleep 1.5
            fm_focus_name_field
            if [ "$program" = dolphin ] && [ "$place" = query ]; then
                # Dolphin's dialog greys out OK for a query (it exists, as
                # every query does there): its placeholder first, then F2.
                xdotool key --clearmodifiers Return; sleep 2
                xdotool windowfocus "$(fm_window)" 2>/dev/null || true
                xdotool key --clearmodifiers F2; sleep 1.5
            fi
            xdotool key --clearmodifiers ctrl+a; xdotool type --delay 15 "$new"; xdotool key --clearmodifiers Return
            dialogs=$(fm_answer_dialogs)
            if eventually "$([ "$place" = tag ] && echo tag_folder || echo saved_query)" "$place" "$new"; then row "$program" "new folder in $place/" "'$new' made${dialogs:+; dialogs: $dialogs}"
            else fail "$program" "new folder in $place/" "'$new' not made (listed: $(ls "$mnt/$place" | tr '\n' '|'))${dialogs:+; dialogs: $dialogs}"; fi
        else fail "$program" "new folder in $place/" "$place/ never listed"; fi
        fm_stop
    done
}
