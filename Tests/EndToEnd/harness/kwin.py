"""KDE's KWin 5.27 for the overlay's end-to-end tests: `kwin_wayland` nested in the headless
sway of desktop.py, as the test user, with a socket of its own for the clients under test.

kwin_wayland carries the file capability cap_sys_resource=ep: in a container whose bounding set
lacks it, exec fails with "Operation not permitted". A copy made by this user (cp drops file
capabilities) runs. KWIN_COMPOSE=Q: KWin paints with QPainter, no OpenGL. Its window is sway's
only one, tiled over the whole output, and KWin's output takes the window's size, so grim on the
sway output photographs KWin's screen and the sway pointer's coordinates are KWin's.

Input reaches KWin as any sway client's does: the seat's virtual pointer (virtual_pointer.py)
moves and clicks with its own `motion`/`button` requests (`swaymsg seat - cursor press` is not
seen by KWin's nested backend), and its virtual keyboard types into KWin's window, which
KWin hands to its own focused surface. swaybg, a layer-shell client, paints KWin's desktop the
harness's blue, so the screenshots read as sway's do."""

import json
import os
import shutil

from harness import desktop
from harness.paths import LIVENESS

SOCKET = "wayland-kde"
TITLE = "KDE Wayland Compositor"


def why_not():
    """Why KWin cannot be tested here (a skip reason), or None."""
    return desktop.why_not("sway", "swaymsg", "swaybg", "grim", "kwin_wayland", "weston-eventdemo", "stdbuf") or desktop.overlay_missing()


class KWin:
    """kwin_wayland nested in `sway`, its desktop painted `sway.background`. `env` is what a
    client needs to be KWin's (WAYLAND_DISPLAY)."""

    def __init__(self, session, sway):
        self.session, self.sway = session, sway
        self.background = sway.background
        binary = session.path("home", "kwin_wayland")
        shutil.copy(shutil.which("kwin_wayland"), binary)  # without the file capability
        os.chown(binary, session.uid, session.gid)
        self.process = session.spawn("kwin", [binary, "--wayland-display", sway.env["WAYLAND_DISPLAY"],
                                              "--socket", SOCKET], env={"KWIN_COMPOSE": "Q"})
        path = os.path.join(session.runtime, SOCKET)
        desktop.wait_until(lambda: session.alive(self.process) and os.path.exists(path), 30, "KWin's socket")
        self.env = {"WAYLAND_DISPLAY": SOCKET, "XDG_SESSION_TYPE": "wayland", "GDK_BACKEND": "wayland",
                    "XDG_CURRENT_DESKTOP": "KDE"}
        # Its window over the whole sway output, and KWin's output as large.
        self.rect = desktop.wait_until(self._window, 30, "KWin's window on sway's output")
        self.width, self.height = self.rect["width"], self.rect["height"]
        self.wallpaper = session.spawn("swaybg", ["swaybg", "-c", "#%02x%02x%02x" % self.background], env=self.env)
        desktop.wait_until(lambda: session.alive(self.wallpaper) and self.screenshot().pixel(1, 1) == self.background,
                           30, "KWin's desktop painted")
        self.pointer = sway.pointer or sway.start_pointer()

    def _window(self):
        self.session.alive(self.process)
        tree = json.loads(self.sway.swaymsg("-r", "-t", "get_tree"))
        found = []

        def walk(node):
            if (node.get("name") or "").startswith(TITLE):
                found.append(node["rect"])
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                walk(child)
        walk(tree)
        full = (0, 0, self.sway.width, self.sway.height)
        return next((r for r in found if (r["x"], r["y"], r["width"], r["height"]) == full), None)

    def screenshot(self):
        """KWin's screen: the sway output cropped to KWin's window."""
        image = self.sway.screenshot()
        r = self.rect
        if (r["x"], r["y"], r["width"], r["height"]) == (0, 0, image.width, image.height):
            return image
        return image.crop((r["x"], r["y"], r["x"] + r["width"], r["y"] + r["height"]))

    def _pointer(self, command):
        self.pointer.stdin.write(command.encode() + b"\n")
        self.pointer.stdin.flush()
        line = desktop._read_line(self.pointer, LIVENESS)
        if line != "done":
            raise RuntimeError("the virtual pointer did not take %r: %r\n%s"
                               % (command, line, self.session.log("virtual-pointer")))

    def move(self, x, y):
        self._pointer("motion %d %d %d %d" % (self.rect["x"] + int(x), self.rect["y"] + int(y),
                                              self.sway.width, self.sway.height))

    def click(self, x, y):
        """A primary click at KWin's x, y: the pointer arrives (the surface under it is entered)
        before the button goes down."""
        self.move(x - 1, y)
        self.move(x, y)
        for state in (1, 0):
            self._pointer("button %d %d" % (desktop.BTN_LEFT, state))

    def park(self):
        """The cursor, which KWin draws into its screen, to the bottom-left corner."""
        self.move(1, self.height - 1)

    def key(self, code):
        """A key pressed and released (Linux evdev code: KEY_ESC is 1) on the seat's virtual
        keyboard: sway gives it to KWin's window, KWin to its focused surface."""
        self.sway.key(code)


class KeyWindow:
    """A window on KWin that logs the keys it receives (weston-eventdemo --log-key): it has
    KWin's keyboard focus when it maps, and shows where a key went."""

    def __init__(self, session, kwin, name="key-window"):
        self.session, self.name = session, name
        # stdbuf: its printf is line-buffered into the log, not held until it exits.
        self.process = session.spawn(name, ["stdbuf", "-oL", "weston-eventdemo", "--log-key", "--log-focus",
                                            "--width=300", "--height=120"], env=kwin.env)
        # KWin focuses it as it maps: once it is on screen (KWin centres it), keys reach it.
        desktop.wait_until(lambda: session.alive(self.process)
                           and kwin.screenshot().pixel(kwin.width // 2, kwin.height // 2) != kwin.background,
                           30, "the key window on screen")

    def keys(self):
        """The keys pressed in it so far (evdev codes), in order."""
        self.session.alive(self.process)
        return [int(line.split()[2].rstrip(",")) for line in self.session.log(self.name).splitlines()
                if line.startswith("key key: ") and line.endswith("state: pressed, modifiers: 0x0")]
