#!/usr/bin/env bash
# The screenshot gallery of island-overlay (issue #17): every form of the five example apps
# (compact, minimal, expanded, alert, and the list), drawn by the overlay itself off-screen
# (island-overlay --render-gallery: cairo and Pango, no display), into docs/gallery/ where the
# README shows them. With --screen it also photographs the real overlay on a real compositor:
# headless sway as the unprivileged test user (Tests/EndToEnd/harness/desktop.py; needs root, sway,
# grim and the island-test user of scripts/install-deps.sh), playing a short story of the
# examples, each shot cut to the top of the screen (docs/gallery/screen-*.png).
#
# Usage: scripts/gallery.sh [--output DIR] [--scale N] [--screen]
#   --output DIR  where the PNGs go (default: docs/gallery); its old PNGs are replaced (not the
#                 motion strips of scripts/frame-strips.sh)
#   --scale N     draw N times larger, 1-4 (default 1: small files for the README)
#   --screen      also the on-screen shots
# ISLAND_BIN_DIR=DIR uses the binaries there instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."

output=docs/gallery
scale=1
screen=0
while (($#)); do
  case "$1" in
    --output) output="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --screen) screen=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gallery: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

if [ -n "${ISLAND_BIN_DIR:-}" ]; then
  bin="$ISLAND_BIN_DIR"
else
  products=(island-overlay)
  ((screen)) && products+=(islandd)
  for product in "${products[@]}"; do
    swift build --product "$product" >&2
  done
  bin="$(swift build --show-bin-path)"
fi

mkdir -p "$output"
# Its own PNGs only: the motion strips of scripts/frame-strips.sh (motion-*.png) stay.
find "$output" -maxdepth 1 -name '*.png' ! -name 'motion-*.png' -delete
# Fixed clock zone, so times of day read the same whoever renders.
TZ=UTC "$bin/island-overlay" --render-gallery "$output" --layouts packaging/layouts --scale "$scale" >&2

if ((screen)); then
  ISLAND_BIN_DIR="$bin" python3 - "$output" <<'PY'
import os, sys, time
sys.path.insert(0, os.path.join("Tests", "EndToEnd"))
from harness import desktop

output = sys.argv[1]
reason = desktop.why_not("sway", "swaybg", "grim") or desktop.overlay_missing()
if reason:
    sys.exit("gallery: no on-screen shots: " + reason)
session = desktop.UserSession()
try:
    session.start_bus()
    sway = desktop.Sway(session)
    session.start_islandd()
    overlay = desktop.Overlay(session, sway.env)

    def request(app, type, attributes, state):
        with session.varlink("org.island.Producer") as producer:
            return producer.Request(app=app, type=type, attributes=attributes, content={"state": state})["activity"]["id"]

    def shoot(name, height=140):
        time.sleep(1.2)  # the morph has ended
        image = sway.screenshot()
        width = 560
        left = (image.width - width) // 2
        image.crop((left, 0, left + width, height)).save_png(os.path.join(output, "screen-%s.png" % name))
        print(os.path.join(output, "screen-%s.png" % name))

    now = time.time()
    coffee = request("org.island.example.Coffee", "CoffeeOrder", {"shop": "Blue Bottle", "order": "A17"},
                     {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7})
    shoot("compact", 70)
    request("org.island.example.Flights", "Flight", {"flight": "LH 454", "origin": "FRA", "destination": "SFO"},
            {"status": "inFlight", "inFlight": True, "eta": "14:05", "departedAt": now - 3600, "arrivesAt": now + 36000})
    shoot("minimal", 70)
    session.call_as_user("org.island.Presenter.Interact", {"action": "expand", "id": coffee})
    shoot("expanded")
    session.call_as_user("org.island.Presenter.Interact", {"action": "collapse"})
    with session.varlink("org.island.Producer") as producer:
        producer.Update(app="org.island.example.Coffee", id=coffee,
                        content={"state": {"stage": "onTheWay", "stageTitle": "On the way", "etaMinutes": 3}},
                        alert={"title": "Your coffee is on the way", "body": "Sam is 3 minutes away"})
    shoot("alert")
    session.call_as_user("org.island.Presenter.Interact", {"action": "collapse"})
    session.run([desktop.overlay_binary(), "--toggle-list"])
    shoot("list", 330)
finally:
    session.close()
PY
fi
ls "$output"/*.png
