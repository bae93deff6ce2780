"""End-to-end tests of the `island` CLI where no call succeeds: `--help`, usage errors (exit
status 2), numbers that are not finite, no daemon (69) and a reply the interface does not allow
(76)."""

import json
import os
import socket
import subprocess
import threading

import pytest

from harness.cli import island, ok
from harness.paths import ISLAND, ISLANDD, LIVENESS
from harness.processes import without_installed

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

# --- help, usage, availability -----------------------------------------------------------


def test_help_explains_commands_and_exit_statuses():
    result = ok(island(None, "--help"))
    for word in ("start", "update", "end", "list", "watch", "auth", "run", "timer", "progress", "extension",
                 "admin", "preview", "69", "usage"):
        assert word in result.stdout
    assert "--state" in ok(island(None, "update", "--help")).stdout


def test_version_is_the_daemons():
    """`island --version` answers as islandd's does (it was a usage error)."""
    mine = island(None, "--version")
    assert mine.returncode == 0, mine.stderr
    theirs = subprocess.run([ISLANDD, "--version"], capture_output=True, text=True, timeout=30)
    assert mine.stdout == theirs.stdout and mine.stdout.strip(), (mine.stdout, theirs.stdout)


def test_usage_errors_exit_2():
    assert island(None, "start").returncode == 2
    assert island(None, "frobnicate").returncode == 2
    assert island(None, "start", "T", "--state", "{not json").returncode == 2
    result = island(None, "start", "T", "--state", "[1]")
    assert result.returncode == 2 and "JSON object" in result.stderr


@pytest.mark.parametrize("command", [("admin", "status"), ("admin", "enable", "org.example.App"), ("admin", "focus", "on")])
def test_admin_commands_refuse_app_saying_why(command):
    """An admin call acts for the user, not for an app: `--app` did nothing there, silently.
    It is refused as a usage error that says so, before any daemon is asked, and --help does
    not offer it."""
    result = island(None, *command, "--app", "org.example.Other")
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "act for the user, not for an app" in result.stderr, result.stderr
    assert "--app" not in ok(island(None, *command[:2], "--help")).stdout


NOT_FINITE = ["nan", "inf", "-inf", "1e400"]


@pytest.mark.parametrize("value", NOT_FINITE)
@pytest.mark.parametrize("command", [
    ("start", "T", "--relevance"), ("start", "T", "--stale-after"),
    ("update", "ID", "--state", "{}", "--relevance"), ("update", "ID", "--state", "{}", "--stale-after"),
    ("update", "ID", "--state", "{}", "--timestamp"),
    ("push", "TOKEN", "--state", "{}", "--relevance"), ("push", "TOKEN", "--state", "{}", "--stale-date"),
    ("push", "TOKEN", "--state", "{}", "--timestamp"),
    ("channel", "push", "CHANNEL", "--app", "org.example.Scores", "--state", "{}", "--relevance"),
    ("channel", "push", "CHANNEL", "--app", "org.example.Scores", "--state", "{}", "--timestamp"),
], ids=lambda c: " ".join(c) if isinstance(c, tuple) else c)
def test_a_number_that_is_not_finite_is_a_usage_error(command, value):
    """JSON has no NaN or infinity: such a value went out as null, which the daemon takes as no
    value at all, so the command succeeded and the option meant nothing. No daemon is needed:
    the option is refused before anything is sent."""
    result = island(None, *command[:-1], command[-1] + "=" + value)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "%s must be a finite number" % command[-1] in result.stderr, result.stderr


@pytest.mark.parametrize("value", NOT_FINITE + ["1e300", "-5", "86401"])
@pytest.mark.parametrize("command", [("push", "TOKEN", "--state", "{}"), ("channel", "push", "CHANNEL", "--app", "org.example.Scores", "--state", "{}")],
                         ids=lambda c: " ".join(c) if isinstance(c, tuple) else c)
def test_a_wait_past_a_day_or_not_finite_is_a_usage_error(command, value):
    """`island push --wait inf` (or nan, or 1e300) crashed: the wait became a Duration."""
    result = island(None, *command, "--wait=" + value)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "--wait must be seconds from 0 to 86400, not" in result.stderr, result.stderr


def test_no_daemon_exits_69_with_a_clear_message():
    result = island(None, "list")
    assert result.returncode == 69
    assert "not reachable" in result.stderr and "islandd" in result.stderr
    result = island(None, "start", "T", "--json")
    assert result.returncode == 69
    assert json.loads(result.stdout)["error"] == "DaemonUnavailable"


SYSTEM_USER_UNITS = ["/etc/xdg/systemd/user", "/etc/systemd/user", "/run/systemd/user", "/usr/local/share/systemd/user",
                     "/usr/share/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user", "/lib/systemd/user"]


def test_no_daemon_hint_names_the_user_unit_only_where_systemd_finds_it(tmp_path):
    """From a source checkout no islandd.socket is installed, and `systemctl --user start
    islandd.socket` only fails: the hint names scripts/run.sh and islandd there, and the unit
    once it is in the user unit search path (here the user's own ~/.config/systemd/user)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("XDG_")}
    env.update(HOME=str(home), ISLAND_SOCKET=str(tmp_path / "none.sock"))
    argv = without_installed([os.path.join(d, "islandd.socket") for d in SYSTEM_USER_UNITS], [ISLAND, "list"])

    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 69, result.stderr
    assert "systemctl" not in result.stderr and "scripts/run.sh" in result.stderr, result.stderr

    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "islandd.socket").write_text("[Socket]\nListenStream=%t/island/islandd.sock\n")
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 69, result.stderr
    assert "systemctl --user start islandd.socket" in result.stderr, result.stderr


class FixedReplier:
    """A Unix socket that answers every Varlink call with the same reply: a daemon of another
    version, whose replies are not what this island's interface says."""

    def __init__(self, path, parameters):
        self.reply = json.dumps({"parameters": parameters}).encode() + b"\0"
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return  # closed
            with connection:
                connection.settimeout(LIVENESS)
                received = b""
                while True:
                    try:
                        chunk = connection.recv(4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    received += chunk
                    while b"\0" in received:
                        _, received = received.split(b"\0", 1)
                        connection.sendall(self.reply)

    def close(self):
        self.server.close()


def test_a_reply_that_is_not_what_the_interface_says_exits_76_naming_the_member(tmp_path):
    # `on` missing, `since` a string: the first member wrong is named, with the method.
    replier = FixedReplier(tmp_path / "islandd.sock", {"focus": {"since": "noon"}})
    try:
        result = island(None, "admin", "focus", "status", socket=str(tmp_path / "islandd.sock"))
        assert result.returncode == 76, result.stdout + result.stderr
        assert "UnexpectedReply" in result.stderr
        assert "org.island.Admin.GetFocus" in result.stderr and "focus.on (bool)" in result.stderr
        result = island(None, "admin", "lock", "status", "--json", socket=str(tmp_path / "islandd.sock"))
        assert result.returncode == 76
        assert json.loads(result.stdout)["error"] == "UnexpectedReply"
    finally:
        replier.close()
