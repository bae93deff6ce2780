"""What a failed test leaves behind for whoever reads the failure: the logs, screenshots and
configuration in the directories its daemons, sessions, buses and brokers made, and the last
screenshots it took. Each of those directories is registered with `keep` when made and handed
to `remove` when its owner is done with it. During a test, `remove` only marks it: a test that
closes its own session in `finally` does so before pytest reports its failure, so the
directory is removed once the test's verdict is known (`end`), after conftest has copied the
small regular files of every registered directory to ISLAND_TEST_LOGS/<test> if it failed
(`save`). A module-scoped session's directory stays registered for every test of its module.

What a passing test leaves: nothing on disk. What a failed one leaves: at most MAX_FILES files
of at most MAX_FILE bytes each, and its last SCREENSHOTS screenshots as PNGs (held in memory
until then: a few raw frames, 2.6 MiB each at 1280x720)."""

import collections
import os
import re
import shutil

LOGS = os.environ.get("ISLAND_TEST_LOGS") or "/tmp/island-test-logs"
MAX_FILE = 4 << 20
MAX_FILES = 300
SCREENSHOTS = 4

_kept = []
_done_with = []
_in_test = False
_screenshots = collections.deque(maxlen=SCREENSHOTS)


def keep(directory):
    """Registers a directory of the running test's (or of a wider fixture's), to copy if a test
    fails while it is there."""
    _kept.append(directory)


def remove(directory):
    """Its owner is done with `directory` (whatever wrote there has stopped): removed now, or,
    during a test, once the test's verdict is known and its files saved if it failed."""
    if _in_test and directory in _kept:
        if directory not in _done_with:
            _done_with.append(directory)
        return
    if directory in _kept:
        _kept.remove(directory)
    shutil.rmtree(directory, ignore_errors=True)


def screenshot(image):
    """A screenshot a test took (the harness's displays hand each here): the last few are kept
    with the test's files if it fails. The image itself is returned."""
    if _in_test:
        _screenshots.append(image)
    return image


def begin():
    """A test starts: what it removes waits for its verdict, and its screenshots are its own."""
    global _in_test
    _in_test = True
    _screenshots.clear()


def end():
    """The test's verdict is known and its files saved if it failed: the directories its
    owners were done with are removed, and its screenshots forgotten."""
    global _in_test
    _in_test = False
    _screenshots.clear()
    done, _done_with[:] = list(_done_with), []
    for directory in done:
        remove(directory)


def save(nodeid):
    """Copies the registered directories' small regular files (no sockets, no databases), and
    writes the test's last screenshots (screenshot-1.png the oldest), to a folder named after
    the test; that folder's path, or None when there was nothing to keep."""
    target = os.path.join(LOGS, re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:150])
    copied = 0
    for index, directory in enumerate(list(_kept)):
        for parent, _, files in os.walk(directory):
            for name in files:
                source = os.path.join(parent, name)
                try:
                    if not os.path.isfile(source) or os.path.islink(source) or os.path.getsize(source) > MAX_FILE:
                        continue
                except OSError:
                    continue
                if copied >= MAX_FILES or name.endswith((".db", ".sqlite", "-wal", "-shm")):
                    continue
                relative = os.path.relpath(source, directory)
                destination = os.path.join(target, "%d-%s" % (index, os.path.basename(directory)), relative)
                os.makedirs(os.path.dirname(destination), exist_ok=True)
                try:
                    shutil.copyfile(source, destination)
                    copied += 1
                except OSError:
                    pass
    for number, image in enumerate(_screenshots, 1):
        os.makedirs(target, exist_ok=True)
        try:
            image.save_png(os.path.join(target, "screenshot-%d.png" % number))
            copied += 1
        except OSError:
            pass
    return target if copied else None
