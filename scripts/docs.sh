#!/usr/bin/env bash
# Builds IslandKit's reference as static HTML: the DocC catalog (Sources/IslandKit/IslandKit.docc:
# getting started, the tutorial, porting from ActivityKit) with every public symbol of IslandKit,
# and IslandKitTesting's symbols beside it. From modules already built (`swift build`, or the
# packages' release build): their symbol graphs are read from the .swiftmodule files
# (swift-symbolgraph-extract) and rendered by the toolchain's docc, in seconds, without the
# swift-docc-plugin's second build of IslandKit and its dependencies.
#
# Usage: scripts/docs.sh [--modules DIR] [--output DIR]
#   --modules DIR  the built modules (default: .build/debug/Modules, else .build/debug)
#   --output DIR   where the sites go (default: .build/docs): DIR/IslandKit, DIR/IslandKitTesting
# DocC's pages read their content by URL, as browsers do not from file://: serve a site, e.g.
# `python3 -m http.server -d DIR/IslandKit 8000`, and open
# http://localhost:8000/documentation/islandkit/. (docc's static hosting "with content", pages
# readable from the disk, crashes in FoundationXML with this toolchain.)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
modules=""
output="$repo/.build/docs"
while (($#)); do
  case "$1" in
    --modules) modules="$2"; shift 2 ;;
    --modules=*) modules="${1#*=}"; shift ;;
    --output) output="$2"; shift 2 ;;
    --output=*) output="${1#*=}"; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$modules" ]; then
  modules="$repo/.build/debug/Modules"
  [ -d "$modules" ] || modules="$repo/.build/debug"
fi
[ -f "$modules/IslandKit.swiftmodule" ] || [ -d "$modules/IslandKit.swiftmodule" ] \
  || { echo "docs: no IslandKit.swiftmodule in $modules (build first: swift build --product island)" >&2; exit 1; }
swift_bin="$(dirname "$(readlink -f "$(command -v swift || echo /opt/swift/usr/bin/swift)")")"
extract="$swift_bin/swift-symbolgraph-extract"
docc="$swift_bin/docc"
target="$(uname -m)-unknown-linux-gnu"

# The C modules under the Swift ones (SwiftNIO's shims, …), as SwiftPM hands them to the
# compiler: the module maps of C targets, generated in the build directory (not those of Swift
# targets' headers) or written in the packages' sources.
build="$(cd "$(dirname "$modules")" && pwd -P)"
scratch="$build"
while [ "$scratch" != / ] && [ ! -d "$scratch/checkouts" ]; do scratch="$(dirname "$scratch")"; done
clang=()
while IFS= read -r map; do
  clang+=(-Xcc "-fmodule-map-file=$map" -Xcc -I -Xcc "$(dirname "$map")")
done < <({ find "$build" -mindepth 2 -maxdepth 2 -path '*.build/module.modulemap' ! -path '*-tool.build/*'
           find "$scratch/checkouts" "$repo/Libraries/Sources" -path '*/Sources/*' -name module.modulemap; } 2>/dev/null)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for module in IslandKit IslandKitTesting; do
  # IslandKitTesting is built for tests only: the packages' release build has none.
  if [ ! -e "$modules/$module.swiftmodule" ]; then
    echo "docs: no $module.swiftmodule in $modules: its reference is left out" >&2
    continue
  fi
  mkdir -p "$work/$module"
  # Public symbols only, as a user of the library sees them.
  "$extract" -module-name "$module" -target "$target" -I "$modules" "${clang[@]}" -minimum-access-level public \
    -skip-inherited-docs -output-dir "$work/$module" >&2
done

rm -rf "$output/IslandKit" "$output/IslandKitTesting"
mkdir -p "$output"
"$docc" convert "$repo/Sources/IslandKit/IslandKit.docc" --additional-symbol-graph-dir "$work/IslandKit" \
  --fallback-display-name IslandKit --fallback-bundle-identifier org.island.IslandKit \
  --transform-for-static-hosting --output-path "$output/IslandKit" >&2
echo "$output/IslandKit/documentation/islandkit/index.html"
if [ -d "$work/IslandKitTesting" ]; then
  "$docc" convert --additional-symbol-graph-dir "$work/IslandKitTesting" \
    --fallback-display-name IslandKitTesting --fallback-bundle-identifier org.island.IslandKitTesting \
    --transform-for-static-hosting --output-path "$output/IslandKitTesting" >&2
  echo "$output/IslandKitTesting/documentation/islandkittesting/index.html"
fi
