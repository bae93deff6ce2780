#!/usr/bin/env bash
# The main job: installs what is needed, builds, and serves on the user scope's runtime
# directory until interrupted (Ctrl-C or SIGTERM).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "==> building" >&2
swift build --product varlink-certification

runtime="${XDG_RUNTIME_DIR:-/tmp/island-$(id -u)}/island"
mkdir -p -m 0700 "$runtime"
socket="$runtime/varlink-certification.sock"
echo "==> serving org.varlink.certification on unix:$socket (Ctrl-C stops)" >&2
exec "$(swift build --show-bin-path)/varlink-certification" --varlink="unix:$socket"
