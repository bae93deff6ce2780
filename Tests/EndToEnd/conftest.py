"""End-to-end harness: starts the real islandd on a temporary socket and state directory,
with test app manifests, and drives it with the reference Python varlink client."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

import pytest
import varlink

BIN_DIR = os.environ.get("ISLAND_BIN_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", ".build", "debug")
ISLANDD = os.path.abspath(os.path.join(BIN_DIR, "islandd"))

# Under scripts/sanitize.sh the binaries are built with AddressSanitizer or ThreadSanitizer and
# every instrumented process (the daemon, the CLI, the presenter) writes its reports to a file of
# its own in ISLAND_SANITIZER_LOGS (the options' log_path): a report there fails the test during
# which it appeared. SANITIZER_ENV is what a test must pass on when it starts one of our
# binaries with an environment of its own (systemd-socket-activate -E, a tmux pane).
SANITIZER = os.environ.get("ISLAND_SANITIZER")
# Sanitized builds run several times slower: deadlines stretch by this much, assertions do not.
SLOWDOWN = 5 if SANITIZER else 1
SANITIZER_LOGS = os.environ.get("ISLAND_SANITIZER_LOGS")
SANITIZER_ENV = {k: v for k, v in os.environ.items()
                 if k in ("ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "SWIFT_BACKTRACE")}


def sanitizer_reports():
    """The report files written so far, by name."""
    if not SANITIZER_LOGS:
        return set()
    return set(os.listdir(SANITIZER_LOGS))


def read_sanitizer_reports(names):
    text = ""
    for name in sorted(names):
        with open(os.path.join(SANITIZER_LOGS, name), errors="replace") as f:
            text += "==> %s\n%s\n" % (name, f.read())
    demangle = shutil.which("swift-demangle")
    if demangle:
        text = subprocess.run([demangle, "--simplified"], input=text, capture_output=True, text=True).stdout or text
    return text


@pytest.fixture(autouse=True)
def no_sanitizer_report():
    """Fails the test when a process it started wrote a sanitizer report. Autouse fixtures are
    set up first and torn down last, so the test's daemons have stopped (and written whatever
    they report at exit) by the time this looks."""
    if not SANITIZER_LOGS:
        yield
        return
    before = sanitizer_reports()
    yield
    new = sanitizer_reports() - before
    if new:
        pytest.fail("%s sanitizer report(s) from processes this test started:\n%s"
                    % (SANITIZER, read_sanitizer_reports(new)), pytrace=False)


def descendants(pid=None):
    """Every live process below `pid` (this test runner by default), by pid."""
    found, pending = set(), [pid or os.getpid()]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir("/proc/%d/task" % parent)
        except OSError:
            continue
        for task in tasks:
            try:
                with open("/proc/%d/task/%s/children" % (parent, task)) as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                continue
            for child in children:
                if child not in found:
                    found.add(child)
                    pending.append(child)
    return found


def kill_all(pids, grace=2.0):
    """SIGTERM, then SIGKILL after `grace` seconds, to each of `pids` still running; reaps
    those that are our children."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % pid) and not zombie(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        try:
            if not zombie(pid):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, os.WNOHANG)
        except OSError:
            pass


def memory(pid):
    """(VmRSS, VmHWM) of a process, in bytes."""
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024
    return values["VmRSS"], values["VmHWM"]


def zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.fixture(autouse=True)
def kills_what_it_started():
    """Whatever a test started and left running — a failed assertion before its own clean-up,
    a command that ignored its signal — is stopped after it, by pid, so no test leaves
    processes behind. Processes of wider-scoped fixtures (set up before this one) are left to
    their own teardown."""
    before = descendants()
    yield
    left = descendants() - before
    left = {pid for pid in left if not zombie(pid)}
    if left:
        kill_all(left)


def pytest_sessionfinish(session, exitstatus):
    """Anything still running is stopped; sanitizer reports written after every test's check
    (a module-scoped daemon stopping last) still fail the run."""
    left = {pid for pid in descendants() if not zombie(pid)}
    if left:
        kill_all(left)
    if SANITIZER_LOGS and sanitizer_reports() and session.exitstatus == 0:
        print("\n%s sanitizer report(s) in %s: %s" % (SANITIZER, SANITIZER_LOGS, " ".join(sorted(sanitizer_reports()))))
        session.exitstatus = 1


APPS = {
    # id: (X-Island-LiveActivities, X-Island-FrequentUpdates)
    "org.example.Coffee": (True, False),
    "org.example.Flights": (True, True),
    "org.example.Timer": (True, False),
    "org.example.NoActivities": (False, False),
}


def write_manifests(share):
    applications = os.path.join(share, "applications")
    os.makedirs(applications, exist_ok=True)
    for app, (live, frequent) in APPS.items():
        with open(os.path.join(applications, app + ".desktop"), "w") as f:
            f.write("[Desktop Entry]\nType=Application\nName=%s\nExec=/usr/bin/false\n" % app)
            if live:
                f.write("X-Island-LiveActivities=true\n")
            if frequent:
                f.write("X-Island-FrequentUpdates=true\n")


class Daemon:
    """One islandd process; restartable on the same socket and state."""

    def __init__(self, root, config=""):
        self.root = root
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

    def start(self, timeout=15):
        env = dict(os.environ)
        env.update({"XDG_DATA_HOME": self.share, "XDG_DATA_DIRS": os.path.join(self.root, "none")})
        for key in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"):
            env.pop(key, None)
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            self.prefix + [ISLANDD, "--socket", self.socket, "--state-dir", self.state, "--config", self.config],
            env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while time.time() < deadline:
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


def stop_process(process, sig=signal.SIGTERM):
    """Signals a process this test started (if it still runs), escalating to SIGKILL after
    10 s; its exit status, or None if it was never started."""
    if process and process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode if process else None


def read_log(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


@pytest.fixture
def make_daemon():
    daemons = []
    roots = []

    def make(config=""):
        root = tempfile.mkdtemp(prefix="island-e2e-", dir="/tmp")
        roots.append(root)
        d = Daemon(root, config)
        daemons.append(d)
        return d.start()

    yield make
    for d in daemons:
        d.stop()
    for r in roots:
        shutil.rmtree(r, ignore_errors=True)


@pytest.fixture
def daemon(make_daemon):
    return make_daemon()


def error_of(call, *args, **kwargs):
    """The (name, parameters) of the Varlink error a call raises."""
    with pytest.raises(varlink.VarlinkError) as info:
        call(*args, **kwargs)
    return info.value.error(), info.value.parameters()


class RawStream:
    """A raw Varlink connection for streams: NUL framing with deadlines, so a test can read
    a subscription while doing other things, or never read it at all."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buffer = b""

    def call(self, method, parameters=None, more=False):
        message = {"method": method, "parameters": parameters or {}}
        if more:
            message["more"] = True
        self.sock.sendall(json.dumps(message).encode() + b"\0")

    def read(self, timeout=5.0):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise TimeoutError("no message within %ss" % timeout)
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        frame, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(frame)

    def read_until(self, predicate, timeout=5.0):
        deadline = time.time() + timeout
        while True:
            message = self.read(max(0.01, deadline - time.time()))
            if predicate(message):
                return message

    def close(self):
        self.sock.close()


def subscribe_presenter(daemon):
    """A presenter's raw Subscribe stream and its first message, the snapshot."""
    stream = RawStream(daemon.socket)
    stream.call("org.island.Presenter.Subscribe", {}, more=True)
    snapshot = stream.read()["parameters"]["update"]
    assert snapshot["kind"] == "snapshot"
    return stream, snapshot


def next_update(stream, predicate=lambda update: True, timeout=5):
    """The next presenter update that matches."""
    return stream.read_until(lambda m: predicate(m["parameters"]["update"]), timeout)["parameters"]["update"]


def next_item(stream, activity_id, predicate=lambda item: True, timeout=5):
    """The next presenter update carrying the activity, and its item, where the item matches."""
    def item_of(update):
        return next((i for i in update["items"] if i["id"] == activity_id and predicate(i)), None)
    update = next_update(stream, lambda u: item_of(u) is not None, timeout)
    return update, item_of(update)


@pytest.fixture
def unstarted_daemon():
    """Makes Daemon objects that are not started yet, so a test can change their files (or
    expect the start to fail) first; stops and removes them afterwards."""
    daemons = []
    roots = []

    def make(config=""):
        root = tempfile.mkdtemp(prefix="island-e2e-", dir="/tmp")
        roots.append(root)
        d = Daemon(root, config)
        daemons.append(d)
        return d

    yield make
    for d in daemons:
        d.stop()
    for r in roots:
        shutil.rmtree(r, ignore_errors=True)


def wait_for(predicate, timeout=5.0, interval=0.02, message="condition"):
    """Polls `predicate` until it returns something truthy, which is returned; fails the test
    at the deadline."""
    deadline = time.time() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.time() >= deadline:
            pytest.fail("%s not reached within %ss" % (message, timeout))
        time.sleep(interval)


def write_manifest(daemon, app, live=True, frequent=False):
    """Adds (or replaces) a desktop entry in the daemon's XDG_DATA_HOME."""
    applications = os.path.join(daemon.share, "applications")
    os.makedirs(applications, exist_ok=True)
    with open(os.path.join(applications, app + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=%s\nExec=/usr/bin/false\n" % app)
        if live:
            f.write("X-Island-LiveActivities=true\n")
        if frequent:
            f.write("X-Island-FrequentUpdates=true\n")
