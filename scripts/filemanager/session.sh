# Sourced by scripts/filemanager-test.sh: one file manager at a time under
# its own Xvfb display and D-Bus session, and what its window shows read
# back from the program itself — select all, copy, and the file URIs its
# clipboard offers (text/uri-list) — never from a screenshot.

fm_display=:$((90 + RANDOM % 100))
fm_xvfb=""
fm_bus_pid=""
fm_title=""

# The X server for every program of the run; stopped by fm_stop_display.
fm_start_display() {
    # -noreset: the server would reset as the last program of a try quits,
    # and refuse the next one that connects meanwhile ("cannot open display").
    Xvfb "$fm_display" -screen 0 1280x1024x24 -noreset >/dev/null 2>&1 &
    fm_xvfb=$!
    export DISPLAY=$fm_display
    for _ in $(seq 50); do xdotool getdisplaygeometry >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "Xvfb did not start on $fm_display" >&2
    return 1
}

fm_stop_display() {
    fm_stop
    [ -n "$fm_xvfb" ] && kill "$fm_xvfb" 2>/dev/null && wait "$fm_xvfb" 2>/dev/null
    fm_xvfb=""
}

# PROGRAM DIR: start PROGRAM showing DIR in a D-Bus session of its own (the
# services it activates — gvfs, portals, tracker — live and die with it).
fm_start() {  # PROGRAM DIR [SELECT]
    local program=$1 dir=$2 address
    fm_title=$(basename "$dir")
    # The mark every process of this session carries (the services the bus
    # activates inherit it), and nothing else does: the mount's daemon, also
    # started under this DISPLAY, must survive fm_stop.
    export QUERYFS_FM_SESSION=$fm_display
    address=$(dbus-daemon --session --fork --print-address=1 --print-pid=1 | tr '\n' ' ')
    export DBUS_SESSION_BUS_ADDRESS=${address%% *}
    fm_bus_pid=$(echo "$address" | awk '{ print $2 }')
    case $program in
        pcmanfm) pcmanfm --no-desktop "$dir" ;;
        caja) caja --no-desktop "$dir" ;;
        # SELECT: an entry of DIR to start with selected (fm_select_first).
        dolphin) if [ -n "${3:-}" ]; then dolphin --new-window --select "$dir/$3"; else dolphin --new-window "$dir"; fi ;;
        *) "$program" "$dir" ;;
    esac >"$work/$program.log" 2>&1 &
    unset QUERYFS_FM_SESSION
}

# Ends the program and everything its session started: every process that
# carries the session's mark.
fm_stop() {
    local proc pid
    for proc in /proc/[0-9]*; do
        pid=${proc#/proc/}
        [ "$pid" = $$ ] || [ "$pid" = "$fm_xvfb" ] && continue
        # (a process may end while it is looked at: its environ is then unreadable)
        if { tr '\0' '\n' < "$proc/environ"; } 2>/dev/null | grep -qx "QUERYFS_FM_SESSION=$fm_display"; then kill -9 "$pid" 2>/dev/null || true; fi
    done
    [ -n "$fm_bus_pid" ] && kill "$fm_bus_pid" 2>/dev/null || true
    fm_bus_pid=""
    # Each program starts with nothing of the last one on the display.
    for _ in $(seq 20); do [ -z "$(fm_window)" ] && break; sleep 0.1; done
    return 0
}

# The program's main window: the largest visible one whose title names the
# folder it was started on (every program here puts the folder's name in
# its title; without a window manager nothing else tells windows apart,
# and helpers map windows too — GNOME's portal an untitled screen-sized one).
fm_window() {
    local window best="" area best_area=0
    for window in $(xdotool search --onlyvisible --name '.' 2>/dev/null); do
        xdotool getwindowname "$window" 2>/dev/null | grep -qF -- "$fm_title" || continue
        area=$(xdotool getwindowgeometry "$window" 2>/dev/null | awk '/Geometry/ { split($2, s, "x"); print s[1] * s[2] }')
        if [ "${area:-0}" -gt "$best_area" ]; then best=$window; best_area=$area; fi
    done
    echo "$best"
}

# Waits up to SECONDS for the window.
fm_focus() {
    local deadline=$(( $(date +%s) + $1 ))
    while [ "$(date +%s)" -lt "$deadline" ]; do [ -n "$(fm_window)" ] && return 0; sleep 0.1; done
    return 1
}

# The names the window shows, one per line, sorted: a click into its file
# area (without a window manager a GTK 4 window takes the keyboard only so;
# it selects one entry at most — double-click opens, and polls are further
# apart than a double-click; the scratch home sets KDE to double-click),
# select all, copy, and the clipboard's file URIs (each a path,
# percent-encoded).
fm_shown() {
    local window geometry width height
    window=$(fm_window)
    [ -n "$window" ] || return 0
    geometry=$(xdotool getwindowgeometry "$window" | awk '/Geometry/ { print $2 }')
    width=${geometry%x*}; height=${geometry#*x}
    xdotool mousemove --window "$window" $(( width * 3 / 5 )) $(( height * 3 / 4 )) click 1
    sleep 0.2
    # Apart: GTK 4 copies what is selected when the copy key arrives.
    xdotool key --clearmodifiers ctrl+a
    sleep 0.2
    fm_selected
}

# The names of the entries selected in the window, one per line, sorted: copied, and read from the clipboard's file URIs.
fm_selected() {
    xdotool key --clearmodifiers ctrl+c
    sleep 0.3
    xclip -o -selection clipboard -t text/uri-list 2>/dev/null | tr -d '\r\000' | grep -a '^file://' \
        | /usr/bin/python3 -c 'import sys, urllib.parse
for line in sys.stdin: print(urllib.parse.unquote(line.strip().rstrip("/").rsplit("/", 1)[-1]))' | sort || true
}

# Polls the window until WANT (a sorted file of names) is exactly what it
# shows, up to SECONDS after START (date +%s%N); prints the seconds from
# START it took, or "never".
fm_until_shows() {
    local want=$1 limit=$2 start=$3 now
    while :; do
        fm_shown > "$work/shown"
        now=$(date +%s%N)
        if cmp -s "$work/shown" "$want"; then awk -v ns=$(( now - start )) 'BEGIN { printf "%.1f\n", ns / 1e9 }'; return 0; fi
        if [ $(( (now - start) / 1000000000 )) -ge "$limit" ]; then
            # Why, for the table: no window at all, or how much of the listing it showed.
            if [ -z "$(fm_window)" ]; then echo "never(no-window)"; else echo "never(showed-$(grep -c . "$work/shown")-of-$(grep -c . "$want"))"; fi
            return 1
        fi
        sleep 0.2
    done
}

# The session's visible windows other than the main one, the largest (its
# title changes as it moves to another folder): its dialogs. Not the 1×1
# windows GTK maps off-screen for drag and drop, nor any smaller than 50×50.
fm_dialogs() {
    local window
    for window in $(xdotool search --onlyvisible --name '.' 2>/dev/null); do
        echo "$(xdotool getwindowgeometry "$window" 2>/dev/null | awk '/Geometry/ { split($2, s, "x"); print s[1] * s[2] }') $window"
    done | sort -rn | awk 'NR > 1 && $1 >= 2500 { print $2 }'
}

# Answers each dialog the program opens (up to three, one after the other)
# with its default button, Return, as a user who accepts what the program
# proposes; prints their titles, "; "-separated.
fm_answer_dialogs() {
    local dialog titles="" _
    for _ in 1 2 3; do
        sleep 1.5
        dialog=$(fm_dialogs | sed -n 1p)
        [ -n "$dialog" ] || break
        titles="$titles${titles:+; }$(xdotool getwindowname "$dialog" 2>/dev/null)"
        xdotool windowfocus "$dialog" 2>/dev/null || true
        xdotool key --window "$dialog" --clearmodifiers Return 2>/dev/null || true
    done
    echo "$titles"
}

# After fm_until_shows (which selected everything): the first entry alone.
# Home does it in the GTK programs; Dolphin keeps its selection through
# Home, so it is started with the entry selected instead (fm_start SELECT).
fm_select_first() {  # PROGRAM
    [ "$1" = dolphin ] && { xdotool windowfocus "$(fm_window)" 2>/dev/null; sleep 0.3; return 0; }
    xdotool key --clearmodifiers Home
    sleep 0.4
}

# The program's own key for a new folder.
fm_new_folder_key() { if [ "$1" = dolphin ]; then echo F10; else echo ctrl+shift+n; fi; }
