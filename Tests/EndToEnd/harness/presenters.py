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

    def __init__(self, daemon, mode, *args):
        self.process = subprocess.Popen(
            [PRESENTER, mode, "--socket", daemon.socket, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
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
