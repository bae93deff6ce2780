"""An islandd on a socket, state directory and XDG data directory of its own, with the test
apps' desktop entries; and the factory the `make_daemon` fixture hands to tests."""

import os
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

import varlink

from harness import artifacts
from harness.paths import ISLANDD, LIVENESS
from harness.processes import read_log, stop_process

APPS = {
    # id: (X-Island-LiveActivities, X-Island-FrequentUpdates)
    "org.example.Coffee": (True, False),
    "org.example.Flights": (True, True),
    "org.example.Timer": (True, False),
    "org.example.NoActivities": (False, False),
}


def write_entry(share, app, live=True, frequent=False):
    """Writes (or replaces) an app's desktop entry in the data directory `share`."""
    applications = os.path.join(share, "applications")
    os.makedirs(applications, exist_ok=True)
    with open(os.path.join(applications, app + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=%s\nExec=/usr/bin/false\n" % app)
        if live:
            f.write("X-Island-LiveActivities=true\n")
        if frequent:
            f.write("X-Island-FrequentUpdates=true\n")


def write_manifests(share):
    """The test apps' desktop entries (APPS)."""
    for app, (live, frequent) in APPS.items():
        write_entry(share, app, live, frequent)


class Daemon:
    """One islandd process; restartable on the same socket and state."""

    def __init__(self, root, config=""):
        self.root = root
        artifacts.keep(root)
        self.socket = os.path.join(root, "islandd.sock")
        self.state = os.path.join(root, "state")
        self.config = os.path.join(root, "islandd.conf")
        self.share = os.path.join(root, "share")
        self.log_path = os.path.join(root, "islandd.log")
        write_manifests(self.share)
        with open(self.config, "w") as f:
            f.write(config)
        self.process = None
        # Run before islandd's own command line, e.g. `ip netns exec NS` (which execs it: the
        # pid is islandd's).
        self.prefix = []

    @property
    def address(self):
        return "unix:" + self.socket

    def start(self, timeout=LIVENESS):
        env = dict(os.environ)
        env.update({"XDG_DATA_HOME": self.share, "XDG_DATA_DIRS": os.path.join(self.root, "none")})
        for key in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"):
            env.pop(key, None)
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            self.prefix + [ISLANDD, "--socket", self.socket, "--state-dir", self.state, "--config", self.config],
            env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("islandd exited with %s:\n%s" % (self.process.returncode, self.log()))
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("islandd did not listen within %ss:\n%s" % (timeout, self.log()))

    def stop(self, sig=signal.SIGTERM):
        return stop_process(self.process, sig)

    def kill(self):
        return self.stop(signal.SIGKILL)

    def log(self):
        return read_log(self.log_path)

    @contextmanager
    def connect(self, interface):
        with varlink.Client(address=self.address) as client:
            with client.open(interface) as con:
                yield con


def write_manifest(daemon, app, live=True, frequent=False):
    """Adds (or replaces) a desktop entry in the daemon's XDG_DATA_HOME."""
    write_entry(daemon.share, app, live, frequent)


class Daemons:
    """Makes Daemon objects, each in a temporary root of its own; `close` stops and removes
    them all. `make(config, start=False)` leaves one unstarted, so a test can change its files
    (or expect the start to fail) first."""

    def __init__(self):
        self.daemons = []

    def make(self, config="", start=True):
        root = tempfile.mkdtemp(prefix="island-e2e-", dir="/tmp")
        d = Daemon(root, config)
        self.daemons.append(d)
        return d.start() if start else d

    def close(self):
        for d in self.daemons:
            d.stop()
        for d in self.daemons:
            artifacts.remove(d.root)
