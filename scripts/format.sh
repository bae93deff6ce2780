#!/usr/bin/env bash
# Formats the repository's Swift with swift-format and .swift-format: 4 spaces, lines up to 160
# columns (99 % of the code's lines were under 140 and 99.9 % under 170 when it was chosen), the
# existing line breaks kept where they fit. Off, because the code uses them on purpose or
# swift-format cannot fix them: DoNotUseSemicolons and OneVariableDeclarationPerLine (short
# statements and paired declarations on one line), OneCasePerLine, OrderedImports (it would
# reorder the imports of 257 files), ReplaceForEachWithForLoop, OnlyOneTrailingClosureArgument,
# UseSynthesizedInitializer, NoAccessLevelOnExtensionDeclaration, UseExplicitNilCheckInConditions
# and GroupNumericLiterals.
#
# Usage: scripts/format.sh [--check] [FILE...]
#   --check  change nothing; list what is not formatted and exit 1 if anything is (the test
#            command's `format` stage); a file's text that passed before is not linted again
#   FILE     only these files (default: every Swift file git tracks)
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
# The swift-format of the toolchain that builds the package.
swift_format=$(dirname "$(readlink -f "$(command -v swift)")")/swift-format
[ -x "$swift_format" ] || swift_format=swift-format

if (($#)); then files=("$@"); else mapfile -t files < <(git ls-files '*.swift'); fi
if ((check)); then
  # A file whose text passed before, under the same configuration and swift-format, passes
  # again: only the others are linted (a run over every file costs ~8 CPU s, the inner loop's
  # `scripts/test.sh --quick` each time). The record of what passed lives in .build.
  passed=.build/format-passed
  key="$("$swift_format" --version) $(sha1sum <.swift-format)"
  mkdir -p .build
  current=$(sha1sum -- "${files[@]}")
  if [ -f "$passed" ] && [ "$(head -n 1 "$passed")" = "$key" ]; then
    mapfile -t files < <(grep -vxFf <(tail -n +2 "$passed") <<<"$current" | sed 's/^[0-9a-f]*  //')
  fi
  if ((${#files[@]})); then
    "$swift_format" lint --strict --parallel --configuration .swift-format "${files[@]}"
  fi
  { echo "$key"; echo "$current"; } >"$passed.new" && mv "$passed.new" "$passed"
  exit 0
fi
exec "$swift_format" format --in-place --parallel --configuration .swift-format "${files[@]}"
