"""desktop.wait_until's `working=`: a program still working towards what is awaited (a GNOME
Shell starting on a loaded machine) gets more time, a hung one does not."""

import os
import subprocess
import sys
import time

import pytest

from harness import desktop
from harness.paths import LIVENESS

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


class Worker:
    """A program's running and waiting time as wait_until reads it, without a program: each
    reading is `per` seconds more than the one before, as a program that works is. (The rule's
    arithmetic on a stand-in; what a real program's reading is, is tested below.)"""

    def __init__(self, per):
        self.per, self.spent, self.readings = per, 0.0, 0

    def __call__(self, pid):
        assert pid == 4242
        self.readings += 1
        self.spent += self.per
        return self.spent


def test_a_program_that_works_gets_more_time(monkeypatch):
    worker = Worker(per=0.02)
    monkeypatch.setattr(desktop, "process_runnable_seconds", worker)
    monkeypatch.setattr(desktop, "WORKING_SECONDS", 0.01)
    monkeypatch.setattr(desktop, "WORKING_ROUNDS", 1000)
    # Done once it has been given three more rounds (a reading at the start, one per deadline).
    assert desktop.wait_until(lambda: worker.readings >= 4, 0.1, "the worker done", working=4242)


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


def test_a_program_that_works_forever_is_given_up_on(monkeypatch):
    monkeypatch.setattr(desktop, "process_runnable_seconds", Worker(per=1.0))
    monkeypatch.setattr(desktop, "WORKING_SECONDS", 0.01)
    with pytest.raises(TimeoutError, match="the worker done not reached within 0.4s"):
        desktop.wait_until(lambda: False, 0.1, "the worker done", working=4242)


def test_what_is_reached_as_the_deadline_passes_is_reached():
    # The look after the deadline: the first look fails, the deadline (0 s) has passed, the
    # second look, before any TimeoutError, finds it.
    looks = []
    assert desktop.wait_until(lambda: looks.append(1) or len(looks) >= 2, 0, "the second look") is True


def test_a_real_program_that_works_is_read_as_working(tmp_path):
    # process_runnable_seconds reads a real program's time on and waiting for a CPU, which grows
    # while it works.
    process, _ = child(tmp_path, 1e9)
    try:
        first = desktop.process_runnable_seconds(process.pid)
        desktop.wait_until(lambda: desktop.process_runnable_seconds(process.pid) > first, LIVENESS, "time running")
    finally:
        process.kill()
        process.wait()


def test_a_program_starved_of_the_cpu_is_read_as_working_all_the_time(tmp_path):
    # Three programs that spin, all on one CPU: each gets a third of it at most, but each wants
    # it all the time, so its time running or waiting grows as the wall clock does. (Its CPU
    # time, what wait_until read before, grows a third as fast here, and next to nothing at a
    # load of 25: a starved GNOME Shell was taken for hung.)
    cpu = min(os.sched_getaffinity(0))
    spinners = []
    try:
        for n in range(3):
            (tmp_path / str(n)).mkdir()
            spinner, _ = child(tmp_path / str(n), 1e9)
            spinners.append(spinner)
            os.sched_setaffinity(spinner.pid, {cpu})
        watched = spinners[0].pid
        time.sleep(0.2)  # past the interpreter's own start-up, which may wait for its files
        before, started = desktop.process_runnable_seconds(watched), time.monotonic()
        time.sleep(1.0)
        grew, passed = desktop.process_runnable_seconds(watched) - before, time.monotonic() - started
        # Never asleep: more than any third of a CPU could give it, whatever else runs there.
        assert grew >= 0.5 * passed, "ran or waited %.2f s of %.2f s" % (grew, passed)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_a_gone_program_counts_as_none():
    assert desktop.process_runnable_seconds(None) == 0.0
    assert desktop.process_runnable_seconds(2 ** 22 + 1) == 0.0  # above pid_max's default: no such process
    assert desktop.process_runnable_seconds(os.getpid()) > 0.0
