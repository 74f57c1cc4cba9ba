# Sourced by scripts/filemanager-test.sh: "open the item" — a view of
# desktop entries (`desktop-entries = ["by-created"]`), its first entry
# opened with Return (what a double-click does), and the same file given to
# `gio open` and `kioclient5 exec`. What was opened is read from stand-ins
# for the default browser (http, https) and for the program that opens
# application/x-desktop, each writing down what it was handed. Needs
# session.sh, edits.sh, $mnt, $work, row and fail.

# The stand-ins, in the scratch home's applications and mimeapps.list.
open_setup() {
    local role
    mkdir -p "$XDG_DATA_HOME/applications"
    for role in browser editor; do
        printf '#!/bin/sh\nfor a in "$@"; do printf "%s %%s\\n" "$a"; done >> "%s/opened"\n' "$role" "$work" > "$work/$role"
        chmod +x "$work/$role"
    done
    printf '[Desktop Entry]\nType=Application\nName=Stand-in Browser\nExec=%s/browser %%u\nMimeType=x-scheme-handler/http;x-scheme-handler/https;text/html;\n' \
        "$work" > "$XDG_DATA_HOME/applications/queryfs-test-browser.desktop"
    printf '[Desktop Entry]\nType=Application\nName=Stand-in Editor\nExec=%s/editor %%f\nMimeType=application/x-desktop;text/plain;\n' \
        "$work" > "$XDG_DATA_HOME/applications/queryfs-test-editor.desktop"
    printf '[Default Applications]\napplication/x-desktop=queryfs-test-editor.desktop\nx-scheme-handler/http=queryfs-test-browser.desktop\nx-scheme-handler/https=queryfs-test-browser.desktop\n' \
        > "$XDG_CONFIG_HOME/mimeapps.list"
}

opened() { grep -xF -- "$1" "$work/opened" >/dev/null 2>&1; }

# What was opened, for a row: the page (a pass), the file as a document, or nothing.
open_result() {  # ENTRY URL
    # (10 s at most for anything to be opened: a program starts its opener through D-Bus.)
    eventually test -s "$work/opened" || eventually test -s "$work/opened" || true
    if eventually opened "browser $2"; then echo "the browser got $2"
    elif opened "editor $1"; then echo "opened as a document by the application/x-desktop program, not the page"
    elif [ -s "$work/opened" ]; then echo "opened: $(tr '\n' '|' < "$work/opened")"
    else echo "nothing opened"; fi
}

# Thunar asks before it opens a desktop file that is not executable
# ("Untrusted link launcher", Cancel its default): answered as a user who
# wants the page, with Launch Anyway (Alt+L). Prints the dialog's title.
launch_anyway() {
    local dialog
    sleep 1.5
    dialog=$(fm_dialogs | sed -n 1p)
    [ -n "$dialog" ] || return 0
    printf '%s' "$(xdotool getwindowname "$dialog" 2>/dev/null) → Launch Anyway"
    xdotool windowfocus "$dialog" 2>/dev/null || true
    xdotool key --window "$dialog" --clearmodifiers alt+l 2>/dev/null || true
}

open_check() {  # PROGRAM
    local program=$1 first url dialogs result
    rm -f "$work/opened"
    if open_with_first_selected "$program" by-created; then
        xdotool key --clearmodifiers Return
        if [ "$program" = thunar ]; then dialogs=$(launch_anyway); else dialogs=$(fm_answer_dialogs); fi
        # The entry the program opened (still selected): programs that show a
        # desktop file by its Name= sort by title, not by the rank in its name.
        first=$(fm_selected | sed -n 1p)
        url=$(sed -n 's/^URL=//p' "$mnt/by-created/$first" 2>/dev/null || true)
        result=$(open_result "$mnt/by-created/$first" "$url")
        case $result in
            "the browser got"*) row "$program" "open (Return)" "$result${dialogs:+; dialogs: $dialogs}" ;;
            # GNOME dropped Type=Link files (README, "Each file manager"): what it does is said, not failed.
            "opened as a document"*|"nothing opened"*) if [ "$program" = nautilus ]; then row "$program" "open (Return)" "$result${dialogs:+; dialogs: $dialogs}"
                                     else fail "$program" "open (Return)" "$result${dialogs:+; dialogs: $dialogs}"; fi ;;
            *) fail "$program" "open (Return)" "$result${dialogs:+; dialogs: $dialogs}" ;;
        esac
    else fail "$program" "open (Return)" "by-created/ never listed"; fi
    fm_stop
}

# GIO's and KIO's own openers on the same entry: GLib hands a desktop file
# to the application/x-desktop program (it runs only Type=Application);
# KIO opens a Type=Link's URL.
open_commands_check() {  # WITH_KIO (1 or 0)
    local first url result
    first=$(ls "$mnt/by-created" | sed -n 1p)
    url=$(sed -n 's/^URL=//p' "$mnt/by-created/$first")
    rm -f "$work/opened"
    dbus-run-session -- gio open "$mnt/by-created/$first" >"$work/gio-open.log" 2>&1 || true
    result=$(open_result "$mnt/by-created/$first" "$url")
    case $result in
        "the browser got"*|"opened as a document"*) row "gio open" "open" "$result" ;;
        *) fail "gio open" "open" "$result ($(tr '\n' ' ' < "$work/gio-open.log"))" ;;
    esac
    [ "$1" = 1 ] || return 0
    rm -f "$work/opened"
    dbus-run-session -- kioclient5 exec "$mnt/by-created/$first" >"$work/kio-open.log" 2>&1 || true
    result=$(open_result "$mnt/by-created/$first" "$url")
    case $result in
        "the browser got"*) row "kioclient" "open" "$result" ;;
        *) fail "kioclient" "open" "$result ($(tr '\n' ' ' < "$work/kio-open.log" | cut -c1-200))" ;;
    esac
}
