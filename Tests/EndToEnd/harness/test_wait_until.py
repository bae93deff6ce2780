"""desktop.wait_until's `working=`: a program still working towards what is awaited (a GNOME
Shell starting on a loaded machine) gets more time, a hung one does not."""

import os
import subprocess
import sys
import time

import pytest

from harness import desktop

# A child that works (burns CPU) until it has spent SECONDS of it, then writes FLAG.
WORKER = """
import sys, time
seconds, flag = float(sys.argv[1]), sys.argv[2]
while time.process_time() < seconds:
    pass
open(flag, "w").close()
time.sleep(60)
"""


def child(tmp_path, cpu_seconds):
    flag = tmp_path / "done"
    process = subprocess.Popen([sys.executable, "-c", WORKER, str(cpu_seconds), str(flag)])
    return process, flag


def test_a_program_that_works_gets_more_time(tmp_path, monkeypatch):
    # A working child spends more than this (one clock tick of /proc's) in each round of a second
    # unless it gets under 1 % of a CPU, which no load here comes near (rounds of 0.5 s asked
    # for 2 %): it is given rounds until it is done (its work is 2 rounds' worth of CPU even on
    # an idle machine).
    monkeypatch.setattr(desktop, "WORKING_CPU", 0.01)
    monkeypatch.setattr(desktop, "WORKING_ROUNDS", 1000)
    process, flag = child(tmp_path, 2.0)
    try:
        started = time.monotonic()
        assert desktop.wait_until(flag.exists, 1.0, "the worker done", working=process.pid)
        assert time.monotonic() - started > 1.0, "it was done before the first deadline: nothing was tested"
    finally:
        process.kill()
        process.wait()


def test_a_program_that_sleeps_gets_no_more_time(tmp_path):
    # Its work never ends, but it sleeps: the first deadline is the last.
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.2)  # past the interpreter's own start-up CPU
        with pytest.raises(TimeoutError, match="never not reached within 0.5s"):
            desktop.wait_until(lambda: False, 0.5, "never", working=process.pid)
    finally:
        process.kill()
        process.wait()


def test_a_program_that_works_forever_is_given_up_on(tmp_path, monkeypatch):
    # Rounds of a second, as above: one round more, and no more.
    monkeypatch.setattr(desktop, "WORKING_CPU", 0.01)
    monkeypatch.setattr(desktop, "WORKING_ROUNDS", 2)
    process, flag = child(tmp_path, 1e9)
    try:
        with pytest.raises(TimeoutError, match="the worker done not reached within 2.0s"):
            desktop.wait_until(flag.exists, 1.0, "the worker done", working=process.pid)
    finally:
        process.kill()
        process.wait()


def test_a_gone_program_counts_as_none():
    assert desktop.process_cpu_seconds(None) == 0.0
    assert desktop.process_cpu_seconds(2 ** 22 + 1) == 0.0  # above pid_max's default: no such process
    assert desktop.process_cpu_seconds(os.getpid()) > 0.0
