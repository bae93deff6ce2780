#!/usr/bin/env bash
# Builds the Debian packages of Island: island_<version>_<arch>.deb, release binaries of
# islandd, island and island-presenter (the Swift standard library and Foundation linked
# statically, so only system libraries are needed), the systemd units, sysusers.d and
# tmpfiles.d entries, the CLI's desktop entry, man pages, documentation and examples; and
# island-overlay_<version>_<arch>.deb, the graphical island (GTK 3, gtk-layer-shell), its user
# unit, XDG autostart entry and man page (its binary also draws the SVG of island-presenter
# snapshot --svg and island preview --svg, off-screen: cairo and Pango stay out of the core
# package), and the GNOME Shell extension that hosts it on GNOME, so a headless machine installs
# only the first; and
# island-bridge_<version>_<arch>.deb, the session bus's players, progress notifications and
# jobs as activities: its binary, user unit, manifest, layouts and man page.
#
# Usage: packaging/build-deb.sh [--output DIR] [--scratch-path DIR] [--no-build] [--from-build BIN_PATH]
#                               [--compression TYPE] [--compression-level N] [--gnome-shell 43|45|auto]
#   --output DIR        where the .debs go (default: .build-deb/)
#   --scratch-path DIR  SwiftPM's build directory (default: .build-package/); reused, so a
#                       second run only relinks what changed
#   --no-build          package the binaries already in the scratch path
#   --from-build BIN_PATH
#                       no release build: the programs linked again, the packages' way, from
#                       the objects of the build whose products are in BIN_PATH (as `swift build
#                       --show-bin-path` prints it; scripts/build-release.sh --relink), into
#                       packaged-CONFIGURATION/ beside that build's folders. The test command
#                       packages its debug build this way; the packages that ship are release.
#   --compression TYPE  dpkg-deb's compressor: xz (default, smallest), gzip (much faster)
#   --compression-level N
#                       its level (dpkg-deb -zN; default dpkg-deb's own, 9 for gzip): the test
#                       command makes its throwaway packages of a debug build with gzip at 1,
#                       ~75 CPU s less for their ~430 MB than at 9
#   --gnome-shell N     the GNOME Shell extension's entry points: 43 (43 and 44, Debian 12), 45
#                       (45 and later) or auto (default: those of the gnome-shell installed
#                       here, else 43)
# Prints the path of each package on stdout, island's first; progress goes to stderr.
# Needs: swift (PATH or /opt/swift), dpkg-dev (dpkg-shlibdeps, dpkg-parsechangelog), gzip.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
output="$repo/.build-deb"
scratch="$repo/.build-package"
build=1
from_build=""
compression=xz
compression_level=""
gnome_shell=auto
while (($#)); do
  case "$1" in
    --output) output="$2"; shift 2 ;;
    --output=*) output="${1#*=}"; shift ;;
    --scratch-path) scratch="$2"; shift 2 ;;
    --scratch-path=*) scratch="${1#*=}"; shift ;;
    --no-build) build=0; shift ;;
    --from-build) from_build="$2"; shift 2 ;;
    --from-build=*) from_build="${1#*=}"; shift ;;
    --compression) compression="$2"; shift 2 ;;
    --compression=*) compression="${1#*=}"; shift ;;
    --compression-level) compression_level="$2"; shift 2 ;;
    --compression-level=*) compression_level="${1#*=}"; shift ;;
    --gnome-shell) gnome_shell="$2"; shift 2 ;;
    --gnome-shell=*) gnome_shell="${1#*=}"; shift ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-deb: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$output"
output="$(cd "$output" && pwd)"
case "$scratch" in /*) ;; *) scratch="$PWD/$scratch" ;; esac

say() { printf 'build-deb: %s\n' "$*" >&2; }
die() { printf 'build-deb: error: %s\n' "$*" >&2; exit 1; }

for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog gzip strip glib-compile-schemas; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install dpkg-dev binutils gzip libglib2.0-bin)"
done

pkg="$repo/packaging"
debian="$pkg/debian"
products=(islandd island island-presenter)
overlay_products=(island-overlay)
bridge_products=(island-bridge)

# The version: packaging/debian/changelog's top entry, whose upstream part must be the
# version the binaries report.
version="$(dpkg-parsechangelog -l "$debian/changelog" -S Version)"
upstream="${version%-*}"
arch="$(dpkg --print-architecture)"
# Reproducible timestamps (dpkg-deb clamps mtimes to it) and gzip without names or times.
SOURCE_DATE_EPOCH="$(dpkg-parsechangelog -l "$debian/changelog" -S Timestamp)"
export SOURCE_DATE_EPOCH

# 1. Release binaries, linked as scripts/build-release.sh says (the Swift runtime, Foundation
#    and Dispatch linked in; Debian's hardening defaults); or, with --from-build, another
#    build's objects linked the same way. IslandKit's reference is rendered from the modules
#    of the build the binaries came from.
if [ -n "$from_build" ]; then
  from_build="$(cd "$from_build" && pwd -P)"
  bin="$(dirname "$(dirname "$from_build")")/packaged-$(basename "$from_build")"
  "$repo/scripts/build-release.sh" --relink "$from_build" --output "$bin" \
    "${products[@]}" "${overlay_products[@]}" "${bridge_products[@]}" >/dev/null
  modules="$from_build/Modules"
else
  if ((build)); then
    "$repo/scripts/build-release.sh" --scratch-path "$scratch" "${products[@]}" "${overlay_products[@]}" "${bridge_products[@]}" >/dev/null
  fi
  bin="$scratch/release"
  modules="$bin/Modules"
fi
for product in "${products[@]}" "${overlay_products[@]}" "${bridge_products[@]}"; do
  [ -x "$bin/$product" ] || die "$bin/$product is missing (run without --no-build)"
done
reported="$("$bin/islandd" --version)"
[ "$reported" = "$upstream" ] \
  || die "islandd --version says $reported but packaging/debian/changelog says $version; add a changelog entry"

# 2. The staged tree.
stage="$(mktemp -d "${TMPDIR:-/tmp}/island-deb.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
umask 022
say "staging in $root"

install -d "$root/usr/bin"
for product in "${products[@]}"; do
  install -m 0755 "$bin/$product" "$root/usr/bin/$product"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$product"
done
# The runtime is linked in: no libswift*, Foundation, Dispatch or BlocksRuntime from the toolchain.
runtime='lib(swift|Foundation|_Foundation|CoreFoundation|dispatch|BlocksRuntime)'
for product in "${products[@]}"; do
  if ldd "$root/usr/bin/$product" | grep -Eq "$runtime"; then
    die "$product still links the Swift runtime dynamically: $(ldd "$root/usr/bin/$product" | grep -E "$runtime" | tr -d '\t')"
  fi
done
# Drawing is the overlay package's: the core binaries start island-overlay --draw-svg for SVG,
# and link no cairo, Pango, GTK or X11.
for product in "${products[@]}"; do
  if ldd "$root/usr/bin/$product" | grep -Eq 'lib(cairo|pango|gtk|gdk|X11)'; then
    die "$product links a graphical library: $(ldd "$root/usr/bin/$product" | grep -E 'lib(cairo|pango|gtk|gdk|X11)' | tr -d '\t')"
  fi
done

# systemd units, sysusers.d, tmpfiles.d: whatever packaging/ has, all of it required.
require() { [ -f "$1" ] || die "missing $1 (packaging/ must provide it before a package is built)"; }
for unit in islandd.socket islandd.service; do
  require "$pkg/systemd/$unit"
  require "$pkg/systemd/user/$unit"
  install -D -m 0644 "$pkg/systemd/$unit" "$root/usr/lib/systemd/system/$unit"
  install -D -m 0644 "$pkg/systemd/user/$unit" "$root/usr/lib/systemd/user/$unit"
done
require "$pkg/sysusers.d/island.conf"
require "$pkg/tmpfiles.d/island.conf"
install -D -m 0644 "$pkg/sysusers.d/island.conf" "$root/usr/lib/sysusers.d/island.conf"
install -D -m 0644 "$pkg/tmpfiles.d/island.conf" "$root/usr/lib/tmpfiles.d/island.conf"
# Units with ExecStart= pointing elsewhere than the installed binaries would fail at start.
for unit in "$root"/usr/lib/systemd/system/*.service "$root"/usr/lib/systemd/user/*.service; do
  while read -r exe; do
    [ -x "$root$exe" ] || die "${unit#"$root"} starts $exe, which the package does not install"
  done < <(sed -n 's/^ExecStart=[-@:+!]*\([^ ]*\).*/\1/p' "$unit")
done

# The CLI's manifest (its app may show Live Activities out of the box).
install -D -m 0644 "$pkg/applications/org.island.cli.desktop" "$root/usr/share/applications/org.island.cli.desktop"

# Man pages (island-overlay's and island-bridge's go with their own packages).
for page in "$pkg"/man/*.[1-8]; do
  case "$(basename "$page")" in island-overlay.1|island-bridge.1) continue ;; esac
  section="${page##*.}"
  install -D -m 0644 "$page" "$root/usr/share/man/man$section/$(basename "$page")"
  gzip -9n "$root/usr/share/man/man$section/$(basename "$page")"
done

# Documentation, and the examples: manifests and layouts that are not active until copied
# to applications/ and island/layouts/ of a data directory.
doc="$root/usr/share/doc/island"
install -D -m 0644 "$debian/copyright" "$doc/copyright"
install -m 0644 "$debian/changelog" "$doc/changelog.Debian"
gzip -9n "$doc/changelog.Debian"
install -m 0644 "$repo/README.md" "$doc/README.md"
install -m 0644 "$repo/Protocol/PROTOCOL.md" "$doc/PROTOCOL.md"
gzip -9n "$doc/README.md" "$doc/PROTOCOL.md"
# The guides the README points to, beside it as in the source tree.
install -d "$doc/docs"
install -m 0644 "$repo"/docs/*.md "$doc/docs/"
gzip -9n "$doc"/docs/*.md
# IslandKit's reference: the DocC catalog and every public symbol, as static pages that open
# from the disk (scripts/docs.sh), rendered from the release build's modules.
"$repo/scripts/docs.sh" --modules "$modules" --output "$stage/docs" >/dev/null
cp -R "$stage/docs/IslandKit" "$doc/IslandKit"
examples="$doc/examples"
install -d "$examples/applications" "$examples/layouts"
for entry in "$pkg"/applications/*.desktop; do
  case "$(basename "$entry")" in org.island.cli.desktop|org.island.bridge.desktop|org.island.overlay.desktop) continue ;; esac
  install -m 0644 "$entry" "$examples/applications/"
done
for dir in "$pkg"/layouts/*/; do
  app="$(basename "$dir")"
  [ "$app" = org.island.bridge ] && continue
  install -d "$examples/layouts/$app"
  install -m 0644 "$dir"*.json "$examples/layouts/$app/"
done
# island-presenter as a Waybar module, ready to paste: the module's clicks and a pill in CSS.
install -d "$examples/waybar"
install -m 0644 "$pkg"/waybar/island.jsonc "$pkg"/waybar/island.css "$examples/waybar/"
# A producer in each language of the developer's guide, with its desktop entry.
# Not their .gitignore: a version-control file has no place in a package (lintian says so).
(cd "$repo/Examples" && find . -mindepth 2 -name .build -prune -o -type f ! -name .gitignore -print) | while read -r file; do
  install -D -m 0644 "$repo/Examples/$file" "$examples/$file"
done
cat > "$examples/README" <<'EOF'
Example apps for Island: desktop entries (manifests) and layouts; and in waybar/, the island
as a Waybar module (island.jsonc for the config, island.css for the style; see
island-presenter(1)); in c/, gjs/, node/, python/ and shell/, a producer in that language
with its desktop entry (docs/developer-guide.md.gz, "Quick start in your language").

They are not active. To try them for one user:

  mkdir -p ~/.local/share/applications ~/.local/share/island/layouts
  cp /usr/share/doc/island/examples/applications/*.desktop ~/.local/share/applications/
  cp -r /usr/share/doc/island/examples/layouts/. ~/.local/share/island/layouts/
  island admin reload

System-wide, apps install their manifest as /usr/share/applications/APP.desktop and their
layouts as /usr/share/island/layouts/APP/TYPE.json. See islandd(8).
EOF

install -D -m 0644 "$debian/lintian-overrides" "$root/usr/share/lintian/overrides/island"

# Depends from the binaries' shared libraries. dpkg-shlibdeps wants a debian/control; a
# minimal one in a scratch directory does.
# Usage: write_control ROOT PACKAGE CONTROL_IN BINARY... (paths under ROOT, as usr/bin/islandd)
write_control() {
  local root="$1" package="$2" template="$3" depends installed_size
  shift 3
  local shlib="$stage/shlibdeps-$package"
  install -d "$shlib/debian"
  printf 'Source: island\n\nPackage: %s\nArchitecture: any\n' "$package" > "$shlib/debian/control"
  depends="$(cd "$shlib" && dpkg-shlibdeps -O --warnings=0 \
    "${@/#/-e$root/}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
  [ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies of $package"
  installed_size="$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)"
  sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
    -e "s/@SHLIBS_DEPENDS@/$depends/" "$template" > "$root/DEBIAN/control"
  chmod 0644 "$root/DEBIAN/control"
  say "$package Depends: $depends"
}

# md5sums of the files under usr/ (conffiles have theirs in dpkg's database, as dh_md5sums does).
write_md5sums() {
  (cd "$1" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$1/DEBIAN/md5sums"
  chmod 0644 "$1/DEBIAN/md5sums"
}

# The package. Directories and files are root:root in it whoever builds it.
# Usage: build_package ROOT PACKAGE
build_package() {
  local root="$1" package="$2"
  find "$root" -type d -exec chmod 0755 {} +
  local deb="$output/${package}_${version}_${arch}.deb"
  dpkg-deb --root-owner-group "-Z$compression" ${compression_level:+"-z$compression_level"} --build "$root" "$deb" >&2
  say "built $deb ($(du -h "$deb" | cut -f1), installed size $(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1) KiB)"
  echo "$deb"
}

# 3. DEBIAN/: maintainer scripts, md5sums, control.
install -d -m 0755 "$root/DEBIAN"
for script in postinst prerm postrm; do
  install -m 0755 "$debian/$script" "$root/DEBIAN/$script"
done
write_md5sums "$root"

write_control "$root" island "$debian/control.in" "${products[@]/#/usr/bin/}"

# 4. The package.
build_package "$root" island

# 5. island-overlay: the graphical island, in a package of its own so that GTK stays off
#    machines that only run the daemon.
oroot="$stage/overlay"
say "staging island-overlay in $oroot"
# One binary: the island on screen, and off-screen (--draw-svg, --render-gallery) the same
# layout and painter. It links GTK 3 and gtk-layer-shell for the screen, cairo and Pango for
# painting (X11, Wayland and fontconfig come with them); the Swift runtime is linked in.
overlay_paths=(usr/bin/island-overlay)
install -D -m 0755 "$bin/island-overlay" "$oroot/usr/bin/island-overlay"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$oroot/usr/bin/island-overlay"
overlay_links="$(ldd "$oroot/usr/bin/island-overlay")"
if grep -Eq "$runtime" <<< "$overlay_links"; then
  die "island-overlay still links the Swift runtime dynamically"
fi
for library in libgtk-3 libgtk-layer-shell libcairo libpango; do
  grep -q "$library" <<< "$overlay_links" || die "island-overlay does not link $library"
done
require "$pkg/systemd/user/island-overlay.service"
require "$pkg/autostart/island-overlay.desktop"
require "$pkg/man/island-overlay.1"
install -D -m 0644 "$pkg/systemd/user/island-overlay.service" "$oroot/usr/lib/systemd/user/island-overlay.service"
while read -r exe; do
  [ -x "$oroot$exe" ] || die "island-overlay.service starts $exe, which the package does not install"
done < <(sed -n 's/^ExecStart=[-@:+!]*\([^ ]*\).*/\1/p' "$oroot/usr/lib/systemd/user/island-overlay.service")
install -D -m 0644 "$pkg/autostart/island-overlay.desktop" "$oroot/etc/xdg/autostart/island-overlay.desktop"
# Its application entry: KWin reads X-KDE-Wayland-Interfaces there (not in autostart entries)
# before it offers the overlay kde_lockscreen_overlay_v1.
require "$pkg/applications/org.island.overlay.desktop"
install -D -m 0644 "$pkg/applications/org.island.overlay.desktop" "$oroot/usr/share/applications/org.island.overlay.desktop"
install -D -m 0644 "$pkg/man/island-overlay.1" "$oroot/usr/share/man/man1/island-overlay.1"
gzip -9n "$oroot/usr/share/man/man1/island-overlay.1"
odoc="$oroot/usr/share/doc/island-overlay"
install -D -m 0644 "$debian/copyright" "$odoc/copyright"
install -m 0644 "$debian/changelog" "$odoc/changelog.Debian"
gzip -9n "$odoc/changelog.Debian"
install -D -m 0644 "$debian/island-overlay.lintian-overrides" "$oroot/usr/share/lintian/overrides/island-overlay"
# The GNOME Shell extension: Mutter has no wlr-layer-shell, so on GNOME the Shell hosts this
# package's island-overlay itself (GNOMEShellExtension/), put together for the gnome-shell of the
# machine the package is built for (--gnome-shell: 43 for Debian 12's 43, whose entry points are
# in the `imports` format; 45 for 45 and later) with its schema compiled into its own directory,
# where the extension's getSettings() looks first.
"$repo/GNOMEShellExtension/assemble.sh" --shell "$gnome_shell" "$oroot/usr/share/gnome-shell/extensions" >/dev/null
install -d -m 0755 "$oroot/DEBIAN"
printf '/etc/xdg/autostart/island-overlay.desktop\n' > "$oroot/DEBIAN/conffiles"
chmod 0644 "$oroot/DEBIAN/conffiles"
write_md5sums "$oroot"
write_control "$oroot" island-overlay "$debian/island-overlay.control.in" "${overlay_paths[@]}"
build_package "$oroot" island-overlay

# 6. island-bridge: the session bus's players, notifications and jobs as activities, in a
#    package of its own (it belongs to a graphical session, and needs only libsystemd).
broot="$stage/bridge"
say "staging island-bridge in $broot"
install -d "$broot/usr/bin"
for product in "${bridge_products[@]}"; do
  install -m 0755 "$bin/$product" "$broot/usr/bin/$product"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$broot/usr/bin/$product"
done
if ldd "$broot/usr/bin/island-bridge" | grep -Eq "$runtime"; then
  die "island-bridge still links the Swift runtime dynamically"
fi
require "$pkg/systemd/user/island-bridge.service"
require "$pkg/applications/org.island.bridge.desktop"
require "$pkg/man/island-bridge.1"
install -D -m 0644 "$pkg/systemd/user/island-bridge.service" "$broot/usr/lib/systemd/user/island-bridge.service"
while read -r exe; do
  [ -x "$broot$exe" ] || die "island-bridge.service starts $exe, which the package does not install"
done < <(sed -n 's/^ExecStart=[-@:+!]*\([^ ]*\).*/\1/p' "$broot/usr/lib/systemd/user/island-bridge.service")
# Its manifest and layouts are active, not examples: the bridge is an app like any other.
install -D -m 0644 "$pkg/applications/org.island.bridge.desktop" "$broot/usr/share/applications/org.island.bridge.desktop"
install -d "$broot/usr/share/island/layouts/org.island.bridge"
install -m 0644 "$pkg"/layouts/org.island.bridge/*.json "$broot/usr/share/island/layouts/org.island.bridge/"
install -D -m 0644 "$pkg/man/island-bridge.1" "$broot/usr/share/man/man1/island-bridge.1"
gzip -9n "$broot/usr/share/man/man1/island-bridge.1"
bdoc="$broot/usr/share/doc/island-bridge"
install -D -m 0644 "$debian/copyright" "$bdoc/copyright"
install -m 0644 "$debian/changelog" "$bdoc/changelog.Debian"
gzip -9n "$bdoc/changelog.Debian"
install -D -m 0644 "$debian/island-bridge.lintian-overrides" "$broot/usr/share/lintian/overrides/island-bridge"
install -d -m 0755 "$broot/DEBIAN"
write_md5sums "$broot"
write_control "$broot" island-bridge "$debian/island-bridge.control.in" "${bridge_products[@]/#/usr/bin/}"
build_package "$broot" island-bridge
