"""End-to-end tests of the `island` CLI against the real islandd: every command, exit
statuses, --json output, `island run`/`progress`/`timer`, and `island preview`'s SVG."""

import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

import pytest

from harness.cli import activities, activity, island, ok
from harness.paths import ISLAND, ISLANDD, LIVENESS
from harness.processes import wait_for, without_installed

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


# --- producer commands --------------------------------------------------------------------


def test_start_update_list_end(cli_daemon):
    id = ok(island(cli_daemon, "start", "Delivery", "--attributes", '{"title":"Pizza"}', "--state", '{"stage":"baking"}',
                   "--relevance", "3")).stdout.strip()
    assert len(id) == 36
    ok(island(cli_daemon, "update", id, "--state", '{"stage":"on the way"}', "--relevance", "3"))
    table = ok(island(cli_daemon, "list")).stdout
    assert id in table and "Delivery" in table and "active" in table
    listed = activities(cli_daemon, "--type", "Delivery")
    assert [a["id"] for a in listed] == [id]
    assert listed[0]["attributes"] == {"title": "Pizza"}
    assert listed[0]["content"]["state"] == {"stage": "on the way"}
    assert listed[0]["content"]["relevanceScore"] == 3
    assert activities(cli_daemon, "--type", "Other") == []

    ended = json.loads(ok(island(cli_daemon, "end", id, "--state", '{"stage":"delivered"}', "--json")).stdout)
    assert ended["state"] == "ended" and ended["endReason"] == "app"
    assert [a["id"] for a in activities(cli_daemon, "--state", "ended")] == [id]
    assert activities(cli_daemon, "--state", "active") == []


def test_start_json_key_and_stale_after(cli_daemon):
    first = json.loads(ok(island(cli_daemon, "start", "T", "--key", "k1", "--stale-after", "600", "--json")).stdout)
    again = json.loads(ok(island(cli_daemon, "start", "T", "--key", "k1", "--json")).stdout)
    assert first["id"] == again["id"]
    assert first["content"]["staleDate"] > time.time() + 500


def test_update_reports_throttling_and_alerts(cli_daemon):
    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    replies = [json.loads(ok(island(cli_daemon, "update", id, "--state", '{"n":%d}' % n, "--json")).stdout) for n in range(3)]
    for reply in replies:
        assert set(reply["delivery"]) == {"throttled", "deliverAt", "alerted", "alertSuppressed"}
        assert reply["activity"]["id"] == id
    alerted = json.loads(ok(island(cli_daemon, "update", id, "--state", "{}", "--alert-title", "Hi", "--alert-body", "There",
                                   "--json")).stdout)
    assert alerted["delivery"]["alerted"] or alerted["delivery"]["alertSuppressed"]
    # An older timestamp is refused, by name.
    ok(island(cli_daemon, "update", id, "--state", "{}", "--timestamp", str(time.time() + 100)))
    stale = island(cli_daemon, "update", id, "--state", "{}", "--timestamp", "1")
    assert stale.returncode == 1 and "org.island.StaleTimestamp" in stale.stderr


def test_end_dismiss_policies(cli_daemon):
    a = ok(island(cli_daemon, "start", "T")).stdout.strip()
    b = ok(island(cli_daemon, "start", "T")).stdout.strip()
    ok(island(cli_daemon, "end", a, "--dismiss", "immediate"))
    ended = json.loads(ok(island(cli_daemon, "end", b, "--dismiss", "3600", "--json")).stdout)
    assert ended["dismissAt"] == pytest.approx(time.time() + 3600, abs=60)
    assert island(cli_daemon, "end", b, "--dismiss", "sometime").returncode == 2
    gone = island(cli_daemon, "update", a, "--state", "{}")
    assert gone.returncode == 1 and "org.island." in gone.stderr


def test_refused_call_exits_1_with_the_name_and_a_hint(cli_daemon):
    big = json.dumps({"blob": "x" * 5000})
    result = island(cli_daemon, "start", "T", "--attributes", big)
    assert result.returncode == 1
    assert "org.island.AttributesTooLarge" in result.stderr
    assert "hint:" in result.stderr
    result = island(cli_daemon, "start", "T", "--attributes", big, "--json")
    error = json.loads(result.stdout)
    assert error["error"] == "org.island.AttributesTooLarge"
    assert error["parameters"]["limit"] == 4096 and error["parameters"]["size"] > 5000
    # An app without a manifest is unentitled.
    result = island(cli_daemon, "list", "--app", "org.example.Nobody")
    assert result.returncode == 1 and "org.island.Unentitled" in result.stderr


def test_a_refusal_names_the_app_and_its_hints_repeat_the_app(cli_daemon):
    """Started with --app, updated without it: the refusal says which app was asked, and the
    hints carry the --app to give, so `island list` does not list another app's."""
    id = ok(island(cli_daemon, "start", "Order", "--app", "org.example.Coffee")).stdout.strip()
    result = island(cli_daemon, "update", id, "--state", "{}")
    assert result.returncode == 1
    assert "no activity %s of org.island.cli" % id in result.stderr, result.stderr
    assert "same --app" in result.stderr, result.stderr
    result = island(cli_daemon, "update", "not-an-id", "--state", "{}", "--app", "org.example.Coffee")
    assert "no activity not-an-id of org.example.Coffee" in result.stderr, result.stderr
    assert "`island list --app org.example.Coffee`" in result.stderr, result.stderr
    ok(island(cli_daemon, "update", id, "--state", "{}", "--app", "org.example.Coffee"))


def test_refusals_are_sentences_not_json(cli_daemon):
    """NestingTooDeep, AlertTooLarge, ImplausibleTimestamp and PushUnavailable printed their
    parameters as JSON and sent the user to the daemon's log, which records no refusal."""
    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    deep = "[" * 40 + "]" * 40
    refusals = [
        (island(cli_daemon, "update", id, "--state", '{"a":%s}' % deep), "org.island.NestingTooDeep", "deep, over the limit of 32"),
        (island(cli_daemon, "update", id, "--state", "{}", "--alert-title", "x" * 2000), "org.island.AlertTooLarge",
         "bytes together, over the limit of 1024"),
        (island(cli_daemon, "update", id, "--state", "{}", "--timestamp", str(time.time() * 1000)),
         "org.island.ImplausibleTimestamp", "looks like milliseconds"),
        (island(cli_daemon, "push-token", id), "org.island.PushUnavailable", "push is not available"),
    ]
    for result, name, sentence in refusals:
        assert result.returncode == 1, result
        assert name in result.stderr and sentence in result.stderr, result.stderr
        assert "{" not in result.stderr and "log" not in result.stderr, result.stderr
        assert "hint:" in result.stderr


def test_a_desktop_entry_saying_yes_is_told_to_say_true(make_daemon):
    daemon = make_daemon(start=False)
    entry = os.path.join(daemon.share, "applications", "org.example.Yes.desktop")
    with open(entry, "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Yes\nExec=/usr/bin/false\nX-Island-LiveActivities=yes\n")
    daemon.start()
    result = island(daemon, "start", "T", "--app", "org.example.Yes")
    assert result.returncode == 1 and "org.island.Unentitled" in result.stderr
    assert "it says X-Island-LiveActivities=yes, and a desktop entry's booleans are true or false; write true" in result.stderr, \
        result.stderr


def test_auth(cli_daemon):
    info = json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)
    assert info["app"] == "org.island.cli"
    assert info["enabled"] is True
    assert info["frequentUpdates"] is True  # the CLI's manifest allows them
    assert info["limits"]["maxPayloadBytes"] == 4096
    assert "enabled:" in ok(island(cli_daemon, "auth")).stdout


class Captured:
    """A child's stdout in a file: the child appends through its own descriptor and the test
    reads through another, so reading never moves the child's write position."""

    def __init__(self):
        fd, self.path = tempfile.mkstemp(prefix="island-out-")
        os.close(fd)
        self.sink = open(self.path, "a")

    def read(self):
        with open(self.path) as f:
            return f.read()


def test_watch_prints_one_line_per_event(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    out = Captured()
    watcher = subprocess.Popen([ISLAND, "watch", "--json"], stdout=out.sink, stderr=subprocess.PIPE, env=env, text=True)
    try:
        def lines():
            # The watcher may be mid-line while we read: parse only the lines it has finished.
            complete = out.read().rpartition("\n")[0]
            return [json.loads(line) for line in complete.splitlines() if line.strip()]

        # The watch is up once the process has connected: update until an update shows.
        id = ok(island(cli_daemon, "start", "Watched", "--state", '{"n":0}')).stdout.strip()
        sent = [0]

        def seen_update():
            sent[0] += 1
            ok(island(cli_daemon, "update", id, "--state", '{"n":%d}' % sent[0]))
            return any(e.get("activity", {}).get("id") == id and e["kind"] == "content"
                       and e["activity"]["deliveredContent"]["state"].get("n", 0) >= 1 for e in lines())
        wait_for(seen_update, interval=0.3, message="a content event")
        assert all(e["kind"] in ("state", "content", "tap", "button", "authorization", "resync") for e in lines())
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=LIVENESS)


def test_watch_says_when_do_not_disturb_changes(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    out = Captured()
    watcher = subprocess.Popen([ISLAND, "watch"], stdout=out.sink, stderr=subprocess.PIPE, env=env, text=True)
    try:
        # The watch is up once the process has connected: switch until a change shows.
        def seen_focus():
            ok(island(cli_daemon, "admin", "focus", "off"))
            ok(island(cli_daemon, "admin", "focus", "on"))
            return re.search(r" focus on since \d{4}-", out.read()) is not None
        wait_for(seen_focus, interval=0.3, message="a focus line")
        ok(island(cli_daemon, "admin", "focus", "off"))
        wait_for(lambda: out.read().rstrip().endswith(" focus off"), interval=0.1, message="focus off")
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=LIVENESS)


def test_watch_text_filters_by_id(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    keep = ok(island(cli_daemon, "start", "T")).stdout.strip()
    other = ok(island(cli_daemon, "start", "T")).stdout.strip()
    out = Captured()
    watcher = subprocess.Popen([ISLAND, "watch", keep], stdout=out.sink, stderr=subprocess.PIPE, env=env, text=True)
    try:
        # A new state each round: an update that changes nothing is no content event, so a
        # watcher that subscribed after the first round would have had nothing more to see.
        rounds = itertools.count()

        def seen():
            n = next(rounds)
            ok(island(cli_daemon, "update", other, "--state", '{"o":%d}' % n))
            ok(island(cli_daemon, "update", keep, "--state", '{"k":%d}' % n))
            return "content " + keep in out.read()
        wait_for(seen, interval=0.3, message="a content line")
        assert other not in out.read()
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=LIVENESS)


# --- run, progress, timer -------------------------------------------------------------------


def test_run_passes_the_exit_status_through_and_ends_failed(cli_daemon):
    result = island(cli_daemon, "run", "--title", "Fails", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert result.returncode == 3
    assert "out" in result.stdout and "err" in result.stderr
    [a] = activities(cli_daemon, "--type", "Command", "--state", "ended")
    assert a["attributes"] == {"title": "Fails", "command": "sh -c 'echo out; echo err >&2; exit 3'"}
    assert a["content"]["state"]["status"] == "failed"
    assert a["content"]["state"]["exitStatus"] == 3
    # What the card shows after "Failed" (the default layout once hid the exit status).
    assert a["content"]["state"]["outcome"] == "Exit status 3"
    assert a["content"]["state"]["duration"] >= 0


def test_run_true_ends_succeeded(cli_daemon):
    ok(island(cli_daemon, "run", "--", "true"))
    [a] = activities(cli_daemon, "--type", "Command", "--state", "ended")
    assert a["content"]["state"]["status"] == "succeeded" and a["content"]["state"]["exitStatus"] == 0
    assert a["attributes"]["title"] == "true"


def test_run_reports_a_killing_signal_as_128_plus_n(cli_daemon):
    result = island(cli_daemon, "run", "--", "sh", "-c", "kill -TERM $$")
    assert result.returncode == 128 + signal.SIGTERM
    [a] = activities(cli_daemon, "--type", "Command", "--state", "ended")
    assert a["content"]["state"]["exitStatus"] == 128 + signal.SIGTERM
    assert a["content"]["state"]["outcome"] == "Killed by SIGTERM"


def test_run_shows_running_while_the_command_runs(cli_daemon, tmp_path):
    go = tmp_path / "go"
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    runner = subprocess.Popen([ISLAND, "run", "--", "sh", "-c", "while [ ! -e %s ]; do sleep 0.05; done" % go], env=env)
    try:
        running = wait_for(lambda: activities(cli_daemon, "--type", "Command", "--state", "active"), message="a running activity")
        assert running[0]["content"]["state"]["status"] == "running"
        assert running[0]["content"]["state"]["startedAt"] == pytest.approx(time.time(), abs=60)
        go.touch()
        assert runner.wait(timeout=LIVENESS) == 0
    finally:
        go.touch()
        if runner.poll() is None:
            runner.kill()


def test_run_passes_on_the_descriptors_it_was_given_and_none_of_its_own(cli_daemon):
    """Like a shell, `island run` hands the command what it inherited beyond 0-2 (make's
    jobserver pipes, `3>file`), but none of the descriptors it opened itself (its event loops,
    its connection to the daemon)."""
    read, write = os.pipe()
    try:
        env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
        result = subprocess.run([ISLAND, "run", "--", "sh", "-c", "ls /proc/$$/fd"], env=env, pass_fds=(write,),
                                capture_output=True, text=True, timeout=30)
    finally:
        os.close(read)
        os.close(write)
    assert result.returncode == 0, result.stderr
    # The listing's own directory descriptor is sh's `ls`'s, not in /proc/$$ (sh's own fds).
    assert sorted(int(fd) for fd in result.stdout.split()) == sorted({0, 1, 2, write})


def test_run_without_a_daemon_still_runs_the_command():
    result = island(None, "run", "--", "sh", "-c", "echo ran; exit 4")
    assert result.returncode == 4
    assert "ran" in result.stdout
    assert "warning" in result.stderr


def test_progress_follows_percentages_and_counts(cli_daemon):
    result = ok(island(cli_daemon, "progress", "--title", "Build", stdin="starting\n10%\nhalf 50 %\n3/4\n"))
    assert result.stdout == "starting\n10%\nhalf 50 %\n3/4\n"
    [a] = activities(cli_daemon, "--type", "Progress", "--state", "ended")
    assert a["attributes"] == {"title": "Build"}
    state = a["content"]["state"]
    # Reading stdin, island cannot know how the writer ended: no "succeeded".
    assert (state["value"], state["total"], state["status"]) == (3, 4, "finished")


def test_progress_from_a_failing_pipe_claims_no_success(cli_daemon):
    """The misleading case: the command before the pipe fails, which island cannot see."""
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    result = subprocess.run(["sh", "-c", "sh -c 'echo 50%; exit 1' | \"$0\" progress --title t", ISLAND],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "50%\n", result.stderr
    [a] = activities(cli_daemon, "--type", "Progress", "--state", "ended")
    assert a["content"]["state"]["status"] == "finished"


def test_progress_runs_the_command_and_ends_as_it_ended(cli_daemon):
    """`island progress -- CMD`: the command's output is read for progress and copied as it came (a
    carriage return ends a line), its standard error is its own, and the activity and island's exit
    status say how it ended."""
    def run(title, script):
        # Bytes: text mode would read the carriage return as a line break.
        result = island(cli_daemon, "progress", "--title", title, "--", "sh", "-c", script, text=False)
        [a] = [a for a in activities(cli_daemon, "--type", "Progress", "--state", "ended") if a["attributes"]["title"] == title]
        return result, a["content"]["state"]

    result, state = run("ok", "printf 'a 10%%\\rb 2/4\\n'; echo err >&2")
    assert result.returncode == 0
    assert result.stdout == b"a 10%\rb 2/4\n" and result.stderr == b"err\n"
    assert state == {"value": 2, "total": 4, "status": "succeeded"}

    result, state = run("three", "echo 30%; exit 3")
    assert result.returncode == 3 and result.stdout == b"30%\n"
    assert state == {"value": 30, "total": 100, "status": "failed", "outcome": "Exit status 3"}

    result, state = run("killed", "echo 70%; kill -TERM $$")
    assert result.returncode == 128 + signal.SIGTERM
    assert state == {"value": 70, "total": 100, "status": "failed", "outcome": "Killed by SIGTERM"}

    # The title defaults to the command; --title or a command is needed.
    ok(island(cli_daemon, "progress", "--", "true"))
    assert any(a["attributes"]["title"] == "true" for a in activities(cli_daemon, "--type", "Progress"))
    assert island(cli_daemon, "progress").returncode == 2


def test_owner_gone_reaches_the_daemon(cli_daemon):
    """`--owner-gone` on start, run and progress, as the wire names the policy."""
    stale = json.loads(ok(island(cli_daemon, "start", "Copy", "--owner-gone", "stale", "--json")).stdout)
    assert stale["ownerGone"] == "stale"
    assert json.loads(ok(island(cli_daemon, "start", "Copy", "--json")).stdout)["ownerGone"] == "keep"
    # end: the app's last connection was start's own, so the activity ends as start returns.
    ended = json.loads(ok(island(cli_daemon, "start", "Copy", "--owner-gone", "end", "--json")).stdout)
    wait_for(lambda: activity(cli_daemon, ended["id"])["state"] == "ended", message="ended when start returned")
    assert activity(cli_daemon, ended["id"])["endReason"] == "ownerGone"
    ran = json.loads(ok(island(cli_daemon, "run", "--owner-gone", "keep", "--json", "--", "true")).stdout)
    assert ran["ownerGone"] == "keep"
    ok(island(cli_daemon, "progress", "--owner-gone", "stale", "--title", "p", stdin="1%\n"))
    assert [a["ownerGone"] for a in activities(cli_daemon, "--type", "Progress", "--state", "ended")] == ["stale"]
    assert island(cli_daemon, "start", "Copy", "--owner-gone", "never").returncode == 2


def test_timer_ends_by_itself(cli_daemon):
    result = ok(island(cli_daemon, "timer", "2s", "Tea", "--json"))
    started = json.loads(result.stdout.splitlines()[0])
    assert started["type"] == "Timer" and started["attributes"] == {"title": "Tea", "duration": 2}
    assert started["content"]["state"]["paused"] is False
    [a] = activities(cli_daemon, "--type", "Timer", "--state", "ended")
    assert a["id"] == started["id"]
    assert a["content"]["state"]["done"] is True
    assert "Tea" in result.stderr


def test_timer_interrupted_ends_and_dismisses(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    timer = subprocess.Popen([ISLAND, "timer", "10m", "Long"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, env=env, text=True)
    try:
        id = timer.stdout.readline().strip()
        assert activity(cli_daemon, id)["state"] == "active"
        timer.send_signal(signal.SIGINT)
        assert timer.wait(timeout=LIVENESS) == 130
        assert all(a["id"] != id or a["state"] == "dismissed"
                   for a in activities(cli_daemon, "--state", "active", "ended", "dismissed"))
    finally:
        if timer.poll() is None:
            timer.kill()


def test_timer_rejects_a_bad_duration():
    assert island(None, "timer", "soon").returncode == 2
    # Past what a timer shows: refused, not a crash in the countdown.
    for duration in ("inf", "1e300", "99999999999h"):
        assert island(None, "timer", duration).returncode == 2


# --- extension and admin ------------------------------------------------------------------

VALID_LAYOUT = {
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.eta}} min"},
    "minimal": {"type": "progress", "value": "{{state.done}}", "total": 10},
    "lockScreen": {"type": "vstack", "children": [
        {"type": "text", "template": "{{attributes.shop}} <order> & co"},
        {"type": "progress", "value": "{{state.done}}", "total": 10}]},
    "expanded": {
        "leading": {"type": "symbol", "name": "☕", "priority": 1},
        "center": {"type": "text", "template": "Brewing", "priority": 2},
        "trailing": {"type": "timer", "to": "{{state.endsAt}}", "priority": 1},
        "bottom": {"type": "hstack", "priority": 0, "children": [
            {"type": "button", "action": "cancel", "label": "Cancel"}, {"type": "spacer"},
            {"type": "text", "template": "{{state.eta}} min"}]},
    },
    "keylineTint": "#6F4E37",
    "chip": "Coffee",
}
INVALID_LAYOUT = {"compactLeading": {"type": "bogus"}}


def write(tmp_path, name, value):
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return str(path)


def test_extension_register_list_remove(cli_daemon, tmp_path):
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    ok(island(cli_daemon, "extension", "register", layout, "--type", "Coffee"))
    assert "Coffee" in ok(island(cli_daemon, "extension", "list")).stdout
    listed = json.loads(ok(island(cli_daemon, "extension", "list", "--json")).stdout)
    assert listed[0]["type"] == "Coffee" and listed[0]["layout"]["chip"] == "Coffee"
    bad = island(cli_daemon, "extension", "register", write(tmp_path, "bad.json", INVALID_LAYOUT), "--type", "Bad")
    assert bad.returncode == 1
    assert "org.island.InvalidLayout" in bad.stderr and "compactLeading.type" in bad.stderr
    ok(island(cli_daemon, "extension", "remove", "--type", "Coffee"))
    assert json.loads(ok(island(cli_daemon, "extension", "list", "--json")).stdout) == []


def test_a_file_named_on_the_command_line_may_be_a_pipe_and_is_bounded(cli_daemon, tmp_path):
    """A layout or a password file the user names is theirs to give as they like: a pipe
    (`/dev/stdin`, `<(...)`) is read as the file it stands for. Foundation refused every pipe
    and device as "You don't have permission"; /dev/zero is refused by size now, not read."""
    registered = island(cli_daemon, "extension", "register", "/dev/stdin", "--type", "Coffee", stdin=json.dumps(VALID_LAYOUT))
    ok(registered)
    assert json.loads(ok(island(cli_daemon, "extension", "list", "--json")).stdout)[0]["type"] == "Coffee"
    preview = ok(island(None, "preview", "/dev/stdin", "--mode", "compact", stdin=json.dumps(VALID_LAYOUT)))
    assert preview.stdout.startswith("compact\n"), preview.stdout
    for command in (("preview", "/dev/zero"), ("extension", "register", "/dev/zero", "--type", "Zero")):
        refused = island(cli_daemon, *command)
        assert refused.returncode == 2, refused.stderr
        assert "cannot read the layout /dev/zero: larger than 1048576 bytes" in refused.stderr, refused.stderr


@pytest.mark.slow  # `island channel` retries a refused broker for 10 s
def test_a_password_file_named_on_the_command_line_may_be_a_pipe():
    """As a layout (above): a password file given as `/dev/stdin` is read as the file it stands
    for. The password file is read before the broker is asked: here, none listens."""
    pushed = island(None, "channel", "list", "--app", "org.example.Scores", "--password-file", "/dev/stdin",
                    "--broker", "mqtt://127.0.0.1:1", stdin="secret\n")
    assert pushed.returncode == 69 and "BrokerUnavailable" in pushed.stderr, pushed.stderr


def test_admin_commands(cli_daemon):
    status = json.loads(ok(island(cli_daemon, "admin", "status", "--json")).stdout)
    assert status["scope"] == "user" and "limits" in status
    assert "version:" in ok(island(cli_daemon, "admin", "status")).stdout
    apps = json.loads(ok(island(cli_daemon, "admin", "apps", "--json")).stdout)
    assert "org.island.cli" in [a["id"] for a in apps["apps"]]
    assert "org.island.cli" in ok(island(cli_daemon, "admin", "apps")).stdout

    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    ok(island(cli_daemon, "admin", "disable", "org.island.cli"))
    denied = island(cli_daemon, "start", "T")
    assert denied.returncode == 1 and "org.island.Denied" in denied.stderr and "island admin enable" in denied.stderr
    assert json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)["enabled"] is False
    assert activity(cli_daemon, id)["state"] in ("ended", "dismissed")
    ok(island(cli_daemon, "admin", "enable", "org.island.cli"))
    ok(island(cli_daemon, "start", "T"))

    ok(island(cli_daemon, "admin", "frequent-updates", "org.island.cli", "off"))
    assert json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)["frequentUpdates"] is False
    ok(island(cli_daemon, "admin", "frequent-updates", "org.island.cli", "on"))
    assert island(cli_daemon, "admin", "frequent-updates", "org.island.cli", "maybe").returncode == 2
    refused = island(cli_daemon, "admin", "frequent-updates", "org.example.Coffee", "on")
    assert refused.returncode == 1 and "org.island.Unentitled" in refused.stderr

    ok(island(cli_daemon, "admin", "disable"))
    assert json.loads(ok(island(cli_daemon, "admin", "apps", "--json")).stdout)["enabled"] is False
    ok(island(cli_daemon, "admin", "enable"))
    ok(island(cli_daemon, "admin", "reload"))


def test_admin_focus_silences_alerts_and_the_update_says_so(cli_daemon):
    assert "Do Not Disturb" in ok(island(None, "admin", "focus", "--help")).stdout
    assert island(cli_daemon, "admin", "focus", "maybe").returncode == 2
    assert ok(island(cli_daemon, "admin", "focus", "status")).stdout == "Do Not Disturb: off\n"
    assert json.loads(ok(island(cli_daemon, "admin", "focus", "status", "--json")).stdout) == {"on": False}

    assert ok(island(cli_daemon, "admin", "focus", "on")).stdout.startswith("Do Not Disturb: on since ")
    focus = json.loads(ok(island(cli_daemon, "admin", "focus", "status", "--json")).stdout)
    assert focus["on"] is True and focus["since"] == pytest.approx(time.time(), abs=60)

    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    reply = json.loads(ok(island(cli_daemon, "update", id, "--state", '{"n":1}', "--alert-title", "Hi", "--json")).stdout)
    assert reply["delivery"]["alerted"] is False
    assert reply["delivery"]["alertSuppressed"] is True and reply["delivery"]["alertSuppressedReason"] == "focus"
    assert reply["activity"]["content"]["state"] == {"n": 1}
    text = ok(island(cli_daemon, "update", id, "--state", '{"n":2}', "--alert-title", "Hi")).stdout
    assert "alert suppressed: Do Not Disturb is on" in text
    assert json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)["remainingAlerts"] == 6

    assert ok(island(cli_daemon, "admin", "focus", "off")).stdout == "Do Not Disturb: off\n"
    reply = json.loads(ok(island(cli_daemon, "update", id, "--state", '{"n":3}', "--alert-title", "Hi", "--json")).stdout)
    assert reply["delivery"]["alerted"] is True and "alertSuppressedReason" not in reply["delivery"]


# --- preview --------------------------------------------------------------------------------

MODES = ("compact", "minimal", "expanded", "lockscreen")
SAMPLE_STATE = json.dumps({"eta": 7, "done": 4, "endsAt": 1_700_000_300})


def test_preview_renders_every_mode_as_text(tmp_path):
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    compact = ok(island(None, "preview", layout, "--attributes", '{"shop":"Blue"}', "--state", SAMPLE_STATE,
                        "--mode", "compact")).stdout
    assert "leading:" in compact and "☕" in compact and "7 min" in compact
    expanded = json.loads(ok(island(None, "preview", layout, "--state", SAMPLE_STATE, "--mode", "expanded",
                                    "--now", "1700000000", "--json")).stdout)
    assert expanded["regions"]["trailing"] == "5:00"
    assert expanded["regions"]["center"] == "Brewing"
    minimal = json.loads(ok(island(None, "preview", layout, "--state", SAMPLE_STATE, "--mode", "minimal", "--json")).stdout)
    assert minimal["regions"]["minimal"] == "40%"
    lock = ok(island(None, "preview", layout, "--attributes", '{"shop":"Blue"}', "--state", SAMPLE_STATE,
                     "--mode", "lockscreen")).stdout
    assert "Blue <order> & co" in lock
    assert island(None, "preview", layout, "--mode", "sideways").returncode == 2


def test_preview_of_an_invalid_layout_prints_path_and_reason(tmp_path):
    result = island(None, "preview", write(tmp_path, "bad.json", INVALID_LAYOUT), "--mode", "compact")
    assert result.returncode == 1
    assert "compactLeading.type:" in result.stderr
    (tmp_path / "broken.json").write_text("{")
    assert island(None, "preview", str(tmp_path / "broken.json")).returncode == 1


@pytest.mark.parametrize("mode", MODES)
def test_preview_svg_is_well_formed_and_renders(tmp_path, mode):
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    svg = tmp_path / ("%s.svg" % mode)
    ok(island(None, "preview", layout, "--attributes", '{"shop":"Blue"}', "--state", SAMPLE_STATE,
              "--mode", mode, "--svg", str(svg)))
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.find("{http://www.w3.org/2000/svg}title").text == "Island: " + {"lockscreen": "none"}.get(mode, mode)
    # The keyline, as cairo writes a stroke's colour (percentages): the overlay's quiet line,
    # mostly white with 10 % of the layout's tint #6f4e37 (OverlayStyle.keyline); not on the
    # lock screen, whose card has none.
    strokes = [tuple(float(p) * 255 / 100 for p in colour)
               for colour in re.findall(r"stroke:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", svg.read_text())]
    keyline = tuple(255 * 0.9 + 0.1 * c for c in (0x6f, 0x4e, 0x37))
    if mode != "lockscreen":
        assert any(max(abs(a - b) for a, b in zip(c, keyline)) < 0.5 for c in strokes), strokes
    assert root.find(".//{http://www.w3.org/2000/svg}text") is None  # glyph outlines, not text
    lines = (root.find("{http://www.w3.org/2000/svg}desc").text or "").split("\n")
    if mode == "lockscreen":
        assert "Blue <order> & co" in lines
    if shutil.which("rsvg-convert"):
        png = tmp_path / ("%s.png" % mode)
        subprocess.run(["rsvg-convert", str(svg), "-o", str(png)], check=True, timeout=30)
        assert png.stat().st_size > 0


def test_preview_svg_without_the_overlay_package_names_it(tmp_path):
    """`island` draws no SVG itself: without island-overlay (its package) beside it, in /usr/bin
    or on PATH, --svg says which package to install and exits with status 69, and writes
    nothing."""
    alone = tmp_path / "bin"
    alone.mkdir()
    shutil.copy(ISLAND, alone / "island")
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    result = subprocess.run(without_installed(["/usr/bin/island-overlay"],
                                              [str(alone / "island"), "preview", layout, "--svg", str(tmp_path / "x.svg")]),
                            capture_output=True, text=True, timeout=30, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert result.returncode == 69, result.stderr
    assert "apt install island-overlay" in result.stderr
    assert not (tmp_path / "x.svg").exists()


def test_timer_pauses_and_resumes_from_a_terminal(cli_daemon):
    import pty
    master, slave = pty.openpty()
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    # The timer's ten minutes run from its start, after `started`; paused before `paused_by`, it
    # has what is left of them then (rounded to a tenth): bounds measured, so that a slow machine
    # widens them by as much as it is slow (it had asked for 590 s or more, ten seconds of it).
    started = time.time()
    timer = subprocess.Popen([ISLAND, "timer", "10m", "Paused"], stdin=slave, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env, text=True)
    os.close(slave)
    try:
        id = timer.stdout.readline().strip()
        os.write(master, b"p\n")
        paused = wait_for(lambda: (lambda s: s if s.get("paused") is True else None)(activity(cli_daemon, id)["content"]["state"]),
                          message="a paused state")
        paused_by = time.time()
        assert 600 - (paused_by - started) - 0.1 <= paused["remaining"] <= 600, (paused, paused_by - started)
        # Resumed, it ends that much after the resumption.
        resuming = time.time()
        os.write(master, b"p\n")
        resumed = wait_for(lambda: (lambda s: s if s.get("paused") is False else None)(activity(cli_daemon, id)["content"]["state"]),
                           message="a resumed state")
        assert resuming + paused["remaining"] - 0.1 <= resumed["endsAt"] <= time.time() + paused["remaining"] + 0.1, \
            (resumed, paused, resuming)
        timer.send_signal(signal.SIGINT)
        assert timer.wait(timeout=LIVENESS) == 130
    finally:
        os.close(master)
        if timer.poll() is None:
            timer.kill()
