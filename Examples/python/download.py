#!/usr/bin/env python3
"""A download shown as a Live Activity, from Python's standard library alone: Varlink is JSON
objects, each ended by a NUL byte, on a Unix socket.

Install org.example.DownloadPython.desktop (beside this file) in ~/.local/share/applications/
first; a running islandd notices it at once. Run `island-presenter tui` in
another terminal to watch it."""

import json
import os
import socket
import sys
import time

APP = "org.example.DownloadPython"  # the desktop entry's name, without .desktop
FILE = sys.argv[1] if len(sys.argv) > 1 else "debian-12.iso"
PAUSE = float(os.environ.get("STEP_SECONDS", "2"))  # the pretend work between two updates


def socket_path():
    """Where islandd listens, found as the `island` CLI finds it: $ISLAND_SOCKET, else the user
    instance's socket in the runtime directory."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or "/run/user/%d" % os.getuid()
    return os.environ.get("ISLAND_SOCKET") or os.path.join(runtime, "island", "islandd.sock")


class Varlink:
    """One connection; `call` sends a call and returns its reply's parameters."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""

    def call(self, method, **parameters):
        self.sock.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        while b"\0" not in self.buffer:  # read until the reply's NUL
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("islandd closed the connection")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        reply = json.loads(message)
        if "error" in reply:  # a refusal names itself, e.g. org.island.Unentitled
            raise RuntimeError("%s %s" % (reply["error"], json.dumps(reply.get("parameters", {}))))
        return reply["parameters"]


island = Varlink(socket_path())
# The first call makes this connection a producer of APP. ownerGone "end": if this process dies,
# its connection closes and islandd ends the activity, so nothing stays on screen for hours.
# Keep the connection open for as long as the activity runs.
started = island.call("org.island.Producer.Request", app=APP, type="Download",
                      attributes={"file": FILE},
                      content={"state": {"stage": "downloading", "percent": 0}},
                      key="download-" + FILE, ownerGone="end")
id = started["activity"]["id"]
print("started", id)

for state in ({"stage": "downloading", "percent": 40}, {"stage": "verifying", "percent": 100}):
    time.sleep(PAUSE)
    reply = island.call("org.island.Producer.Update", id=id, content={"state": state})
    print("updated %s: %s%s" % (id, state["stage"], " (throttled)" if reply["delivery"]["throttled"] else ""))

time.sleep(PAUSE)
# The final state stays listed (the lock-screen list) until the user or the daemon dismisses it.
island.call("org.island.Producer.End", id=id, content={"state": {"stage": "done", "percent": 100}})
print("ended", id)
