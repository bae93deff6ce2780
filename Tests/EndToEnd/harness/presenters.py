"""`island-presenter` as bars run it, and the calls presenter tests make to set the scene."""

import json
import os
import queue
import signal
import subprocess
import threading
import time

import pytest

from harness.paths import LIVENESS, PRESENTER

COFFEE = "org.example.Coffee"


class Presenter:
    """`island-presenter MODE` as a bar runs it: stdout read line by line on a thread."""

    def __init__(self, daemon, mode, *args, env=None):
        self.process = subprocess.Popen(
            [PRESENTER, mode, "--socket", daemon.socket, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.process.stdout:
            self.lines.put(raw.decode("utf-8"))
        self.lines.put(None)

    def next_line(self, predicate=lambda line: True, timeout=LIVENESS):
        """The next line (without its newline) that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail("no matching line within %ss; lines so far: %r" % (timeout, self.seen))
            try:
                raw = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if raw is None:
                pytest.fail("island-presenter exited (%s): %s" % (self.process.poll(), self.process.stderr.read().decode()))
            assert raw.endswith("\n"), "every line ends with a newline: %r" % raw
            line = raw[:-1]
            self.seen.append(line)
            if predicate(line):
                return line

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def waybar_json(line):
    """Parses a line the way Waybar's custom module does with return-type json."""
    value = json.loads(line)
    assert isinstance(value, dict)
    for key in ("text", "alt", "tooltip", "class"):
        assert key in value, "missing %s in %s" % (key, line)
    assert isinstance(value["text"], str) and isinstance(value["tooltip"], str)
    if "percentage" in value:
        assert isinstance(value["percentage"], int) and 0 <= value["percentage"] <= 100
    return value


def request(producer, app, state, relevance=0.0, type="Order"):
    return producer.Request(app=app, type=type, attributes={},
                            content={"state": state, "relevanceScore": relevance})["activity"]


def register_layout(daemon, app, type, layout):
    with daemon.connect("org.island.Extension") as ext:
        ext.RegisterLayout(app=app, type=type, layout=layout)


def boot_clock():
    """The clock the presenters' click guards run on (BootClock: CLOCK_BOOTTIME, seconds)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def bar_shown_prefix(socket):
    """The record files of the bar presenters for `socket` (BarShown.fileName:
    $XDG_RUNTIME_DIR/island-presenter/bar-<FNV-1a of the socket path>-<pid>.json) start so."""
    h = 0xCBF29CE484222325
    for byte in socket.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "bar-%x-" % h


def bar_shown_paths(socket, runtime):
    directory = os.path.join(runtime, "island-presenter")
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return [os.path.join(directory, n) for n in sorted(names) if n.startswith(bar_shown_prefix(socket)) and n.endswith(".json")]


def bar_shown(socket, runtime):
    """The record of the one bar presenter for `socket` (pid, id, actionableAt: action ->
    CLOCK_BOOTTIME seconds), or None."""
    paths = bar_shown_paths(socket, runtime)
    assert len(paths) <= 1, "more than one bar presenter's record: %r" % paths
    try:
        with open(paths[0]) as f:
            return json.load(f)
    except (IndexError, FileNotFoundError, ValueError):
        return None


def wait_until_clickable(socket, runtime, activity=None, action=None, timeout=LIVENESS):
    """Waits until the bar shows `activity` (any, when None), with `action` (`collapse` once
    expanded, say; any when None), and every action on it has stood
    still for the settle time: the record's times are on CLOCK_BOOTTIME (`boot_clock`). An
    observed condition, not a guess of how long a click takes to be allowed. A `click` process
    is judged at its start time, which /proc gives in clock ticks (rounded down): one tick more
    and a click started from here is past the time. Returns the record."""
    deadline = time.monotonic() + timeout
    while True:
        record = bar_shown(socket, runtime)
        if record and record.get("id") and (activity is None or record["id"] == activity) \
                and (action is None or action in record["actionableAt"]):
            times = record["actionableAt"].values()
            if times and boot_clock() >= max(times) + 1.0 / os.sysconf("SC_CLK_TCK"):
                return record
        if time.monotonic() > deadline:
            pytest.fail("the bar's click targets never settled: %r" % (record,))
        time.sleep(0.05)


# ClickGuard's default settle time (seconds): the terminal UI acts on a key only once what the
# key acts on has stood still on screen this long, so a key acts on what the user saw.
TUI_SETTLE = 0.5


def let_the_screen_settle():
    """Called once the screen has shown what the next key acts on. The guard counts from the
    frame's drawing, which came before the capture that showed it, so waiting the settle time
    from here is a lower bound that holds however loaded the machine is: a wait for a known
    minimum, not a guess at how long something takes."""
    time.sleep(TUI_SETTLE + 0.05)
