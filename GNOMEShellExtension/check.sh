#!/usr/bin/env bash
# The extension's static checks: GNOME Shell 43's eslint configuration (lint/) over its code and
# tests, its schema compiled strictly, both families assembled (assemble.sh) and packed with
# `gnome-extensions pack`, and the pure module's unit tests with plain gjs.
# Tests/EndToEnd/gnome/test_extension_static.py runs it in the suite.
# Usage: GNOMEShellExtension/check.sh [--pack-to DIR]   (the zips are kept in DIR/shell-43/ and
#        DIR/shell-45/ if given)
# Needs: eslint and node-js-yaml, gjs, gnome-shell (gnome-extensions), libglib2.0-bin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
uuid=island@island.org
pack_to=""
[ "${1:-}" = --pack-to ] && pack_to="$2"

# Debian's eslint resolves its modules from /usr/share/nodejs, which a Node.js not from Debian
# does not search by itself.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
echo "check: eslint" >&2
# From the extension's directory: eslint 6.4 fails on paths outside its working directory.
(cd "$here" && eslint --no-eslintrc -c .eslintrc.yml -f unix --max-warnings 0 island shell-43 shell-45 tests)

echo "check: glib-compile-schemas --strict" >&2
glib-compile-schemas --strict --dry-run "$here/island/schemas"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for shell in 43 45; do
  echo "check: assemble.sh --shell $shell, gnome-extensions pack" >&2
  extension="$("$here/assemble.sh" --shell "$shell" "$out/assembled-$shell")"
  mkdir -p "$out/$shell"
  gnome-extensions pack --force --extra-source=island.js --extra-source=hosting.js --extra-source=preferences.js \
    --schema="schemas/org.gnome.shell.extensions.island.gschema.xml" --out-dir="$out/$shell" "$extension"
  zip="$out/$shell/$uuid.shell-extension.zip"
  python3 - "$zip" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
wanted = {"metadata.json", "extension.js", "prefs.js", "island.js", "hosting.js", "preferences.js", "schemas/gschemas.compiled"}
sys.exit("check: the pack lacks " + ", ".join(sorted(wanted - names)) if wanted - names else 0)
PY
  if [ -n "$pack_to" ]; then mkdir -p "$pack_to/shell-$shell" && cp "$zip" "$pack_to/shell-$shell/"; fi
done

echo "check: gjs unit tests" >&2
gjs -m "$here/tests/test_hosting.js"
