"""Fixtures of the end-to-end suite. The machinery lives in `harness/`; this file hands it to
tests: daemons made and cleaned up per test, every process a test started stopped after it,
sanitizer reports and failed tests' logs kept."""

import os
import shutil

import pytest

from harness import artifacts
from harness.daemon import Daemons
from harness.paths import CLI_MANIFEST, SANITIZER, SANITIZER_LOGS
from harness.processes import descendants, kill_all, read_sanitizer_reports, sanitizer_reports, zombie

FAILED = pytest.StashKey[bool]()

# Counts each file's CPU when ISLAND_FILE_CPU names a file to write it to.
pytest_plugins = ("harness.file_cpu",)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """From a test's setup to its teardown's report, the directories its owners are done with
    stay (harness/artifacts.py): a test that closes its own session before its failure is
    reported still has its logs kept."""
    artifacts.begin()
    try:
        return (yield)
    finally:
        artifacts.end()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed setup, test or teardown keeps its directories' logs and its last screenshots,
    and says where; after a failed setup or test they are copied again once its teardown has
    run, with what the stopped processes wrote last."""
    report = yield
    if report.failed:
        item.stash[FAILED] = True
    if report.failed or (report.when == "teardown" and item.stash.get(FAILED, False)):
        where = artifacts.save(item.nodeid)
        if where and report.failed:
            report.sections.append(("kept", "logs and screenshots of this test: %s" % where))
    return report


def pytest_collection_modifyitems(session, config, items):
    """The files that take longest start first (the rest keep their order): pytest-xdist
    hands out whole files (`--dist loadfile`, in collection order with
    `--no-loadscope-reorder`), and a file of a minute or more started late is what the other
    workers wait for at the end."""
    here = os.path.dirname(os.path.abspath(__file__))
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.relpath(str(item.path), here), len(rank)))


# The files of 45 s or more, the longest first, as measured with five workers beside each other
# (docs/testing.md, "What each end-to-end file costs"); the Swift example before them all: from
# a fresh clone its copied package compiles SwiftNIO and the rest of IslandKit's dependencies
# first.
LONGEST_FIRST = (
    "examples/test_swift_example.py",
    "gnome/test_gnome_shell.py",
    "presenters/test_hostile_text.py",
    "packaging/test_bench_script.py",
    "overlay/test_overlay_wayland.py",
    "push/test_channels.py",
    "push/test_push_isolation.py",
    "gnome/test_gnome_lock_screen.py",
    "push/test_cluster.py",
    "overlay/test_overlay_outputs.py",
    "push/test_push.py",
    "daemon/test_resources.py",
    "daemon/test_bad_input.py",
    "overlay/test_overlay_panels.py",
    "push/test_push_bench.py",
)


@pytest.fixture(autouse=True)
def no_sanitizer_report():
    """Fails the test when a process it started wrote a sanitizer report. Autouse fixtures are
    set up first and torn down last, so the test's daemons have stopped (and written whatever
    they report at exit) by the time this looks."""
    if not SANITIZER_LOGS:
        yield
        return
    before = sanitizer_reports()
    yield
    new = sanitizer_reports() - before
    if new:
        pytest.fail("%s sanitizer report(s) from processes this test started:\n%s"
                    % (SANITIZER, read_sanitizer_reports(new)), pytrace=False)


@pytest.fixture(autouse=True)
def kills_what_it_started():
    """Whatever a test started and left running — a failed assertion before its own clean-up,
    a command that ignored its signal — is stopped after it, by pid, so no test leaves
    processes behind. Processes of wider-scoped fixtures (set up before this one), and what
    those start, are left to their own teardown."""
    before = descendants()
    yield
    left = descendants() - before
    # A process that a wider-scoped fixture's process started during the test (the GNOME Shell
    # starting island-overlay again) is that fixture's too.
    left = {pid for pid in left if not zombie(pid) and not started_by(pid, before)}
    if left:
        kill_all(left)


def started_by(pid, processes):
    """Whether one of `processes` is an ancestor of `pid` (below this test runner)."""
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid in processes:
            return True
        if pid <= 1 or pid == os.getpid():
            return False


def pytest_sessionfinish(session, exitstatus):
    """Anything still running is stopped; sanitizer reports written after every test's check
    (a module-scoped daemon stopping last) still fail the run."""
    left = {pid for pid in descendants() if not zombie(pid)}
    if left:
        kill_all(left)
    if SANITIZER_LOGS and sanitizer_reports() and session.exitstatus == 0:
        print("\n%s sanitizer report(s) in %s: %s" % (SANITIZER, SANITIZER_LOGS, " ".join(sorted(sanitizer_reports()))))
        session.exitstatus = 1


@pytest.fixture
def make_daemon():
    """Makes started islandd processes (`make_daemon(config)`), or unstarted ones
    (`make_daemon(config, start=False)`) whose files a test changes first; all are stopped and
    removed after the test."""
    daemons = Daemons()
    yield daemons.make
    daemons.close()


@pytest.fixture
def daemon(make_daemon):
    return make_daemon()


@pytest.fixture
def unstarted_daemon(make_daemon):
    """`make_daemon` whose daemons start only when the test says."""
    return lambda config="": make_daemon(config, start=False)


@pytest.fixture
def cli_daemon(make_daemon):
    """islandd with the CLI's own desktop entry installed, as the package installs it."""
    d = make_daemon(start=False)
    shutil.copy(CLI_MANIFEST, os.path.join(d.share, "applications", "org.island.cli.desktop"))
    return d.start()
