"""A real GNOME Shell for the extension's end-to-end tests: `gnome-shell --nested --wayland` inside
an Xvfb server (or `gnome-shell --x11` on it: GNOME on X11), in a desktop.UserSession (the
unprivileged test user, its own session bus, its real islandd), with the extension of
GNOMEShellExtension/ installed in the user's ~/.local/share/gnome-shell/extensions and enabled
before the Shell starts, and island-overlay found through PATH in ISLAND_BIN_DIR, as the package
installs it in /usr/bin.

What is installed on the machine stays out: the Shell's system data directories are a mirror
of the real ones without their gnome-shell/extensions (so the package's extension, when the
.deb is installed, is not found beside the test's), and the Shell is started by its full path,
so a test may give it a PATH with no island-overlay at all.

The Shell gets a private system bus of its own too: on a machine with /run/systemd/seats it
talks to logind there, and with no system bus at all it stops at start-up. Nothing else answers
on either bus; the Shell logs the services it misses (gnome-session, ibus, colord, GeoClue, the
calendar server, PolicyKit, GDM) and runs without them.

Settings go through GSettings' keyfile backend in the user's ~/.config/glib-2.0/settings, so
what the harness writes before the Shell starts, and what `gsettings` changes while it runs,
are what the Shell reads. Everything started is a direct child of this process, stopped by pid
with the session; every wait is bounded."""

import glob
import os
import re
import shutil
import subprocess
import tempfile
import time

from harness import desktop
from harness.paths import LIVENESS, REPO
from harness.processes import children_of

UUID = "island@island.org"
ASSEMBLE = os.path.join(REPO, "GNOMEShellExtension", "assemble.sh")
# A blue desktop (the Shell's background settings): neither the top bar's black, nor the
# island's black and light text.
BACKGROUND = desktop.BACKGROUND
GAP = 6  # the extension's schema's default gap-below-panel: the island hangs this far under the bar
# The Shell's ExtensionState values.
EXTENSION_STATES = {1: "ENABLED", 2: "DISABLED", 3: "ERROR", 4: "OUT_OF_DATE", 5: "DOWNLOADING", 6: "INITIALIZED"}
FULLSCREEN_WINDOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fullscreen_window.js")
FULLSCREEN_COLOUR = (0x30, 0xA0, 0x50)  # fullscreen_window.js's
DISPLAY_MANAGER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "display_manager.js")
# The Shell's screen shield serves org.gnome.ScreenSaver under the name org.gnome.Shell.ScreenShield
# (in a full session the name org.gnome.ScreenSaver is a D-Bus-activated service that forwards
# to it, which this bus does not activate).
SCREEN_SAVER = ("--dest", "org.gnome.Shell.ScreenShield", "--object-path", "/org/gnome/ScreenSaver")
SHELL_BUS = ("--dest", "org.gnome.Shell", "--object-path", "/org/gnome/Shell")


def why_not():
    """Why a GNOME Shell session cannot run here (a skip reason), or None."""
    return desktop.why_not("gnome-shell", "gjs", "gdbus", "gsettings", "glib-compile-schemas",
                           "Xvfb", "xdotool") or desktop.overlay_missing()


def keyfile_value(value):
    """A GVariant text for the keyfile backend."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[%s]" % ", ".join(keyfile_value(v) for v in value)
    return "'%s'" % value.replace("\\", "\\\\").replace("'", "\\'")


class GnomeShell:
    """gnome-shell in an Xvfb display of `width`×`height` — nested, as a Wayland compositor whose
    one monitor fills the display, or with `x11` as the X11 window manager and compositor of the
    display itself (a GNOME on X11 session) — with the extension enabled and `settings`
    ({"org/gnome/...": {key: value}}) in place before it starts. `env` is added to the Shell's
    environment, which island-overlay inherits (its standard error goes to the Shell's log,
    logs/gnome-shell.log)."""

    def __init__(self, session, width=1280, height=720, settings=None, env=None, x11=False, lockable=False):
        self.session = session
        session.env["GSETTINGS_BACKEND"] = "keyfile"
        self.xvfb = desktop.Xvfb(session, width, height)
        self.width, self.height = width, height
        self.background = BACKGROUND
        self.install_extension()
        self.write_settings(settings or {})
        # Without GDM the Shell cannot lock, and says so once in a banner, where the island hangs,
        # unless this file says it has said so already.
        session.write(os.path.join(session.data, "gnome-shell", "lock-warning-shown"), "")
        system_bus = self.start_system_bus()
        if lockable:
            self.start_display_manager(system_bus)
        shell_env = {
            "PATH": desktop.bin_dir() + ":" + session.env["PATH"],
            "DBUS_SYSTEM_BUS_ADDRESS": system_bus,
            "XDG_DATA_DIRS": self.system_data_without_extensions(),
        }
        shell = shutil.which("gnome-shell")
        if x11:
            self.wayland_display = None
            argv = [shell, "--x11", "--replace"]
            shell_env.update({"XDG_SESSION_TYPE": "x11", "GDK_BACKEND": "x11"})
        else:
            # --no-x11: no Xwayland; island-overlay is a Wayland client of the Shell's.
            self.wayland_display = "wayland-gnome"
            argv = [shell, "--nested", "--wayland", "--no-x11", "--wayland-display", self.wayland_display]
            shell_env.update({"XDG_SESSION_TYPE": "wayland", "GDK_BACKEND": "wayland",
                              # The nested Shell's one monitor, the size of the X display it runs in.
                              "MUTTER_DEBUG_DUMMY_MODE_SPECS": "%dx%d" % (width, height)})
        shell_env.update(env or {})
        self.process = session.spawn("gnome-shell", argv, env=shell_env)
        # Logged once the start-up animation (which opens the overview) has ended.
        # A Shell starting on a loaded machine gets more time while it works (wait_until's working=).
        desktop.wait_until(lambda: session.alive(self.process) and "GNOME Shell started at" in self.log(), LIVENESS,
                           "gnome-shell started", working=self.process.pid)
        desktop.wait_until(lambda: session.alive(self.process) and self.extension_state() == "ENABLED", LIVENESS,
                           "the Shell saying the extension %s is enabled" % UUID, working=self.process.pid)
        found = self.extensions()
        assert found == {UUID: self.extension_dir}, "the Shell found other extensions than the test's: %s" % found
        self.leave_overview()

    # Set-up.

    def install_extension(self):
        """The extension as the package installs it for GNOME Shell 43 and 44 (assemble.sh: the
        shared modules with the `imports`-format entry points), schema compiled."""
        target = os.path.join(self.session.data, "gnome-shell", "extensions", UUID)
        with tempfile.TemporaryDirectory() as scratch:
            assembled = subprocess.run(["bash", ASSEMBLE, "--shell", "43", scratch], capture_output=True, text=True, timeout=60)
            assert assembled.returncode == 0, assembled.stderr
            source = assembled.stdout.strip()
            for path in glob.glob(os.path.join(source, "**", "*"), recursive=True):
                if os.path.isfile(path) and not path.endswith("gschemas.compiled"):
                    with open(path) as f:
                        self.session.write(os.path.join(target, os.path.relpath(path, source)), f.read())
        self.session.run(["glib-compile-schemas", "--strict", os.path.join(target, "schemas")])
        self.extension_dir = target

    def system_data_without_extensions(self):
        """XDG_DATA_DIRS for the Shell: each of the session's data directories mirrored by
        symbolic links, less gnome-shell/extensions, where an installed package's extension
        would be found (GNOME Shell looks for extensions in every data directory)."""
        mirrors = []
        for number, real in enumerate(self.session.env["XDG_DATA_DIRS"].split(":")):
            if not os.path.isdir(real):
                continue
            mirror = self.session.path("system-data-%d" % number)
            os.makedirs(mirror)
            for name in os.listdir(real):
                if name != "gnome-shell":
                    os.symlink(os.path.join(real, name), os.path.join(mirror, name))
                    continue
                os.makedirs(os.path.join(mirror, name))
                for inner in os.listdir(os.path.join(real, name)):
                    if inner != "extensions":
                        os.symlink(os.path.join(real, name, inner), os.path.join(mirror, name, inner))
            mirrors.append(mirror)
        return ":".join(mirrors)

    def extensions(self):
        """The extensions the Shell found, {uuid: path} (org.gnome.Shell.Extensions
        ListExtensions)."""
        reply = self.session.run(["gdbus", "call", "--session", *SHELL_BUS, "--method",
                                  "org.gnome.Shell.Extensions.ListExtensions"]).stdout.decode()
        found = {}
        for uuid in re.findall(r"'([^']+)': \{", reply):
            found[uuid] = None
        for uuid, path in re.findall(r"'([^']+)': \{[^}]*?'path': <'([^']*)'>", reply):
            found[uuid] = path
        return found

    def write_settings(self, settings):
        sections = {
            "org/gnome/shell": {"enabled-extensions": [UUID], "welcome-dialog-last-shown-version": "999"},
            "org/gnome/desktop/background": {"picture-options": "none",
                                             "primary-color": "#%02x%02x%02x" % BACKGROUND,
                                             "color-shading-type": "solid"},
        }
        for section, values in settings.items():
            sections.setdefault(section, {}).update(values)
        text = "".join("[%s]\n%s\n" % (section, "".join("%s=%s\n" % (k, keyfile_value(v)) for k, v in values.items()))
                       for section, values in sections.items())
        self.session.write(os.path.join(self.session.config, "glib-2.0", "settings", "keyfile"), text)

    def start_system_bus(self):
        """A second bus daemon as the Shell's system bus; its address."""
        address = os.path.join(self.session.runtime, "system_bus")
        session_config = self.session.path("home", "session-bus.conf")
        with open(session_config) as f:
            config = f.read().replace(os.path.join(self.session.runtime, "bus"), address)
        path = self.session.path("home", "system-bus.conf")
        self.session.write(path, config)
        bus = self.session.spawn("system-bus", ["dbus-daemon", "--nofork", "--nopidfile", "--config-file=" + path])
        desktop.wait_until(lambda: self.session.alive(bus) and os.path.exists(address), LIVENESS, "the private system bus")
        return "unix:path=" + address

    def start_display_manager(self, system_bus):
        """GDM's Version on the private system bus (display_manager.js), without which the Shell
        has no screen shield and cannot lock."""
        gdm = self.session.spawn("display-manager", ["gjs", DISPLAY_MANAGER], env={"DBUS_SYSTEM_BUS_ADDRESS": system_bus})
        desktop.wait_until(lambda: self.session.alive(gdm) and "display-manager: ready" in self.session.log("display-manager"),
                           LIVENESS, "the display manager's Version on the system bus")

    # The Shell, from outside: its bus names and properties, gnome-extensions, gsettings.

    def gdbus(self, *args, check=True):
        return self.session.run(["gdbus", "call", "--session", *args], check=check).stdout.decode().strip()

    def extension_state(self):
        """The extension's state as the Shell reports it (org.gnome.Shell.Extensions
        GetExtensionInfo, which `gnome-extensions info` shows through a D-Bus service of its
        own that this bus does not activate): "ENABLED", "DISABLED", "ERROR"…, or None."""
        result = self.session.run(["gdbus", "call", "--session", *SHELL_BUS, "--method",
                                   "org.gnome.Shell.Extensions.GetExtensionInfo", UUID], check=False)
        match = re.search(r"'state': <([0-9.]+)>", result.stdout.decode())
        return EXTENSION_STATES.get(float(match.group(1))) if match else None

    def overview_active(self):
        reply = self.gdbus(*SHELL_BUS, "--method", "org.freedesktop.DBus.Properties.Get",
                           "org.gnome.Shell", "OverviewActive")
        return "true" in reply

    def leave_overview(self):
        """The Shell opens its overview at start-up; the desktop is what the island is seen on.
        Windows are not shown as themselves in the overview, the island's neither."""
        def left():
            self.session.alive(self.process)
            self.gdbus(*SHELL_BUS, "--method", "org.freedesktop.DBus.Properties.Set",
                       "org.gnome.Shell", "OverviewActive", "<false>")
            return not self.overview_active()
        desktop.wait_until(left, LIVENESS, "the Shell leaving its overview", interval=0.5)

    def lock(self):
        """What a user's Super+L asks: org.gnome.ScreenSaver.Lock."""
        self.gdbus(*SCREEN_SAVER, "--method", "org.gnome.ScreenSaver.Lock")

    def unlock(self):
        """org.gnome.ScreenSaver.SetActive(false), as GDM's unlock ends the shield."""
        self.gdbus(*SCREEN_SAVER, "--method", "org.gnome.ScreenSaver.SetActive", "false")

    def locked(self):
        """Whether the Shell says its screen shield is up (org.gnome.ScreenSaver.GetActive)."""
        return "true" in self.gdbus(*SCREEN_SAVER, "--method", "org.gnome.ScreenSaver.GetActive")

    def disable_extension(self):
        """What `gnome-extensions disable` asks the Shell."""
        self.gdbus(*SHELL_BUS, "--method", "org.gnome.Shell.Extensions.DisableExtension", UUID)

    def enable_extension(self):
        self.gdbus(*SHELL_BUS, "--method", "org.gnome.Shell.Extensions.EnableExtension", UUID)

    def start_fullscreen_window(self):
        """A GTK window that makes itself fullscreen on the Shell's monitor (stop it with
        session.stop)."""
        return self.session.spawn("fullscreen-window", ["gjs", FULLSCREEN_WINDOW],
                                  env={"WAYLAND_DISPLAY": self.wayland_display, "GDK_BACKEND": "wayland"})

    def open_preferences(self):
        """`gnome-extensions prefs UUID`, as a user opens the extension's preferences: the Shell's
        extensions service (D-Bus activated in a real session; started here, since this bus
        activates nothing) shows prefs.js in its window. The service's process, to stop."""
        env = {"WAYLAND_DISPLAY": self.wayland_display, "GDK_BACKEND": "wayland", "GTK_A11Y": "none"}
        service = self.session.spawn("extensions-service", ["gjs", "/usr/share/gnome-shell/org.gnome.Shell.Extensions"],
                                     env=env)
        desktop.wait_until(lambda: self.session.alive(service) and self.session.run(
            ["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
             "--method", "org.freedesktop.DBus.NameHasOwner", "org.gnome.Shell.Extensions"]).stdout.strip() == b"(true,)",
            LIVENESS, "the Shell's extensions service on the bus")
        self.session.run(["gnome-extensions", "prefs", UUID], env=env)
        return service

    def set_desktop_setting(self, schema, key, value):
        """Sets a key of the desktop's own schemas with `gsettings`, as Settings does."""
        self.session.run(["gsettings", "set", schema, key, value])

    def set_setting(self, key, value):
        """Sets one of the extension's keys with `gsettings`, as its preferences window does."""
        self.session.run(["gsettings", "--schemadir", os.path.join(self.extension_dir, "schemas"), "set",
                          "org.gnome.shell.extensions.island", key, value])

    # What runs under the Shell and what it shows.

    def overlays(self):
        """The pids of island-overlay processes the Shell started (its children)."""
        found = []
        for pid in children_of(self.process.pid):
            try:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().strip() == "island-overlay":
                        found.append(pid)
            except OSError:
                pass
        return found

    def log(self):
        """The Shell's log, island-overlay's standard error included."""
        return self.session.log("gnome-shell")

    def screenshot(self):
        return self.xvfb.screenshot()

    def parked_screenshot(self, still=0.5):
        """A screenshot once the pointer `park()` moved is no longer drawn in the top bar's
        corner and then the whole screen has stayed the same for `still` seconds, so what a
        test compares against it later was already there. The Shell draws the pointer, at the
        top-left corner until it has handled the move: 108 pixels of the bar at x 0-11, gone
        0.2 s after the park on a quiet machine, and still there after half a second of a
        still screen beside stress-ng. The clock changes once a minute."""
        desktop.wait_until(lambda: self.screenshot().box_not((0, 0, 0), region=(0, 0, 16, 16)) is None, LIVENESS,
                           "the pointer gone from the top bar's corner")
        image, since = self.screenshot(), time.monotonic()
        deadline = since + LIVENESS
        while time.monotonic() - since < still:
            if time.monotonic() >= deadline:
                raise TimeoutError("the screen did not stand still for %ss within %ss" % (still, LIVENESS))
            time.sleep(0.1)
            shot = self.screenshot()
            if shot.pixels != image.pixels:
                image, since = shot, time.monotonic()
        return image

    def click(self, x, y):
        """Sweeps the pointer there (as a hand moves a mouse), then clicks."""
        self.xvfb.click(x, y)

    def park(self):
        self.xvfb.park()

    def sweep(self, *points):
        self.xvfb.sweep(*points)


def panel_bottom(image, background=BACKGROUND):
    """The first row below the top bar: the top bar is the band of rows at the top of `image`
    in which no pixel is the desktop's colour."""
    low = tuple(max(0, c - 12) for c in background)
    high = tuple(min(255, c + 12) for c in background)
    for y in range(image.height // 2):
        if image.count(low, high, region=(0, y, image.width, y + 1)) > image.width // 2:
            return y
    raise AssertionError("no desktop below a top bar in the screenshot's upper half")


def hangs_under(top, middle=None, centred=True):
    """A `Screen.settled` condition: the island hangs at rest with its top edge at row `top`
    (antialiasing may soften the first row: up to 2 below) and, `centred`, its centre at column
    `middle` (the image's centre without one; not centred, a minimal island beside it). Awaited rather than asserted on the first still screen:
    the Shell composites the overlay, and a Shell starved of CPU keeps a frame of the morph on
    screen unchanged, the first one a 10×10 dot at the island's centre (seen twice at loads
    of 15-20, 2026-12-07); a morph grows from the island's centre, so only the island at rest
    has its top edge there. The settle's bound fails the test if it never hangs there."""

    def hanging(image, box):
        if box is None or not top <= box[1] <= top + 2:
            return False
        centre_x = middle if middle is not None else image.width / 2
        return not centred or abs((box[0] + box[2]) / 2 - centre_x) <= 2

    return hanging
