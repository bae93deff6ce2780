#!/usr/bin/env bash
# Builds Island's executables in release, linked the way the Debian package ships them, and
# prints the directory that holds them. The package (packaging/build-deb.sh) and the benchmark
# (scripts/bench.sh) both build through here, so the benchmark measures what users run.
#
# Usage: scripts/build-release.sh [--scratch-path DIR] PRODUCT...
#   --scratch-path DIR  SwiftPM's build directory (default: .build-package/); reused, so a
#                       second run only relinks what changed
# Progress goes to stderr.
#
# How the binaries are linked, and why:
#   --static-swift-stdlib     the Swift runtime, Foundation and Dispatch are linked in, so only
#                             system libraries are needed at run time
#   -gnone, -g0               no DWARF: the package strips it, and the profiles strip it
#                             before callgrind reads the symbols
#   lld, -z relro -z now      Debian's hardening defaults (gold, swiftc's default linker,
#                             cannot do the next item)
#   -z pack-relative-relocs   a static Swift program has ~95,000 relative relocations; as RELR
#                             (glibc >= 2.36) they take 18 KB instead of 2.2 MB of RELA that
#                             ld.so reads, and keeps resident, at every start
#   --no-export-dynamic       swiftc exports every symbol of the program's own modules; nothing
#                             looks them up with dlsym, and ld.so consults that table first for
#                             each symbol any library binds. Together the last two keep ~2.7 MiB
#                             of the file out of islandd's resident memory.
#   -ljemalloc                jemalloc is the allocator (libjemalloc2 at run time): islandd
#                             allocates a call's objects on its event loop and frees many on
#                             the store's writer thread, and back; glibc's malloc pays for that
#                             in arena locks and trims. With jemalloc an acknowledged update
#                             costs ~20% less CPU with one presenter, ~5% with eight (docs/benchmarks.md). Linked ahead of libc,
#                             so its malloc is the one every library binds to.
#   -function-sections and packaging/islandd.order
#                             every function in its own section, and the ~5,000 that islandd
#                             runs to start and serve an activity linked first and together
#                             (scripts/make-order-file.py writes the list): it then maps those
#                             few megabytes instead of pages scattered over 20 MB of code, each
#                             fault mapping its neighbours too. Idle RSS −6 MiB.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$repo/.build-package"
products=()
while (($#)); do
  case "$1" in
    --scratch-path) scratch="$2"; shift 2 ;;
    --scratch-path=*) scratch="${1#*=}"; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-release: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) products+=("$1"); shift ;;
  esac
done
((${#products[@]})) || { echo "build-release: name at least one product (try --help)" >&2; exit 2; }
case "$scratch" in /*) ;; *) scratch="$PWD/$scratch" ;; esac

swift=swift
command -v swift >/dev/null || swift=/opt/swift/usr/bin/swift
[ -x "$(command -v "$swift")" ] || { echo "build-release: swift not found on PATH or at /opt/swift" >&2; exit 1; }

flags=(-c release --static-swift-stdlib --scratch-path "$scratch"
       -Xswiftc -gnone -Xcc -g0
       -Xswiftc -use-ld=lld
       -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
       -Xlinker -z -Xlinker pack-relative-relocs
       -Xlinker --no-export-dynamic
       -Xlinker --push-state -Xlinker --no-as-needed -Xlinker -ljemalloc -Xlinker --pop-state
       -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
       # Names the list has and a product lacks (the other programs) are skipped quietly.
       -Xlinker "--symbol-ordering-file=$repo/packaging/islandd.order" -Xlinker --no-warn-symbol-ordering)
bin_path="$(cd "$repo" && "$swift" build "${flags[@]}" --show-bin-path)"
for product in "${products[@]}"; do
  # SwiftPM relinks when a source changes, not when the ordering list does.
  if [ "$repo/packaging/islandd.order" -nt "$bin_path/$product" ]; then rm -f "$bin_path/$product"; fi
  echo "build-release: swift build -c release --product $product (scratch: ${scratch#"$repo"/})" >&2
  start=$SECONDS
  (cd "$repo" && "$swift" build "${flags[@]}" --product "$product") >&2
  echo "build-release:   $product built in $((SECONDS - start))s" >&2
done
echo "$bin_path"
