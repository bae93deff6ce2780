#!/usr/bin/env bash
# islandd's benchmark (docs/design.md §9): builds islandd as the Debian package ships it
# (scripts/build-release.sh) and runs Benchmarks/bench.py, which measures latency, throughput, RSS
# and start-up against the floor relay and the D-Bus service of the shared harness
# (../shared/bench, or --harness DIR), in one run, and prints a Markdown table of the ratios.
#
#   scripts/bench.sh                 the full run (2–4 minutes)
#   scripts/bench.sh --runs 5        five harness runs, and the range of each ratio over them
#   scripts/bench.sh --quick         a smoke run with short durations
#   scripts/bench.sh --islandd PATH  measure that binary, no build
#   scripts/bench.sh --help          every option
#   scripts/bench.sh --overlay [ARGS] the graphical island instead: builds islandd,
#                                    island-presenter and island-overlay the same way and runs
#                                    Benchmarks/overlay.py ARGS (idle wake-ups, redraws, morph
#                                    frame times, RSS, Request -> screen, next to Waybar); needs
#                                    root, sway and the island-test user (scripts/install-deps.sh)
#   scripts/bench.sh --bridge [ARGS] island-bridge instead: builds islandd and
#                                    island-bridge the same way and runs Benchmarks/bridge.py ARGS
#                                    (MPRIS and notification -> presenter latency, idle wake-ups,
#                                    RSS) with mpv, dunst and Xvfb on a bus of its own
#   scripts/bench.sh --push [ARGS]   push instead: builds islandd and island the same way and
#                                    runs Benchmarks/push.py ARGS (backend publish -> presenter
#                                    latency against the broker's own, a fan-out to 50 islandd,
#                                    and one broadcast channel's publish -> presenter deltas on 50
#                                    islandd against 50 plain subscribers, on mosquitto and on a
#                                    three-node nats-server cluster); needs mosquitto,
#                                    libmosquitto-dev and nats-server (scripts/install-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --bridge ]; then
  shift
  bin="$(scripts/build-release.sh islandd island-bridge)"
  # Debian's python3: the benchmark drives the notification server with python3-dbus.
  exec /usr/bin/python3 Benchmarks/bridge.py --bin-dir "$bin" "$@"
fi

if [ "${1:-}" = --overlay ]; then
  shift
  bin="$(scripts/build-release.sh islandd island-presenter island-overlay)"
  exec python3 Benchmarks/overlay.py --bin-dir "$bin" "$@"
fi

if [ "${1:-}" = --push ]; then
  shift
  bin="$(scripts/build-release.sh islandd island)"
  exec python3 Benchmarks/push.py --islandd "$bin/islandd" --island "$bin/island" "$@"
fi

build=1
for arg in "$@"; do
  case "$arg" in
    --islandd|--islandd=*|-h|--help) build=0 ;;
  esac
done

if [ "$build" = 1 ]; then
  bin="$(scripts/build-release.sh islandd)"
  # bench.py copies the binary before it starts, so a rebuild during the run changes nothing.
  exec python3 Benchmarks/bench.py --islandd "$bin/islandd" "$@"
fi
exec python3 Benchmarks/bench.py "$@"
