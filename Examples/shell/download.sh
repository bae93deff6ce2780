#!/bin/sh
# A download shown as a Live Activity, from a shell script with the `island` CLI.
#
# Install org.example.DownloadShell.desktop (beside this file) in ~/.local/share/applications/
# first; a running islandd notices it at once. `island` finds the daemon
# by itself: $ISLAND_SOCKET, else $XDG_RUNTIME_DIR/island/islandd.sock.
# Run `island-presenter tui` in another terminal to watch it.
set -eu

app=org.example.DownloadShell   # the desktop entry's name, without .desktop
file=${1:-debian-12.iso}
pause=${STEP_SECONDS:-2}        # the pretend work between two updates

# If the script is stopped (Ctrl-C, `kill`, systemd stopping it) the activity would stay on
# screen saying "downloading" for hours: end it on the way out, saying what happened. The traps
# come first, so that a stop right after the start finds them in place.
id=
percent=0
cancel() {
    if [ -n "$id" ]; then
        island end --app "$app" "$id" --state "{\"stage\": \"cancelled\", \"percent\": $percent}" >/dev/null
    fi
    exit "$1"
}
trap 'cancel 130' INT
trap 'cancel 143' TERM
trap 'cancel 129' HUP

# Start the activity: the attributes never change, the state does. With --key, running the
# script again while this download is still shown gives back the same activity, not a second one.
id=$(island start --app "$app" Download --key "download-$file" \
    --attributes "{\"file\": \"$file\"}" \
    --state '{"stage": "downloading", "percent": 0}')
echo "started $id"

sleep "$pause"
percent=40
island update --app "$app" "$id" --state '{"stage": "downloading", "percent": 40}' >/dev/null
echo "updated $id: 40%"

sleep "$pause"
percent=100
island update --app "$app" "$id" --state '{"stage": "verifying", "percent": 100}' >/dev/null
echo "updated $id: verifying"

sleep "$pause"
trap - INT TERM HUP
# The final state stays listed (the lock-screen list) until the user or the daemon dismisses it.
island end --app "$app" "$id" --state '{"stage": "done", "percent": 100}' >/dev/null
echo "ended $id"
