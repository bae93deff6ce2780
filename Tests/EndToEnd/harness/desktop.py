"""Desktop sessions for the overlay's end-to-end tests, the gallery and the benchmark: a headless
sway (wlroots, pixman renderer) or an Xvfb server, each with its own session bus, run as an
unprivileged user (sway refuses root; scripts/install-deps.sh creates `island-test`), with the
real islandd of that user and the example apps of packaging/ installed for it.

Everything a session starts is a direct child of this process, started as that user
(subprocess's user=/group=), and is stopped by pid when the session closes, whatever happened;
every wait is bounded. Screenshots are read as PPM (grim -t ppm; Xvfb's root window through the
X protocol, x11_screen.py) with no imaging library.

Only the standard library and the reference varlink client: Benchmarks/overlay.py imports it too.
"""

import glob
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

import varlink

from harness import artifacts
from harness.paths import BIN_DIR, LIVENESS, PRESENTER, REPO
from harness.processes import runnable_seconds_by_thread
from harness.x11_screen import XScreen

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_USER = os.environ.get("ISLAND_TEST_USER", "island-test")
VIRTUAL_POINTER = os.path.join(HERE, "virtual_pointer.py")
BACKGROUND = (0x6C, 0x8E, 0xBF)  # a blue desktop: neither the capsule's black nor its light text
BTN_LEFT = 272


def bin_dir():
    return BIN_DIR


def missing_programs(*programs):
    return [p for p in programs if shutil.which(p) is None]


def test_user():
    """The unprivileged user's passwd entry, or None."""
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        return None


def why_not(*programs):
    """Why a desktop session cannot run here (a skip reason), or None."""
    if os.geteuid() != 0:
        return "the desktop tests start their session as the user %s, which needs root" % TEST_USER
    if os.environ.get("ISLAND_SANITIZER"):
        # Its processes run as that user with a clean environment: they could not write their
        # reports to the root-owned ISLAND_SANITIZER_LOGS, and would go unchecked.
        return "ISLAND_SANITIZER is set: the desktop session's processes run as %s and cannot report" % TEST_USER
    if test_user() is None:
        return "no user %s (scripts/install-deps.sh creates it)" % TEST_USER
    gone = missing_programs("dbus-daemon", *programs)
    if gone:
        return "%s not installed (scripts/install-deps.sh installs them)" % ", ".join(gone)
    return None


def wait_until(predicate, timeout, what, interval=0.05, working=None):
    """Polls `predicate` until it returns something truthy, which is returned; raises
    TimeoutError naming `what` at the deadline.

    `working`, a process id: a program that is still working towards it is given more time.
    At the deadline, if its threads ran or waited to run for at least WORKING_SECONDS in the
    last `timeout`, the deadline moves on by `timeout`, up to WORKING_ROUNDS times: a heavy
    start-up (a GNOME Shell needs ~3 CPU s) on a loaded machine is slow, not hung, while a hung
    one sleeps, and neither runs nor waits. Not its CPU time: a starved program gets little of
    it however much it wants it (a tenth of a CPU at a load of 20 on two), and would be taken
    for hung."""
    deadline = time.monotonic() + timeout
    spent, rounds = process_runnable_seconds(working), 1
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            now_spent = process_runnable_seconds(working)
            if working is None or rounds >= WORKING_ROUNDS or now_spent - spent < WORKING_SECONDS:
                # Once more, after the times are read: a program that reached it between the look
                # above and that reading (its last work, then idle) has not failed.
                result = predicate()
                if result:
                    return result
                raise TimeoutError("%s not reached within %ss" % (what, timeout * rounds))
            spent, rounds, deadline = now_spent, rounds + 1, deadline + timeout
        time.sleep(interval)


# What wait_until(working=) counts as still working, and how often it waits once more.
WORKING_SECONDS = 0.5
WORKING_ROUNDS = 4


def process_runnable_seconds(pid):
    """How long `pid`'s threads have run or waited to run, in all (`runnable_seconds_by_thread`);
    0 if it is gone."""
    return 0.0 if pid is None else sum(runnable_seconds_by_thread(pid).values())


class Image:
    """An RGB image read from binary PPM (P6, maxval 255)."""

    def __init__(self, data):
        fields, offset = [], 0
        while len(fields) < 4:
            while data[offset:offset + 1].isspace():
                offset += 1
            if data[offset:offset + 1] == b"#":
                offset = data.index(b"\n", offset) + 1
                continue
            end = offset
            while not data[end:end + 1].isspace():
                end += 1
            fields.append(data[offset:end])
            offset = end
        if fields[0] != b"P6" or fields[3] != b"255":
            raise ValueError("not an 8-bit binary PPM: %r" % fields)
        self.width, self.height = int(fields[1]), int(fields[2])
        self.pixels = data[offset + 1:offset + 1 + self.width * self.height * 3]
        if len(self.pixels) != self.width * self.height * 3:
            raise ValueError("truncated PPM")

    def pixel(self, x, y):
        i = (y * self.width + x) * 3
        return tuple(self.pixels[i:i + 3])

    def mask(self, low, high, rows=None):
        """One byte per pixel, 1 where every channel lies in [low, high] (per channel tuples);
        of the rows y0 to y1 (exclusive) only if `rows` is (y0, y1), the first of them first.
        A region's rows alone cost that much less: a screenshot is masked several times a
        second while a test waits for the island to settle."""
        y0, y1 = rows or (0, self.height)
        pixels = self.pixels[y0 * self.width * 3:y1 * self.width * 3] if rows else self.pixels
        planes = []
        for channel in range(3):
            table = bytes(1 if low[channel] <= v <= high[channel] else 0 for v in range(256))
            planes.append(int.from_bytes(pixels[channel::3].translate(table), "big"))
        both = planes[0] & planes[1] & planes[2]
        return both.to_bytes(self.width * (y1 - y0), "big")

    def box_not(self, colour, region=None, tolerance=12):
        """The bounding box of the pixels that differ from `colour` (by more than `tolerance`
        in some channel), as box() gives it."""
        low = tuple(max(0, c - tolerance) for c in colour)
        high = tuple(min(255, c + tolerance) for c in colour)
        return self.box(low, high, region, invert=True)

    def box(self, low, high, region=None, invert=False):
        """The bounding box (x0, y0, x1, y1), exclusive ends, of the pixels whose channels all
        lie within [low, high], inside `region` (x0, y0, x1, y1) if given; None if there is none."""
        x0r, y0r, x1r, y1r = region or (0, 0, self.width, self.height)
        mask = self.mask(low, high, (y0r, y1r))
        if invert:
            mask = mask.translate(bytes([1, 0]) + bytes(254))
        xs, ys = [], []
        for y in range(y0r, y1r):
            start = (y - y0r) * self.width
            row = mask[start + x0r:start + x1r]
            first = row.find(1)
            if first >= 0:
                xs += [first + x0r, row.rfind(1) + x0r + 1]
                ys.append(y)
        if not ys:
            return None
        return min(xs), ys[0], max(xs), ys[-1] + 1

    def count(self, low, high, region=None):
        x0, y0, x1, y1 = region or (0, 0, self.width, self.height)
        mask = self.mask(low, high, (y0, y1))
        return sum(mask[(y - y0) * self.width + x0:(y - y0) * self.width + x1].count(1) for y in range(y0, y1))

    def colours(self, region, step=1):
        """Every distinct colour in `region`."""
        x0, y0, x1, y1 = region
        return {self.pixel(x, y) for y in range(y0, y1, step) for x in range(x0, x1, step)}

    def crop(self, region):
        """The part of the image in `region` (x0, y0, x1, y1), as an Image."""
        x0, y0, x1, y1 = region
        rows = b"".join(self.pixels[(y * self.width + x0) * 3:(y * self.width + x1) * 3] for y in range(y0, y1))
        return Image(b"P6\n%d %d\n255\n" % (x1 - x0, y1 - y0) + rows)

    def save_png(self, path):
        """Writes a PNG (zlib, no filter): for a person to look at."""
        import struct
        import zlib
        raw = b"".join(b"\0" + self.pixels[y * self.width * 3:(y + 1) * self.width * 3] for y in range(self.height))

        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


    def column_runs(self, low, high, region, invert=False):
        """The runs of columns (x0, x1), exclusive ends, in which some pixel of `region` has
        every channel within [low, high] (or, with `invert`, not): the separate shapes side by
        side."""
        x0, y0, x1, y1 = region
        mask = self.mask(low, high, (y0, y1))
        if invert:
            mask = mask.translate(bytes([1, 0]) + bytes(254))
        columns = 0
        for y in range(y0, y1):
            columns |= int.from_bytes(mask[(y - y0) * self.width + x0:(y - y0) * self.width + x1], "big")
        present = columns.to_bytes(x1 - x0, "big")
        runs, start = [], None
        for i, value in enumerate(present + b"\0"):
            if value and start is None:
                start = i
            elif not value and start is not None:
                runs.append((x0 + start, x0 + i))
                start = None
        return runs


DARK = ((0, 0, 0), (40, 40, 40))  # the capsule's black, allowing for antialiasing inside it
LIGHT = ((170, 170, 170), (255, 255, 255))  # text on the capsule


class UserSession:
    """A directory tree owned by the test user (runtime directory 0700, home, configuration,
    data, state), its session bus, and every process started in it."""

    def __init__(self, user=None):
        entry = pwd.getpwnam(user or TEST_USER)
        self.uid, self.gid, self.user = entry.pw_uid, entry.pw_gid, entry.pw_name
        self.processes = []  # (name, Popen), in start order
        self.fds = []  # descriptors to close with the session
        self.closers = []  # and connections
        self.root = tempfile.mkdtemp(prefix="island-desktop-", dir="/tmp")
        artifacts.keep(self.root)
        self.runtime = self.path("run")
        self.home = self.path("home")
        self.config = self.path("home", ".config")
        self.data = self.path("home", ".local", "share")
        self.state = self.path("home", ".local", "state")
        self.logs = os.path.join(self.root, "logs")  # root's: the user's programs cannot fill it
        os.makedirs(self.logs)
        for directory in (self.runtime, self.home, self.config, self.data, self.state, self.path("home", ".cache")):
            self.make_dir(directory)
        self.env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": self.home, "USER": self.user, "LOGNAME": self.user, "SHELL": "/bin/sh",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "XDG_RUNTIME_DIR": self.runtime, "XDG_CONFIG_HOME": self.config,
            "XDG_DATA_HOME": self.data, "XDG_STATE_HOME": self.state,
            "XDG_CACHE_HOME": self.path("home", ".cache"), "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
            # No accessibility bus nor dconf service: nothing may be activated behind our back.
            "NO_AT_BRIDGE": "1", "GSETTINGS_BACKEND": "memory",
        }

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def make_dir(self, directory, mode=0o700):
        """Makes `directory` and any parent below the session's root, owned by the user."""
        relative = os.path.relpath(directory, self.root)
        current = self.root
        os.chown(self.root, self.uid, self.gid)
        os.chmod(self.root, 0o711)
        for part in relative.split(os.sep):
            current = os.path.join(current, part)
            if not os.path.isdir(current):
                os.mkdir(current)
            os.chown(current, self.uid, self.gid)
            os.chmod(current, mode)

    def write(self, path, text, mode=0o644):
        """Writes a file the user owns, making its directories."""
        self.make_dir(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(text)
        os.chown(path, self.uid, self.gid)
        os.chmod(path, mode)

    def spawn(self, name, argv, env=None, stdin=subprocess.DEVNULL, stdout=None):
        """Starts `argv` as the user, its output in logs/NAME.log (stdout to a pipe if asked)."""
        log = open(os.path.join(self.logs, name + ".log"), "ab")
        environment = dict(self.env, **(env or {}))
        process = subprocess.Popen(argv, user=self.uid, group=self.gid, extra_groups=[], env=environment,
                                   cwd=self.home, stdin=stdin, stdout=stdout or log, stderr=log)
        log.close()
        self.processes.append((name, process))
        return process

    def run(self, argv, env=None, timeout=LIVENESS, input=None, check=True):
        """Runs `argv` as the user to its end; its CompletedProcess (bytes)."""
        result = subprocess.run(argv, user=self.uid, group=self.gid, extra_groups=[],
                                env=dict(self.env, **(env or {})), cwd=self.home, input=input,
                                capture_output=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError("%s exited with %d: %s" % (" ".join(argv), result.returncode,
                                                          result.stderr.decode(errors="replace")[-2000:]))
        return result

    def log(self, name):
        try:
            with open(os.path.join(self.logs, name + ".log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def logs_text(self, limit=3000):
        return "\n".join("--- %s ---\n%s" % (name, self.log(name)[-limit:]) for name, _ in self.processes)

    def alive(self, process):
        if process.poll() is not None:
            name = next((n for n, p in self.processes if p is process), "process")
            raise RuntimeError("%s exited with %s:\n%s" % (name, process.returncode, self.log(name)[-3000:]))
        return True

    def stop(self, process, grace=3.0):
        """SIGTERM, then SIGKILL after `grace` seconds; the exit status."""
        if process.poll() is None:
            try:
                process.send_signal(signal.SIGTERM)
                process.wait(grace)
            except subprocess.TimeoutExpired:
                # A killed process is gone once the kernel has torn each of its threads down:
                # on a loaded machine that took over 5 s for the Shell's extensions service (a
                # gjs with GTK, 2026-12-07). A liveness bound, not a hope.
                process.kill()
                process.wait(LIVENESS)
            except ProcessLookupError:
                pass
        return process.returncode

    def close(self, keep=False):
        """Stops everything it started, last first, and removes its files (unless `keep`)."""
        for _, process in reversed(self.processes):
            if process.poll() is None:
                try:
                    process.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 3
        for _, process in reversed(self.processes):
            try:
                process.wait(max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(LIVENESS)  # as in stop()
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        for close in self.closers:
            close()
        self.closers = []
        if not keep:
            artifacts.remove(self.root)

    # The session bus, with no service directories: nothing is activated.

    def start_bus(self):
        address = os.path.join(self.runtime, "bus")
        config = self.path("home", "session-bus.conf")
        self.write(config, """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""" % address)
        bus = self.spawn("dbus", ["dbus-daemon", "--nofork", "--nopidfile", "--config-file=" + config])
        wait_until(lambda: self.alive(bus) and os.path.exists(address), LIVENESS, "the session bus")
        self.env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + address
        return bus

    # islandd, the example apps and the CLI.

    def install_examples(self):
        """The five example apps of packaging/ (manifests and layouts), as scripts/demo.sh
        installs them for a user."""
        for entry in glob.glob(os.path.join(REPO, "packaging", "applications", "*.desktop")):
            with open(entry) as f:
                self.write(os.path.join(self.data, "applications", os.path.basename(entry)), f.read())
        for layout in glob.glob(os.path.join(REPO, "packaging", "layouts", "*", "*.json")):
            app = os.path.basename(os.path.dirname(layout))
            with open(layout) as f:
                self.write(os.path.join(self.data, "island", "layouts", app, os.path.basename(layout)), f.read())

    def write_manifest(self, app, name=None, extra=""):
        self.write(os.path.join(self.data, "applications", app + ".desktop"),
                   "[Desktop Entry]\nType=Application\nName=%s\nExec=/usr/bin/false\nX-Island-LiveActivities=true\n%s"
                   % (name or app, extra))

    @property
    def socket(self):
        return os.path.join(self.runtime, "island", "islandd.sock")

    def start_islandd(self, config=None):
        """The user's islandd on its default socket ($XDG_RUNTIME_DIR/island/islandd.sock), so the
        overlay and the CLI find it as they would on a desktop. `config` is its islandd.conf (by
        default the last one given, so a restart keeps it)."""
        self.install_examples()
        conf = os.path.join(self.config, "island", "islandd.conf")
        if config is not None or not os.path.exists(conf):
            self.write(conf, config or "")
        daemon = self.spawn("islandd", [os.path.join(bin_dir(), "islandd"), "--config", conf])

        def listening():
            self.alive(daemon)
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
                return True
            except OSError:
                return False
        wait_until(listening, LIVENESS, "islandd listening")
        self.islandd = daemon
        return daemon

    def island(self, *args, timeout=LIVENESS):
        """Runs the island CLI as the user; its stdout."""
        return self.run([os.path.join(bin_dir(), "island"), *args], timeout=timeout).stdout.decode()

    def call_as_user(self, method, parameters):
        """One Varlink call made by the user (the presenter role is the user's alone, not
        root's); its reply's parameters, or raises on an error."""
        script = ("import json,socket,sys\n"
                  "s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1])\n"
                  "s.sendall(sys.argv[2].encode()+b'\\0');b=b''\n"
                  "while not b.endswith(b'\\0'):\n"
                  "  c=s.recv(65536)\n"
                  "  if not c: break\n"
                  "  b+=c\n"
                  "sys.stdout.write(b.rstrip(b'\\0').decode())\n")
        message = json.dumps({"method": method, "parameters": parameters})
        reply = json.loads(self.run(["/usr/bin/python3", "-c", script, self.socket, message]).stdout)
        if "error" in reply:
            raise RuntimeError("%s: %s %s" % (method, reply["error"], reply.get("parameters")))
        return reply.get("parameters", {})

    @contextmanager
    def varlink(self, interface):
        """A reference varlink client connection to the user's islandd (root may connect to a
        user's daemon)."""
        with varlink.Client(address="unix:" + self.socket) as client:
            with client.open(interface) as connection:
                yield connection


class Sway:
    """A headless sway of `width`×`height` in a user session, with a pointer the seat can use."""

    def __init__(self, session, width=1280, height=720, extra_config="", background=BACKGROUND, outputs=1):
        self.session = session
        self.width, self.height = width, height
        self.background = background
        config = session.path("home", ".config", "sway", "config")
        session.write(config, "\n".join([
            "xwayland disable",
            "output * bg #%02x%02x%02x solid_color" % background,
            "output * mode %dx%d" % (width, height),
            "default_border none",
            "focus_follows_mouse no",
            extra_config, ""]))
        env = {"WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1",
               "WLR_HEADLESS_OUTPUTS": str(outputs)}
        self.process = session.spawn("sway", ["sway", "-c", config], env=env)

        def ready():
            session.alive(self.process)
            sockets = [p for p in glob.glob(os.path.join(session.runtime, "wayland-*")) if not p.endswith(".lock")]
            ipc = glob.glob(os.path.join(session.runtime, "sway-ipc.*.sock"))
            return sockets and ipc and (os.path.basename(sockets[0]), ipc[0])
        display, ipc = wait_until(ready, LIVENESS, "sway's sockets")
        self.env = {"WAYLAND_DISPLAY": display, "SWAYSOCK": ipc, "XDG_SESSION_TYPE": "wayland",
                    "GDK_BACKEND": "wayland"}
        session.env.update(self.env)
        wait_until(lambda: len(self.outputs()) == outputs, LIVENESS, "sway's outputs")
        output = self.outputs()[0]
        self.output = output["name"]
        rect = output["rect"]
        self.width, self.height = rect["width"], rect["height"]
        self.pointer = None

    def swaymsg(self, *args, timeout=LIVENESS):
        return self.session.run(["swaymsg", *args], timeout=timeout).stdout.decode()

    def outputs(self):
        try:
            return [o for o in json.loads(self.swaymsg("-r", "-t", "get_outputs")) if o.get("active")]
        except (RuntimeError, ValueError):
            return []

    def screenshot(self):
        return artifacts.screenshot(Image(self.session.run(["grim", "-t", "ppm", "-"], timeout=LIVENESS).stdout))

    def start_pointer(self):
        """The virtual pointer that gives the seat a pointer (see virtual_pointer.py)."""
        self.pointer = self.session.spawn("virtual-pointer", ["python3", VIRTUAL_POINTER],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = _read_line(self.pointer, LIVENESS)
        if line != "ready":
            raise RuntimeError("the virtual pointer did not start: %r\n%s" % (line, self.session.log("virtual-pointer")))
        self.park()
        return self.pointer

    def key(self, code):
        """Presses and releases a key (a Linux evdev code: KEY_ESC is 1) on the virtual keyboard
        of the input client, which goes to the surface with keyboard focus."""
        if not self.pointer:
            self.start_pointer()
        for state in (1, 0):
            self.pointer.stdin.write(b"key %d %d\n" % (code, state))
            self.pointer.stdin.flush()
            line = _read_line(self.pointer, LIVENESS)
            if line != "done":
                raise RuntimeError("the virtual keyboard did not take the key: %r\n%s"
                                   % (line, self.session.log("virtual-pointer")))

    def move(self, x, y):
        self.swaymsg("seat", "-", "cursor", "set", str(int(x)), str(int(y)))
        self.at = (int(x), int(y))

    def sweep(self, x, y, step=6):
        """Moves the pointer from where it was last put to (x, y) along a straight line, in
        motions of the virtual pointer of at most `step` pixels, as a hand moves a mouse: every
        surface on the way sees the pointer come and go, which a jump never shows it. Absolute
        motions within the first output (the extent the virtual pointer's are scaled to)."""
        if not self.pointer:
            self.start_pointer()
        here = getattr(self, "at", (1, self.height - 1))
        count = max(1, int(max(abs(x - here[0]), abs(y - here[1])) // step))
        for i in range(1, count + 1):
            self.pointer.stdin.write(b"motion %d %d %d %d\n" % (here[0] + (x - here[0]) * i // count,
                                                               here[1] + (y - here[1]) * i // count, self.width, self.height))
            self.pointer.stdin.flush()
            line = _read_line(self.pointer, LIVENESS)
            if line != "done":
                raise RuntimeError("the virtual pointer did not move: %r\n%s" % (line, self.session.log("virtual-pointer")))
        self.at = (int(x), int(y))

    def click(self, x, y, button="button1"):
        if not self.pointer:
            self.start_pointer()
        if len(self.outputs()) == 1:
            self.sweep(int(x), int(y))
        self.move(x, y)
        self.swaymsg("seat", "-", "cursor", "press", button)
        self.swaymsg("seat", "-", "cursor", "release", button)

    def park(self):
        """Moves the cursor (which pixman draws into the frames) to the bottom-left corner, away
        from what the tests measure."""
        self.move(1, self.height - 1)


def _read_line(process, timeout):
    import select
    readable, _, _ = select.select([process.stdout], [], [], timeout)
    if not readable:
        return None
    return process.stdout.readline().decode().strip()


class Xvfb:
    """An Xvfb server of `width`×`height` (white root window) in a user session."""

    background = (255, 255, 255)  # -wr

    def __init__(self, session, width=1280, height=720):
        self.session = session
        self.width, self.height = width, height
        # Xvfb makes the socket directory if it is missing, owned by whoever runs it; it must be
        # root's, sticky and world-writable, as the X servers of every other user expect.
        if not os.path.isdir("/tmp/.X11-unix"):
            os.mkdir("/tmp/.X11-unix")
            os.chmod("/tmp/.X11-unix", 0o1777)
        read, write = os.pipe()
        log = open(os.path.join(session.logs, "xvfb.log"), "ab")
        self.process = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", "%dx%dx24" % (width, height), "-nolisten", "tcp",
             "-wr", "-noreset"], user=session.uid, group=session.gid, extra_groups=[], env=session.env,
            cwd=session.home, pass_fds=(write,), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        session.processes.append(("xvfb", self.process))
        os.close(write)
        # The read end stays open as long as the server runs: Xvfb writes its number again when
        # it resets, and dies of a closed pipe (EPIPE) if nobody listens.
        session.fds.append(read)
        import select
        readable, _, _ = select.select([read], [], [], LIVENESS)
        number = os.read(read, 64).decode().strip() if readable else ""
        if not number.isdigit():
            raise RuntimeError("Xvfb did not start:\n" + session.log("xvfb"))
        self.env = {"DISPLAY": ":" + number, "XDG_SESSION_TYPE": "x11", "GDK_BACKEND": "x11"}
        session.env.update(self.env)
        self.screen = None

    def screenshot(self):
        """The root window, through one X connection kept open (harness/x11_screen.py)."""
        if self.screen is None:
            self.screen = XScreen(int(self.env["DISPLAY"][1:]))
            self.session.closers.append(self.screen.close)
        return artifacts.screenshot(Image(self.screen.grab()))

    def click(self, x, y):
        # Moved first (swept there, as a hand moves), and clicked once the pointer's arrival has
        # been handled: in one xdotool command the press can reach the window before GTK knows
        # the pointer is over it.
        self.sweep((int(x), int(y)))
        time.sleep(0.2)
        self.session.run(["xdotool", "click", "1"])

    def park(self):
        self.session.run(["xdotool", "mousemove", "1", str(self.height - 1)])

    def sweep(self, *points, step=6):
        """Moves the pointer from where it is through `points` along straight lines, in motions of
        at most `step` pixels, as a hand moves a mouse: every surface on the way sees the pointer
        come and go, which a jump (`click`, `park`) never shows it. One xdotool process chains
        the motions; the pause between two lets each be its own event for the server."""
        here = self.pointer()
        words = []
        for target in points:
            dx, dy = target[0] - here[0], target[1] - here[1]
            count = max(1, int(max(abs(dx), abs(dy)) // step))
            for i in range(1, count + 1):
                words += ["mousemove", str(int(here[0] + dx * i / count)), str(int(here[1] + dy * i / count)), "sleep", "0.004"]
            here = target
        self.session.run(["xdotool", *words], timeout=120)

    def pointer(self):
        """Where the pointer is: (x, y)."""
        out = self.session.run(["xdotool", "getmouselocation", "--shell"]).stdout.decode()
        values = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return int(values["X"]), int(values["Y"])


class I3:
    """i3, an EWMH window manager, on an Xvfb in a user session: no bar, no borders (a tiled
    window fills the screen), no keybindings; `msg` is i3-msg. `window` opens an ordinary X11
    window of one colour and returns once i3 has it focused."""

    TITLE = "Island X11 test window"

    def __init__(self, session, xvfb):
        self.session, self.xvfb = session, xvfb
        config = session.path("home", ".config", "i3", "config")
        session.write(config, "\n".join([
            "# i3 config file (v4)", "font pango:DejaVu Sans 8", "default_border none", "default_floating_border none",
            "focus_follows_mouse no", ""]))
        self.process = session.spawn("i3", ["i3", "-c", config], env=xvfb.env)
        wait_until(lambda: session.alive(self.process) and self.msg("-t", "get_version", check=False) is not None,
                   20, "i3's IPC socket")

    def msg(self, *args, check=True):
        """i3-msg's answer (JSON text); with check=False, None where it fails."""
        result = self.session.run(["i3-msg", *args], env=self.xvfb.env, check=check)
        return result.stdout.decode() if result.returncode == 0 else None

    def window(self, colour):
        self.session.spawn("x11-window", ["gjs", os.path.join(os.path.dirname(__file__), "x11_window.js"), colour],
                           env=self.xvfb.env)
        wait_until(lambda: self.focused_title() == self.TITLE, LIVENESS, "the X11 window, focused by i3")

    def focused_title(self):
        def walk(node):
            if node.get("focused"):
                return node.get("name")
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                found = walk(child)
                if found:
                    return found
            return None
        return walk(json.loads(self.msg("-t", "get_tree")))

    def raise_window(self):
        """Raises the window's frame to the top, as window managers other than i3 do to a new,
        focused or fullscreen window (i3 keeps its frames below unmanaged windows)."""
        client = self.session.run(["xdotool", "search", "--name", self.TITLE], env=self.xvfb.env).stdout.split()[0]
        tree = self.session.run(["xwininfo", "-id", client.decode(), "-tree"], env=self.xvfb.env).stdout.decode()
        frame = re.search(r"Parent window id: (0x[0-9a-f]+)", tree).group(1)
        self.session.run(["xdotool", "windowraise", frame], env=self.xvfb.env)

    def fullscreen(self, on):
        self.msg('[title="%s"]' % self.TITLE, "fullscreen", "enable" if on else "disable")


class Weston:
    """A headless weston: a Wayland compositor without wlr-layer-shell, as GNOME's is."""

    def __init__(self, session, name="wayland-weston"):
        self.session = session
        self.process = session.spawn("weston", [
            "weston", "--backend=headless-backend.so", "--use-pixman", "--socket=" + name,
            "--width=640", "--height=360", "--idle-time=0", "--no-config"])
        wait_until(lambda: session.alive(self.process) and os.path.exists(os.path.join(session.runtime, name)),
                   20, "weston's socket")
        self.env = {"WAYLAND_DISPLAY": name, "XDG_SESSION_TYPE": "wayland"}


def overlay_binary():
    return os.path.join(bin_dir(), "island-overlay")


def overlay_missing():
    """Why the overlay cannot be tested here (a skip reason), or None."""
    if not os.access(overlay_binary(), os.X_OK):
        return "island-overlay not built (%s)" % overlay_binary()
    try:
        usage = subprocess.run([overlay_binary(), "--help"], capture_output=True, text=True, timeout=LIVENESS).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return "island-overlay --help failed: %s" % error
    if "island-overlay" not in usage:
        return "island-overlay not built (%s --help prints no usage)" % overlay_binary()
    return None


class Overlay:
    """The real island-overlay in a session, configured through ~/.config/island/overlay.conf
    (and overlay.css) as a user would."""

    def __init__(self, session, display_env, config="", css=None, args=(), name="island-overlay"):
        self.session = session
        self.config_path = os.path.join(session.config, "island", "overlay.conf")
        session.write(self.config_path, config)
        if css is not None:
            session.write(os.path.join(session.config, "island", "overlay.css"), css)
        self.name = name
        self.process = session.spawn(name, [overlay_binary(), *args], env=display_env)

    def log(self):
        return self.session.log(self.name)

    def alive(self):
        return self.session.alive(self.process)

    def stop(self):
        return self.session.stop(self.process)


def island_mode(session):
    """The island's mode, as the user's presenter sees it (the role is the user's alone)."""
    svg = session.run([PRESENTER, "snapshot", "--svg", "-"]).stdout.decode()
    return re.search(r"<title>Island: (\w+)</title>", svg).group(1)
