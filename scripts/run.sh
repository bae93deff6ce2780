#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs islandd on its embedded defaults —
# the user instance, SQLite state in $XDG_STATE_HOME/island, the socket in
# $XDG_RUNTIME_DIR/island/islandd.sock — until interrupted (Ctrl-C or SIGTERM).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "==> building islandd" >&2
swift build --product islandd

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
exec "$(swift build --show-bin-path)/islandd" "$@"
