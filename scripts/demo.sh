#!/usr/bin/env bash
# Shows the island at work: installs the five example apps (manifests and layouts from
# packaging/) for the current user, asks the running islandd to reload, and plays a short
# story with each — a coffee order, a fast, a Pomodoro, a flight and a food delivery.
#
# Start the daemon first (scripts/run.sh), and a presenter to watch (island-presenter tui),
# or pass --overlay to play it on the graphical island: island-overlay is started in this
# graphical session unless one runs already (it keeps running after the demo), and its list
# opens for one step near the end.
# Usage: scripts/demo.sh [--socket PATH] [--step SECONDS] [--overlay]
set -euo pipefail
cd "$(dirname "$0")/.."

step=3
socket_args=()
overlay=0
while (($#)); do
  case "$1" in
    --socket) socket_args=(--socket "$2"); shift 2 ;;
    --step) step="$2"; shift 2 ;;
    --overlay) overlay=1; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

bin="${ISLAND_BIN_DIR:-$(swift build --show-bin-path)}"
[ -x "$bin/island" ] || swift build --product island >&2
island() { "$bin/island" "$@" "${socket_args[@]}"; }

data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/island/layouts"
# The example apps alone: a user's copy of a packaged entry (the CLI's, the bridge's, the
# overlay's) or of the bridge's layouts would hide the package's own, an upgrade's included.
cp packaging/applications/org.island.example.*.desktop "$data/applications/"
cp -r packaging/layouts/org.island.example.* "$data/island/layouts/"
island admin reload

if ((overlay)); then
  [ -n "${WAYLAND_DISPLAY:-}${DISPLAY:-}" ] \
    || { echo "demo: --overlay needs a graphical session (WAYLAND_DISPLAY or DISPLAY)" >&2; exit 2; }
  [ -x "$bin/island-overlay" ] || swift build --product island-overlay >&2
  pidfile="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/island/overlay.pid"
  if ! { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
    "$bin/island-overlay" "${socket_args[@]}" &
    sleep 1
    # 69: no way to place the island here (GNOME on Wayland has no layer-shell).
    if ! kill -0 $! 2>/dev/null; then
      status=0; wait $! || status=$?
      echo "demo: island-overlay exited with status $status" >&2
      exit 1
    fi
    echo "demo: island-overlay started (pid $!); it keeps running after the demo" >&2
  fi
fi

now=$(date +%s)
coffee=$(island start --app org.island.example.Coffee CoffeeOrder \
  --attributes '{"shop":"Blue Bottle","order":"A17"}' \
  --state '{"stage":"ordered","stageTitle":"Order received","etaMinutes":12}')
fast=$(island start --app org.island.example.Fasting Fast \
  --attributes "{\"plan\":\"16:8\",\"startedAt\":$((now - 36000)),\"goalAt\":$((now + 21600))}" \
  --state '{"percent":62}')
focus=$(island start --app org.island.example.Pomodoro Pomodoro \
  --attributes '{"task":"Write the report","rounds":4}' \
  --state "{\"phase\":\"Focus\",\"round\":1,\"startedAt\":$now,\"endsAt\":$((now + 1500))}" --relevance 50)
flight=$(island start --app org.island.example.Flights Flight \
  --attributes '{"flight":"LH 454","origin":"FRA","destination":"SFO"}' \
  --state '{"status":"boarding","boarding":true,"gate":"B44"}')
food=$(island start --app org.island.example.FoodDelivery FoodOrder \
  --attributes '{"restaurant":"Pizza Place"}' --state '{"step":1,"minutesLeft":25,"courier":"Sam"}')
echo "started: coffee $coffee, fast $fast, focus $focus, flight $flight, food $food" >&2

sleep "$step"
island update --app org.island.example.Coffee "$coffee" --state '{"stage":"brewing","stageTitle":"Brewing","etaMinutes":7}'
island update --app org.island.example.FoodDelivery "$food" --state '{"step":2,"minutesLeft":18,"courier":"Sam"}'
sleep "$step"
island update --app org.island.example.Flights "$flight" \
  --state "{\"status\":\"inFlight\",\"inFlight\":true,\"eta\":\"14:05\",\"departedAt\":$(date +%s),\"arrivesAt\":$(( $(date +%s) + 39600 ))}" \
  --alert-title "LH 454 departed" --alert-body "Arriving in San Francisco at 14:05"
island update --app org.island.example.Coffee "$coffee" --state '{"stage":"onTheWay","stageTitle":"On the way","etaMinutes":3}'
sleep "$step"
island update --app org.island.example.FoodDelivery "$food" --state '{"step":3,"minutesLeft":6,"courier":"Sam"}'
island update --app org.island.example.Fasting "$fast" --state '{"percent":70}'
sleep "$step"
if ((overlay)); then
  "$bin/island-overlay" --toggle-list
  sleep "$step"
  "$bin/island-overlay" --toggle-list
fi
# As ActivityKit's end(content:): the final content says the order arrived, so the ended
# activity, still listed until dismissed, no longer reads as on its way.
island end --app org.island.example.Coffee "$coffee" --state '{"stage":"delivered","stageTitle":"Delivered"}'
island end --app org.island.example.FoodDelivery "$food" --state '{"step":4,"courier":"Sam","delivered":true}' --dismiss 60
# An activity answers only the app that started it: the commands that end these name it, as
# `island end ID` alone (acting for org.island.cli) is refused with NoSuchActivity.
{
  echo "the flight, the fast and the Pomodoro keep running; let them expire, or end them:"
  echo "  island end --app org.island.example.Flights $flight${socket_args[*]:+ ${socket_args[*]}}"
  echo "  island end --app org.island.example.Fasting $fast${socket_args[*]:+ ${socket_args[*]}}"
  echo "  island end --app org.island.example.Pomodoro $focus${socket_args[*]:+ ${socket_args[*]}}"
} >&2
