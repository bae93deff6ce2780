"""The `island` CLI as a user's shell runs it, against a test daemon."""

import json
import os
import subprocess

from harness.paths import ISLAND


def island(daemon, *args, stdin=None, timeout=60, socket=None, text=True):
    """Runs `island ARGS` against `daemon` (or a socket that does not exist, without one); its
    CompletedProcess, output as text (bytes with `text=False`)."""
    env = dict(os.environ)
    env["ISLAND_SOCKET"] = socket or (daemon.socket if daemon else "/tmp/island-e2e-no-daemon/none.sock")
    return subprocess.run([ISLAND, *args], input=stdin, capture_output=True, text=text, timeout=timeout, env=env)


def ok(result):
    """The result of a command that must have succeeded."""
    assert result.returncode == 0, "exit %s\nstdout: %s\nstderr: %s" % (result.returncode, result.stdout, result.stderr)
    return result


def activities(daemon, *args):
    return json.loads(ok(island(daemon, "list", "--json", *args)).stdout)


def activity(daemon, id):
    return next(a for a in activities(daemon, "--state", "pending", "active", "stale", "ended", "dismissed") if a["id"] == id)
