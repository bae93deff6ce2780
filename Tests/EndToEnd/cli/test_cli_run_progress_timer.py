"""End-to-end tests of the `island` commands that wrap a command or a clock against the real
islandd: `island run`, `island progress` and `island timer`."""

import json
import os
import signal
import subprocess
import time

import pytest

from harness.cli import activities, activity, island, ok
from harness.paths import ISLAND, LIVENESS
from harness.processes import wait_for

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

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
