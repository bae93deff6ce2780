"""The processes a test starts: finding them, stopping them, reading their memory and logs,
and waiting for a condition with a liveness bound."""

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from harness.paths import LIVENESS, SANITIZER_LOGS


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


def children_of(pid):
    """The pids of `pid`'s direct children. Each thread lists its own (a process started from
    a thread that is not the main one is listed under its main thread only once that thread
    has exited), and threads come and go while they are read: one gone is skipped."""
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return []
    children = []
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                children += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return children


def descendants(pid=None):
    """Every live process below `pid` (this test runner by default), by pid."""
    found, pending = set(), [pid or os.getpid()]
    while pending:
        for child in children_of(pending.pop()):
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


def runnable_seconds_by_thread(pid):
    """Each of `pid`'s threads' seconds on a CPU and waiting in the run queue for one, so far
    (/proc/PID/task/TID/schedstat), by thread id; empty once the process is gone. A thread that
    wants the CPU adds to it at the wall clock's pace however busy the machine; one that sleeps
    adds nothing. (Its CPU time, by contrast, is the scheduler's to give: a spinning thread gets
    a tenth of a CPU at a load of 20 on two.)"""
    times = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return times
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                ran, waited = f.read().split()[:2]
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
        times[tid] = (int(ran) + int(waited)) / 1e9
    return times


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


def wait_for(predicate, timeout=LIVENESS, interval=0.02, message="condition"):
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


def accepting(path):
    """Whether the Unix socket at `path` takes connections. Its file exists from bind(), a moment
    before listen(): a client connecting in between is refused, and a busy machine can make that
    moment long. Readiness is a connection, not the file."""
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def without_installed(paths, argv):
    """`argv` run so that none of `paths` (a program a package installs, such as
    /usr/bin/island-overlay) is there for it: in a mount namespace of its own with /dev/null,
    which is no program, bound over each one that exists. A test of what happens without a
    package thus means the same on a machine that has the package installed. Needs root, as
    the suite runs in CI; where nothing is installed, `argv` as it is."""
    present = [path for path in paths if os.path.lexists(path)]
    if not present:
        return list(argv)
    binds = " && ".join('mount --bind /dev/null "%s"' % path for path in present)
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", binds + ' && exec "$@"', "sh", *argv]
