#!/usr/bin/env bash
# The main job: installs what is needed, builds islandd, island, island-presenter and
# island-overlay (the island on screen, which also draws their SVG), and runs islandd on its
# embedded defaults — the user instance, SQLite state in $XDG_STATE_HOME/island, the socket in
# $XDG_RUNTIME_DIR/island/islandd.sock — until interrupted (Ctrl-C or SIGTERM).
# The CLI's desktop entry is installed for the user when missing, so `island` works at once.
# With ISLAND_BIN_DIR set, the binaries there are run as they are: nothing is installed or built.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${ISLAND_BIN_DIR:-}" ]; then
  bin="$ISLAND_BIN_DIR"
else
  # Only what the build needs: the tests' part makes a system user (sudo) and installs Python
  # packages with pip, which Debian 12's own python3 refuses (PEP 668, externally managed), so
  # `scripts/run.sh` stopped there on a fresh machine before building anything.
  bash scripts/install-deps.sh --build
  for product in islandd island island-presenter island-overlay; do
    echo "==> building $product" >&2
    swift build --product "$product"
  done
  bin="$(swift build --show-bin-path)"
fi

# Every `island` command is refused as Unentitled unless a desktop entry for org.island.cli
# declares Live Activities. The package installs one system-wide; from a source checkout the
# user's own copy does: the user scope accepts the CLI's claim to an app with a manifest,
# whichever build of `island` runs.
data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
applications="$data_home/applications"
installed=""
IFS=: read -ra data_dirs <<< "$data_home:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
for dir in "${data_dirs[@]}"; do
  [ -n "$dir" ] && [ -e "$dir/applications/org.island.cli.desktop" ] && installed="$dir"
done
if [ -z "$installed" ]; then
  install -d "$applications"
  install -m 0644 packaging/applications/org.island.cli.desktop "$applications/"
  echo "==> installed the island CLI's desktop entry in $applications (the CLI needs one)" >&2
fi

# islandd serves the user instance in the user's runtime directory and refuses to guess one.
# A login session has it (pam_systemd makes /run/user/UID); a bare container or `su` shell
# may not: then make it as pam_systemd would, or a private one, and say where clients look.
if [ -z "${XDG_RUNTIME_DIR:-}" ] && [ ! -d "/run/user/$(id -u)" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    install -d -m 0700 "/run/user/0"
    echo "==> made the runtime directory /run/user/0 (no login session made one)" >&2
  else
    export XDG_RUNTIME_DIR="$(mktemp -d -t "island-runtime-$(id -u).XXXXXX")"
    echo "==> no runtime directory: using $XDG_RUNTIME_DIR; clients need: export XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" >&2
  fi
fi

echo "==> starting islandd (Ctrl-C stops it)" >&2
echo "==> try, in another terminal: $bin/island-presenter tui (and scripts/demo.sh)" >&2
exec "$bin/islandd" "$@"
