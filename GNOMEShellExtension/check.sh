#!/usr/bin/env bash
# The extension's static checks: GNOME Shell 43's eslint configuration (lint/) over its code and
# tests, its schema compiled strictly, `gnome-extensions pack`, and the pure module's unit tests
# with plain gjs. Tests/EndToEnd/gnome/test_extension_static.py runs it in the suite.
# Usage: GNOMEShellExtension/check.sh [--pack-to DIR]   (the zip is kept there if given)
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
(cd "$here" && eslint --no-eslintrc -c .eslintrc.yml -f unix --max-warnings 0 "$uuid" tests)

echo "check: glib-compile-schemas --strict" >&2
glib-compile-schemas --strict --dry-run "$here/$uuid/schemas"

echo "check: gnome-extensions pack" >&2
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
gnome-extensions pack --force --extra-source=hosting.js --schema="schemas/org.gnome.shell.extensions.island.gschema.xml" \
  --out-dir="$out" "$here/$uuid"
zip="$out/$uuid.shell-extension.zip"
python3 -c 'import sys, zipfile; sys.exit("schemas/gschemas.compiled" not in zipfile.ZipFile(sys.argv[1]).namelist())' "$zip" \
  || { echo "check: the pack has no compiled schema" >&2; exit 1; }
[ -z "$pack_to" ] || cp "$zip" "$pack_to/"

echo "check: gjs unit tests" >&2
gjs -I "$here/$uuid" "$here/tests/test_hosting.js"
