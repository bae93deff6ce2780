#!/usr/bin/env bash
# The screenshot gallery of island-overlay: every form of the five example apps
# (compact, minimal, expanded, alert, and the list), drawn by the overlay itself off-screen
# (island-overlay --render-gallery: cairo and Pango, no display), into docs/gallery/ where the
# README shows them. With --screen it also photographs the real overlay on a real compositor
# (scripts/desktop-gallery.py: headless sway as the unprivileged test user, the real islandd,
# bridge and mpv; needs root, sway, grim, mpv and the island-test user of
# scripts/install-deps.sh): every form of the examples and of Now Playing, into DIR/screen/.
# With --gnome it photographs the island on GNOME Shell's top bar (the extension's end-to-end
# test, Tests/EndToEnd/gnome/test_gnome_shell.py, in a nested gnome-shell; needs root and
# gnome-shell): compact, expanded, alert and the list, as DIR/gnome-*.png; and the lock screen
# (Tests/EndToEnd/gnome/test_gnome_lock_screen.py), as DIR/gnome-lock-screen.png.
#
# Usage: scripts/gallery.sh [--output DIR] [--scale N] [--screen] [--gnome]
#   --output DIR  where the PNGs go (default: docs/gallery); its old PNGs are replaced (not the
#                 motion strips of scripts/frame-strips.sh)
#   --scale N     draw N times larger, 1-4 (default 1: small files for the README)
#   --screen      also the on-screen shots
#   --gnome       also the shots on GNOME Shell (at scale 1 whatever --scale says)
# ISLAND_BIN_DIR=DIR uses the binaries there instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."

output=docs/gallery
scale=1
screen=0
gnome=0
while (($#)); do
  case "$1" in
    --output) output="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --screen) screen=1; shift ;;
    --gnome) gnome=1; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gallery: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

if [ -n "${ISLAND_BIN_DIR:-}" ]; then
  bin="$ISLAND_BIN_DIR"
else
  products=(island-overlay)
  ((screen)) && products+=(islandd island-bridge)
  ((gnome)) && products+=(islandd island)
  for product in "${products[@]}"; do
    swift build --product "$product" >&2
  done
  bin="$(swift build --show-bin-path)"
fi

mkdir -p "$output"
# Its own PNGs only: the motion strips of scripts/frame-strips.sh (motion-*.png) stay, and the
# GNOME shots unless --gnome takes them again.
find "$output" -maxdepth 1 -name '*.png' ! -name 'motion-*.png' ! -name 'gnome-*.png' -delete
((gnome)) && rm -f "$output"/gnome-*.png
rm -f "$output"/screen/*.png
# Fixed clock zone, so times of day read the same whoever renders.
TZ=UTC "$bin/island-overlay" --render-gallery "$output" --layouts packaging/layouts --scale "$scale" >&2

if ((screen)); then
  python3 scripts/desktop-gallery.py --bin-dir "$bin" --out "$output/screen" --scale "$scale" >&2
fi
if ((gnome)); then
  ISLAND_BIN_DIR="$bin" ISLAND_GNOME_GALLERY="$(cd "$output" && pwd)" \
    python3 -m pytest -q -c Tests/EndToEnd/pytest.ini --rootdir Tests/EndToEnd Tests/EndToEnd/gnome/test_gnome_shell.py \
      Tests/EndToEnd/gnome/test_gnome_lock_screen.py >&2
fi
ls "$output"/*.png "$output"/screen/*.png 2>/dev/null || true
