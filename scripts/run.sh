#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs islandd on its embedded defaults —
# the user instance, SQLite state in $XDG_STATE_HOME/island, the socket in
# $XDG_RUNTIME_DIR/island/islandd.sock — until interrupted (Ctrl-C or SIGTERM).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "==> building islandd" >&2
swift build --product islandd

echo "==> starting islandd (Ctrl-C stops it)" >&2
exec "$(swift build --show-bin-path)/islandd" "$@"
