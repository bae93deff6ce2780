#!/usr/bin/env bash
# Regenerates the C of the Wayland protocols island-overlay speaks beyond what GTK binds
# (Libraries/Sources/CWaylandProtocols) from the XML vendored beside it: the client header in
# include/ and the private code (the interfaces' tables, symbols hidden) next to it. Run after
# replacing an XML file; needs wayland-scanner (Debian: libwayland-bin).
#
#   protocols/wlr-foreign-toplevel-management-unstable-v1.xml  from wlr-protocols
#       (https://gitlab.freedesktop.org/wlroots/wlr-protocols, commit b010a036), version 3
#   protocols/xdg-output-unstable-v1.xml  from wayland-protocols 1.31 (Debian's
#       /usr/share/wayland-protocols/unstable/xdg-output/), version 3
#   protocols/kde-lockscreen-overlay-v1.xml  from plasma-wayland-protocols 1.10 (Debian's
#       /usr/share/plasma-wayland-protocols/), version 1; LGPL-2.1-or-later, as its header says
set -euo pipefail
cd "$(dirname "$0")/../Libraries/Sources/CWaylandProtocols"
for xml in protocols/*.xml; do
  name="$(basename "$xml" .xml)"
  wayland-scanner client-header "$xml" "include/$name-client-protocol.h"
  wayland-scanner private-code "$xml" "$name-protocol.c"
done
