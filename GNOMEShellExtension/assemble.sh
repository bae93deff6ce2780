#!/usr/bin/env bash
# Puts the extension together for one family of GNOME Shell releases, as it is installed:
# the shared ES modules of island/ (the extension itself, its pure decisions, its preferences,
# its schema) with the entry points and metadata.json of shell-43/ (43 and 44: the `imports`
# format) or shell-45/ (45 and later: ES modules), and the schema compiled. Prints the
# extension's directory, DIR/island@island.org.
#
# Usage: GNOMEShellExtension/assemble.sh --shell 43|45|auto DIR
#   auto: the family of the gnome-shell installed here (43 when there is none)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
uuid=island@island.org
shell=""
case "${1:-}" in
  --shell) shell="${2:-}"; shift 2 ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
dir="${1:-}"
[ -n "$dir" ] && [ $# -eq 1 ] || { echo "assemble: usage: assemble.sh --shell 43|45|auto DIR" >&2; exit 2; }
if [ "$shell" = auto ]; then
  major="$(gnome-shell --version 2>/dev/null | sed -n 's/^GNOME Shell \([0-9]*\).*/\1/p')"
  if [ -n "$major" ] && [ "$major" -ge 45 ]; then shell=45; else shell=43; fi
fi
case "$shell" in
  43|45) ;;
  *) echo "assemble: --shell must be 43, 45 or auto" >&2; exit 2 ;;
esac

out="$dir/$uuid"
rm -rf "$out"
install -d -m 0755 "$out/schemas"
install -m 0644 "$here/island/island.js" "$here/island/hosting.js" "$here/island/preferences.js" "$out/"
install -m 0644 "$here/shell-$shell/metadata.json" "$here/shell-$shell/extension.js" "$here/shell-$shell/prefs.js" "$out/"
install -m 0644 "$here/island/schemas/org.gnome.shell.extensions.island.gschema.xml" "$out/schemas/"
glib-compile-schemas --strict "$out/schemas"
chmod 0644 "$out/schemas/gschemas.compiled"
echo "$out"
