#!/usr/bin/env bash
# Frame strips of the island's motion, photographed on a real compositor: headless sway
# as the unprivileged test user, the real islandd and island-overlay, the example apps, and bursts
# of grim frames while the island moves. Six strips, each the state before and seven frames of the
# motion side by side, labelled with their time since the first frame that moved:
#   docs/gallery/motion-arrival.png   nothing live -> compact
#   docs/gallery/motion-expand.png    compact -> expanded
#   docs/gallery/motion-collapse.png  expanded -> compact
#   docs/gallery/motion-split.png     compact -> minimal (the bubble splits off the pill)
#   docs/gallery/motion-merge.png     minimal -> compact (the bubble merges back)
#   docs/gallery/motion-list.png      compact -> the list open (it grows out from under the island)
# Needs root (the session runs as the island-test user), sway, swaybg, grim and ImageMagick's
# montage (scripts/install-deps.sh installs them). Look at each strip after a change to the motion,
# the geometry or the style.
#
# Usage: scripts/frame-strips.sh [--output DIR] [--scale N] [--keep-frames DIR]
#   --output DIR       where the strips go (default: docs/gallery)
#   --scale N          enlarge the strips N times, 1-3 (default 1)
#   --keep-frames DIR  also keep every frame of every burst
# ISLAND_BIN_DIR=DIR uses the binaries there instead of building them (a debug build is fine: the
# overlay paints a frame in about a millisecond either way).
set -euo pipefail
cd "$(dirname "$0")/.."

for arg in "$@"; do
  case "$arg" in
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  esac
done

if [ -z "${ISLAND_BIN_DIR:-}" ]; then
  for product in islandd island-overlay; do
    swift build --product "$product" >&2
  done
  ISLAND_BIN_DIR="$(swift build --show-bin-path)"
fi
export ISLAND_BIN_DIR
exec python3 Tests/EndToEnd/harness/frame_strips.py "$@"
