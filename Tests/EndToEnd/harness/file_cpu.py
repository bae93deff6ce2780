"""What each test file costs in CPU, every process it started included: a pytest plugin,
on when ISLAND_FILE_CPU=FILE is set (`ISLAND_FILE_CPU=/tmp/cpu python3 -m pytest -n 5
--dist loadfile Tests/EndToEnd`): FILE gets one line per test file, `path<TAB>CPU seconds<TAB>
wall seconds<TAB>how it was counted`, and `python3 Tests/EndToEnd/harness/file_cpu.py FILE...`
ranks them (the mean of several runs). FILE.tests gets each test's CPU seconds, its file's
module-scoped set-up counted in its first test and the teardown in its last.

Wall time on a busy machine says little about what a file costs; CPU seconds do. A file's
processes are counted by a cgroup of its own (cgroup v1 `cpuacct`, as root) that the worker
joins when the file starts: what the worker forks from then on is born in it, a daemon that
double-forks away from its parent or a compositor's helper included, and what a wider-scoped
fixture started earlier stays where it was. Where no such cgroup can be made, the worker's own
CPU and its waited-for children's (getrusage) are counted instead, which misses whatever was
not waited for by its parent."""

import os
import resource
import time

import pytest

CPUACCT = "/sys/fs/cgroup/cpuacct"
OUTPUT = os.environ.get("ISLAND_FILE_CPU")
COUNTED = "ISLAND_FILE_CPU_COUNTED"


def rusage_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class FileCPU:
    def __init__(self, config):
        self.config = config
        self.root = os.path.join(CPUACCT, "island-file-cpu-%d" % os.getpid())
        try:
            os.makedirs(self.root, exist_ok=True)
        except OSError:
            self.root = None
        self.groups = []
        self.path = None

    def start(self, path):
        self.path = path
        self.wall = time.monotonic()
        self.group = None
        if self.root:
            group = os.path.join(self.root, str(len(self.groups)))
            try:
                os.mkdir(group)
                self.groups.append(group)
                with open(os.path.join(group, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
                self.group = group
            except OSError:
                pass
        self.rusage = rusage_seconds()

    def used(self):
        """CPU seconds of the file so far, and how they were counted."""
        if self.group:
            with open(os.path.join(self.group, "cpuacct.usage")) as f:
                return int(f.read()) / 1e9, "cgroup"
        return rusage_seconds() - self.rusage, "rusage"

    def end(self):
        wall = time.monotonic() - self.wall
        cpu, how = self.used()
        with open(OUTPUT, "a") as f:
            f.write("%s\t%.2f\t%.2f\t%s\n" % (self.path, cpu, wall, how))
        self.path = None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if not OUTPUT:
        return (yield)
    global COUNTER
    if COUNTER is None:
        if os.environ.get(COUNTED):
            # A pytest that a counted test started (pytester): its CPU is that file's.
            return (yield)
        os.environ[COUNTED] = "1"
        COUNTER = FileCPU(item.config)
    counter = COUNTER
    if counter.config is not item.config:
        # A test that runs pytest inside this process (pytester): its tests are its file's.
        return (yield)
    path = item.nodeid.split("::", 1)[0]
    if counter.path != path:
        counter.start(path)
    before = counter.used()[0]
    try:
        return (yield)
    finally:
        # Each test's own share too, its module's set-up in the first (FILE.tests).
        with open(OUTPUT + ".tests", "a") as f:
            f.write("%s\t%.2f\n" % (item.nodeid, counter.used()[0] - before))
        # After the file's last test its module-scoped fixtures have been torn down too.
        if nextitem is None or nextitem.nodeid.split("::", 1)[0] != path:
            counter.end()


def pytest_unconfigure(config):
    """The worker leaves its last file's cgroup, and the empty ones go."""
    counter = COUNTER
    if not counter or counter.config is not config or not counter.root:
        return
    try:
        with open(os.path.join(CPUACCT, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        for group in counter.groups:
            os.rmdir(group)
        os.rmdir(counter.root)
    except OSError:
        pass  # a process still running in one; the next run's groups are new ones


# The one counter of this process, made by its outermost pytest run.
COUNTER = None


def rank(paths):
    """The files, costliest first: mean CPU and wall seconds over the runs in `paths`."""
    runs = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                name, cpu, wall, _ = line.rstrip("\n").split("\t")
                runs.setdefault(name, []).append((float(cpu), float(wall)))
    total = sum(sum(c for c, _ in r) / len(r) for r in runs.values())
    print("| file | CPU s | wall s | runs |\n|---|---:|---:|---:|")
    for name, r in sorted(runs.items(), key=lambda kv: -sum(c for c, _ in kv[1]) / len(kv[1])):
        print("| %s | %.1f | %.1f | %d |" % (name, sum(c for c, _ in r) / len(r), sum(w for _, w in r) / len(r), len(r)))
    print("| all %d files | %.0f | | |" % (len(runs), total))


if __name__ == "__main__":
    import sys
    rank(sys.argv[1:])
