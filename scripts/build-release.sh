#!/usr/bin/env bash
# Builds Island's executables in release, linked the way the Debian packages ship them, and
# prints the directory that holds them. The packages (packaging/build-deb.sh) and the benchmark
# (scripts/bench.sh) both build through here, so the benchmark measures what users run.
# With --relink it compiles nothing: it links the programs the same way from the objects of a
# build already made (the test command's debug build), so the packages can be made from the
# build the tests ran (packaging/build-deb.sh --from-build).
#
# Usage: scripts/build-release.sh [--scratch-path DIR] PRODUCT...
#        scripts/build-release.sh --relink BIN_PATH --output DIR PRODUCT...
#   --scratch-path DIR  SwiftPM's build directory (default: .build-package/); reused, so a
#                       second run only relinks what changed
#   --relink BIN_PATH   link each PRODUCT again, into DIR, from the objects of the SwiftPM build
#                       whose products are in BIN_PATH (as `swift build --show-bin-path` prints
#                       it), with the link below and its own link command otherwise
# Progress goes to stderr.
#
# How the binaries are linked, and why:
#   --static-swift-stdlib     the Swift runtime, Foundation and Dispatch are linked in, so only
#                             system libraries are needed at run time (-static-stdlib with
#                             --relink: see there)
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
#                             fault mapping its neighbours too. Idle RSS −6 MiB. The list names
#                             the optimised build's functions, so with --relink of a debug build
#                             it places the few it finds and changes nothing else.
#
# --relink: SwiftPM's flag --static-swift-stdlib is passed to every compile too, and a module
# compiled for the static runtime cannot be shared with the test suites (the toolchain has no
# static Testing or XCTest). So the objects stay as compiled for the dynamic runtime, and the
# link of each product is SwiftPM's own (from BIN_PATH's build manifest, e.g. .build/debug.yaml)
# with -static-stdlib and the flags above added. The objects' autolink entries name only the
# runtime libraries themselves (-lFoundation); the static ones also name what those archives
# need (-l_FoundationICU, -lCoreFoundation, ...), so the link gets one more object, compiled
# for the static runtime, that imports every runtime module the objects name and carries those
# entries and no code.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$repo/.build-package"
relink=""
output=""
products=()
while (($#)); do
  case "$1" in
    --scratch-path) scratch="$2"; shift 2 ;;
    --scratch-path=*) scratch="${1#*=}"; shift ;;
    --relink) relink="$2"; shift 2 ;;
    --relink=*) relink="${1#*=}"; shift ;;
    --output) output="$2"; shift 2 ;;
    --output=*) output="${1#*=}"; shift ;;
    -h|--help) sed -n '2,56p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-release: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) products+=("$1"); shift ;;
  esac
done
((${#products[@]})) || { echo "build-release: name at least one product (try --help)" >&2; exit 2; }
case "$scratch" in /*) ;; *) scratch="$PWD/$scratch" ;; esac

swift=swift
command -v swift >/dev/null || swift=/opt/swift/usr/bin/swift
[ -x "$(command -v "$swift")" ] || { echo "build-release: swift not found on PATH or at /opt/swift" >&2; exit 1; }

# The link, in swiftc's words (SwiftPM's -Xlinker passes its argument on as swiftc's does).
link=(-use-ld=lld
      -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
      -Xlinker -z -Xlinker pack-relative-relocs
      -Xlinker --no-export-dynamic
      -Xlinker --push-state -Xlinker --no-as-needed -Xlinker -ljemalloc -Xlinker --pop-state
      # Names the list has and a product lacks (the other programs) are skipped quietly.
      -Xlinker "--symbol-ordering-file=$repo/packaging/islandd.order" -Xlinker --no-warn-symbol-ordering)

if [ -n "$relink" ]; then
  [ -n "$output" ] || { echo "build-release: --relink needs --output DIR" >&2; exit 2; }
  [ -d "$relink" ] || { echo "build-release: no build in $relink" >&2; exit 1; }
  mkdir -p "$output"
  start=$SECONDS
  python3 - "$(cd "$relink" && pwd -P)" "$(cd "$output" && pwd -P)" "${products[@]}" -- "${link[@]}" <<'PY' >&2
import json, os, re, subprocess, sys
bin_path, output = sys.argv[1], sys.argv[2]
products = sys.argv[3:sys.argv.index("--")]
link = sys.argv[sys.argv.index("--") + 1:]
# SwiftPM's layout: SCRATCH/TRIPLE/CONFIGURATION holds the products, SCRATCH/CONFIGURATION.yaml
# the commands that made them.
configuration, triple = os.path.basename(bin_path), os.path.basename(os.path.dirname(bin_path))
manifest_path = os.path.join(os.path.dirname(os.path.dirname(bin_path)), configuration + ".yaml")
with open(manifest_path) as f:
    manifest = f.read()
for product in products:
    name = re.escape("C.%s-%s-%s.exe" % (product, triple, configuration))
    found = re.search(r'^  "%s":\n(?:    .*\n)*?    args: (\[.*\])$' % name, manifest, re.MULTILINE)
    if not found:
        sys.exit("build-release: %s has no link of %s" % (manifest_path, product))
    args = [arg for arg in json.loads(found.group(1)) if arg != "-v"]
    swiftc, objects = args[0], next(arg for arg in args if arg.startswith("@"))
    static = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(swiftc))), "lib", "swift_static", "linux")
    libraries = subprocess.run([os.path.join(os.path.dirname(swiftc), "swift-autolink-extract"), objects, "-o", "-"],
                               check=True, capture_output=True, text=True).stdout.split()
    modules = {module for library in libraries for module in (library[2:], library[2:].removeprefix("swift"))
               if os.path.isdir(os.path.join(static, module + ".swiftmodule"))}
    runtime = os.path.join(output, product + ".static-runtime.swift")
    with open(runtime, "w") as f:
        f.writelines("import %s\n" % module for module in sorted(modules))
    subprocess.run([swiftc, "-static-stdlib", "-parse-as-library", "-target", triple,
                    "-c", runtime, "-o", runtime + ".o"], check=True)
    args[args.index("-o") + 1] = os.path.join(output, product)
    args.insert(args.index("-emit-executable"), "-static-stdlib")
    args.insert(args.index(objects) + 1, runtime + ".o")
    subprocess.run(args + link, check=True)
    print("build-release:   %s linked again from %s" % (product, bin_path))
PY
  echo "build-release:   ${products[*]} linked with the Swift runtime in $((SECONDS - start))s" >&2
  echo "$output"
  exit 0
fi

# SwiftPM's spelling of the link: -Xlinker as it is, swiftc's own flags through -Xswiftc.
swiftpm_link=()
for ((i = 0; i < ${#link[@]}; i++)); do
  if [ "${link[i]}" = -Xlinker ]; then swiftpm_link+=(-Xlinker "${link[i + 1]}"); i=$((i + 1))
  else swiftpm_link+=(-Xswiftc "${link[i]}"); fi
done
flags=(-c release --static-swift-stdlib --scratch-path "$scratch"
       -Xswiftc -gnone -Xcc -g0
       "${swiftpm_link[@]}"
       -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections)
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
