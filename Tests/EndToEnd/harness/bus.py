"""Real peers for island-bridge's end-to-end tests: a session bus of the test's own
(dbus-daemon), islandd serving the bridge's packaged manifest and layouts, the bridge, and the
desktop programs it bridges (mpv with mpv-mpris and playerctl, notify-send with dunst under
Xvfb, gdbus). Every process is started here and stopped by its pid."""

import json
import math
import os
import selectors
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import wave

import pytest

from harness import artifacts
from harness.daemon import Daemon
from harness.paths import BIN_DIR, LIVENESS, REPO
from harness.processes import accepting, read_log, stop_process
from harness.varlink import Connection

BRIDGE = os.path.abspath(os.path.join(BIN_DIR, "island-bridge"))
APP = "org.island.bridge"
# The bridge's own icon (its packaged entry's Icon=): what a source not verified as an app shows.
BRIDGE_ICON = "emblem-synchronizing-symbolic"
SYSTEM_PYTHON = "/usr/bin/python3"
MPRIS_PLUGIN = "/usr/lib/mpv-mpris/mpris.so"
MPV_ENTRY = "/usr/share/applications/mpv.desktop"


def missing(*programs):
    """The first of `programs` not installed, or None."""
    for program in programs:
        if program.startswith("/"):
            if not os.path.exists(program):
                return program
        elif shutil.which(program) is None:
            return program
    return None


def skip_without(*programs):
    absent = missing(*programs)
    if absent:
        pytest.skip("%s is not installed (scripts/install-deps.sh installs it)" % absent)


def wait_until(predicate, timeout=LIVENESS, message="condition"):
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.time() > deadline:
            pytest.fail("%s not reached within %ss" % (message, timeout))
        time.sleep(0.02)


class SessionBus:
    """A dbus-daemon of our own on a socket in `root`; restartable on the same address."""

    def __init__(self, root):
        self.root = root
        self.socket = os.path.join(root, "bus")
        self.address = "unix:path=" + self.socket
        self.process = None

    def start(self):
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        log = open(os.path.join(self.root, "dbus.log"), "a")
        self.process = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + self.address],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        wait_until(lambda: accepting(self.socket), message="the session bus")
        return self

    def stop(self):
        stop_process(self.process)

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY")}
        env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        env.update(extra)
        return env


class Bridge:
    """island-bridge on `bus`, for `daemon`, with bridge.conf `config`."""

    def __init__(self, root, bus, daemon, config=""):
        self.root = root
        self.bus = bus
        self.daemon = daemon
        self.config_home = os.path.join(root, "config")
        os.makedirs(os.path.join(self.config_home, "island"), exist_ok=True)
        with open(os.path.join(self.config_home, "island", "bridge.conf"), "w") as f:
            f.write(config)
        self.log_path = os.path.join(root, "bridge.log")
        self.process = None

    def start(self):
        env = self.bus.env(XDG_CONFIG_HOME=self.config_home, XDG_DATA_HOME=self.daemon.share,
                           XDG_DATA_DIRS="/usr/share")
        for key in ("NOTIFY_SOCKET", "JOURNAL_STREAM", "XDG_CURRENT_DESKTOP", "ISLAND_SOCKET"):
            env.pop(key, None)
        log = open(self.log_path, "a")
        self.process = subprocess.Popen([BRIDGE, "--socket", self.daemon.socket, "--log-level", "debug"],
                                        env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        wait_until(lambda: "connected to islandd" in self.log() or self.process.poll() is not None,
                   message="the bridge connecting to islandd")
        assert self.process.poll() is None, "island-bridge exited:\n" + self.log()
        return self

    def stop(self, sig=signal.SIGTERM):
        return stop_process(self.process, sig)

    def log(self):
        return read_log(self.log_path)

    @property
    def pid(self):
        return self.process.pid


def bridge_daemon(root, config=""):
    """An islandd with the bridge's packaged manifest and layouts installed. The manifest's
    Exec= names the bridge under test by its real path, as the package's names /usr/bin's:
    islandd lets a producer speak for other apps only when it recognises it by its executable.
    mpv's own entry is installed too, for islandd to head mpv's card with."""
    daemon = Daemon(root, config)
    applications = os.path.join(daemon.share, "applications")
    os.makedirs(applications, exist_ok=True)
    with open(os.path.join(REPO, "packaging", "applications", APP + ".desktop")) as f:
        entry = f.read()
    assert "Exec=/usr/bin/island-bridge\n" in entry
    with open(os.path.join(applications, APP + ".desktop"), "w") as f:
        f.write(entry.replace("Exec=/usr/bin/island-bridge\n", "Exec=%s\n" % os.path.realpath(BRIDGE)))
    if os.path.exists(MPV_ENTRY):
        shutil.copy(MPV_ENTRY, applications)
    layouts = os.path.join(daemon.share, "island", "layouts", APP)
    shutil.copytree(os.path.join(REPO, "packaging", "layouts", APP), layouts)
    return daemon


class Presenter:
    """The island as a presenter sees it: the snapshot, then deltas applied to `items`."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.stream = Connection(daemon.socket)
        self.stream.call("org.island.Presenter.Subscribe", {}, more=True)
        self.items = {}
        self.island = {}
        self.last = None
        self.apply(self.stream.read()["parameters"]["update"])

    def apply(self, update):
        self.last = update
        if "island" in update:
            self.island = update["island"]
        if update["kind"] == "snapshot":
            self.items = {item["id"]: item for item in update["items"]}
        else:
            for item in update["items"]:
                self.items[item["id"]] = item
            for gone in update.get("removed", []):
                self.items.pop(gone, None)

    def bridged(self, type=None):
        return [i for i in self.items.values() if i["app"] == APP and (type is None or i["type"] == type)]

    def wait(self, predicate, timeout=LIVENESS, message="the island"):
        """Reads updates until `predicate(self)` is truthy; returns its value. `predicate` is
        called after every update applied, in order: it can watch what passes on the way."""
        deadline = time.time() + timeout
        while True:
            value = predicate(self)
            if value:
                return value
            remaining = deadline - time.time()
            if remaining <= 0:
                pytest.fail("%s not reached within %ss; bridged items: %s"
                            % (message, timeout, json.dumps([(i["type"], i["state"], i["content"]["state"]) for i in self.bridged()])))
            try:
                self.apply(self.stream.read(timeout=remaining)["parameters"]["update"])
            except TimeoutError:
                pass

    def until(self, predicate, timeout=LIVENESS, message="the island"):
        """Reads updates until one makes `predicate(self)` truthy; every update read, that one
        last. For "nothing else happened before the marker" checks."""
        read = []

        def reached(p):
            if p.last is not None:
                read.append(p.last)
                p.last = None
            return predicate(p)
        self.last = None
        self.wait(reached, timeout, message)
        return read

    def item(self, type, predicate=lambda item: True, timeout=LIVENESS, message=None):
        """The first bridged item of `type` that matches, once there is one."""
        return self.wait(lambda p: next((i for i in p.bridged(type) if predicate(i)), None), timeout,
                         message or "a %s item" % type)

    def press(self, activity_id, button):
        return interact(self.daemon, {"action": "button", "id": activity_id, "button": button})

    def close(self):
        self.stream.close()


def interact(daemon, parameters):
    stream = Connection(daemon.socket)
    try:
        stream.call("org.island.Presenter.Interact", parameters)
        return stream.read()
    finally:
        stream.close()


def admin(daemon, method, parameters):
    stream = Connection(daemon.socket)
    try:
        stream.call("org.island.Admin." + method, parameters)
        return stream.read()
    finally:
        stream.close()


def tone(path, seconds=30, frequency=440, tags=None):
    """A mono 8 kHz WAV of a sine tone, for mpv to play. `tags` ({"IART": "Claude Debussy",
    "IPRD": album, "INAM": title}) go into a RIFF INFO list, which mpv reads as the track's
    tags and mpv-mpris sends as xesam:artist (a list), xesam:album and xesam:title."""
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"".join(struct.pack("<h", int(2000 * math.sin(2 * math.pi * frequency * i / 8000)))
                               for i in range(8000 * seconds)))
    if tags:
        def chunk(name, data):
            return name + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")
        info = chunk(b"LIST", b"INFO" + b"".join(chunk(key.encode(), value.encode() + b"\0") for key, value in tags.items()))
        with open(path, "rb") as f:
            riff = f.read()
        # The wave module writes RIFF, WAVE, a 16-byte fmt chunk, then data: the list goes between.
        body = riff[12:36] + info + riff[36:]
        with open(path, "wb") as f:
            f.write(b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WAVE" + body)
    return path


class Session:
    """A bus, islandd and the bridge, shared by a test module; `close()` stops them all."""

    def __init__(self, bridge_config="", daemon_config=""):
        self.root = tempfile.mkdtemp(prefix="island-bridge-e2e-", dir="/tmp")
        artifacts.keep(self.root)
        self.processes = []
        self.bus = SessionBus(self.root).start()
        self.daemon = bridge_daemon(os.path.join(self.root, "islandd"), daemon_config)
        os.makedirs(self.daemon.root, exist_ok=True)
        self.daemon.start()
        self.bridge = Bridge(self.root, self.bus, self.daemon, bridge_config).start()

    def spawn(self, argv, name, **env):
        """A peer program on the session bus, stopped by `close()` if still running."""
        log = open(os.path.join(self.root, name + ".log"), "a")
        process = subprocess.Popen(argv, env=self.bus.env(**env), stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self.processes.append(process)
        return process

    def run(self, argv, timeout=LIVENESS, **env):
        """A one-shot program on the session bus; its completed process."""
        return subprocess.run(argv, env=self.bus.env(**env), capture_output=True, text=True, timeout=timeout)

    def log_of(self, name):
        return read_log(os.path.join(self.root, name + ".log"))

    def close(self):
        self.bridge.stop()
        for process in reversed(self.processes):
            stop_process(process)
        self.daemon.stop()
        self.bus.stop()
        artifacts.remove(self.root)


def start_notification_server(session):
    """dunst under an Xvfb of the session's own, serving org.freedesktop.Notifications."""
    display = ":%d" % (40 + os.getpid() % 200)
    xvfb = session.spawn(["Xvfb", display, "-screen", "0", "640x480x24", "-nolisten", "tcp"], "xvfb")
    wait_until(lambda: os.path.exists("/tmp/.X11-unix/X" + display[1:]) or xvfb.poll() is not None, message="Xvfb")
    config = os.path.join(session.root, "dunstrc")
    with open(config, "w") as f:
        # Nothing times out by itself during a test.
        f.write("[global]\n    monitor = 0\n[urgency_low]\n    timeout = 0\n[urgency_normal]\n    timeout = 0\n")
    dunst = session.spawn(["dunst", "-config", config], "dunst", DISPLAY=display)
    wait_until(lambda: notification_server(session), message="dunst on the bus")
    return dunst


def notification_server(session):
    """The name and vendor the notification server reports, or None."""
    done = session.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
                        "--object-path", "/org/freedesktop/Notifications",
                        "--method", "org.freedesktop.Notifications.GetServerInformation"])
    return done.stdout.strip() if done.returncode == 0 else None


# MARK: the real peers tests start: mpv with its MPRIS plugin, playerctl, a KIO-style job client


def start_mpv(session, *files, title="Island Test Tone"):
    return session.spawn(["mpv", "--no-config", "--load-scripts=no", "--script=" + MPRIS_PLUGIN, "--no-video",
                          "--ao=null", "--force-media-title=" + title, "--keep-open=yes", *files], "mpv")


def playerctl(session, *arguments):
    return session.run(["playerctl", "-p", "mpv", *arguments]).stdout.strip()


def require_python_dbus():
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import dbus, gi"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3-dbus and python3-gi are needed for the bus clients")


def app_interpreter(session, name):
    """A copy of Debian's python3 named `name`, in the session's own bin/: a process running it
    has that executable, as an installed app's process has the program its entry names."""
    require_python_dbus()
    directory = os.path.join(session.root, "bin")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        shutil.copy(SYSTEM_PYTHON, path)
    return path


def install_entry(session, id, name, icon, exec):
    """A desktop entry `id` where the bridge looks for them (its XDG_DATA_HOME), which is
    islandd's too: islandd reloads to read it, as after a package's installation."""
    applications = os.path.join(session.daemon.share, "applications")
    os.makedirs(applications, exist_ok=True)
    with open(os.path.join(applications, id + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=%s\nIcon=%s\nExec=%s %%U\n" % (name, icon, exec))
    reply = admin(session.daemon, "Reload", {})
    assert "error" not in reply, reply


class Notifier:
    """bridge/notify_client.py: one connection to the bus that sends notifications, run by
    `python` (Debian's, or a copy named as an app's executable)."""

    def __init__(self, session, python=SYSTEM_PYTHON):
        require_python_dbus()
        script = os.path.join(REPO, "Tests", "EndToEnd", "bridge", "notify_client.py")
        self.process = subprocess.Popen([python, script], env=session.bus.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        session.processes.append(self.process)
        expect_line(self.process, "ready")

    def command(self, line, answer):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return expect_line(self.process, answer).split()[1]

    def notify(self, **spec):
        """The server's id for the notification."""
        return int(self.command("notify " + json.dumps(spec), "id"))

    def close(self, id):
        self.command("close %d" % id, "closed")

    def quit(self):
        self.process.stdin.write("quit\n")
        self.process.stdin.flush()
        self.process.wait(timeout=LIVENESS)


def job_client(session, desktop_entry="org.kde.dolphin", capabilities=3, hints=None, python=SYSTEM_PYTHON):
    probe = subprocess.run([python, "-c", "import dbus, gi"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3-dbus and python3-gi are needed for the KIO-style job client")
    client = subprocess.Popen([python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "kio_job_client.py"), desktop_entry,
                               str(capabilities), json.dumps(hints or {"immediate": True})],
                              env=session.bus.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    session.processes.append(client)
    line = client.stdout.readline()
    assert line.startswith("path "), client.stderr.read() if client.poll() is not None else line
    return client, line.split()[1]


def restart_daemon_under_the_bridge(session):
    """Restarts the session's islandd while the bridge runs, and has the bridge reconnect: a file
    copy's job is shown, the daemon stopped and started, and the job's progress updated (the
    bridge's IslandKit connection comes back when the bridge next speaks to islandd). islandd
    keeps no lock, levels or focus across a restart, so what the new one then holds is what the
    bridge told it."""
    client, _ = job_client(session, hints={"title": "Copying", "percent": 10, "immediate": True})
    presenter = Presenter(session.daemon)
    presenter.item("Transfer")
    presenter.close()
    assert session.daemon.stop() == 0
    session.daemon.start()
    client.stdin.write('update {"percent": 60}\n')
    client.stdin.flush()
    expect_line(client, "updated")


def expect_line(client, prefix, timeout=LIVENESS):
    """The client's next line starting with `prefix` (read with a deadline)."""
    selector = selectors.DefaultSelector()
    selector.register(client.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if selector.select(timeout=max(0.01, deadline - time.monotonic())):
            line = client.stdout.readline()
            if line.startswith(prefix):
                return line.strip()
            if not line:
                break
    pytest.fail("the job client never printed %r" % prefix)
