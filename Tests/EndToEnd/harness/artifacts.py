"""What a failed test leaves behind for whoever reads the failure: the logs, screenshots and
configuration in the directories its daemons, sessions, buses and brokers made. Each of those
registers its directory with `keep` and `release`s it when it removes it; when a test fails,
conftest copies the small regular files of those still there to ISLAND_TEST_LOGS/<test>, before
the fixtures' teardown removes them. A module-scoped session's directory stays registered for
every test of its module."""

import os
import re
import shutil

LOGS = os.environ.get("ISLAND_TEST_LOGS") or "/tmp/island-test-logs"
MAX_FILE = 4 << 20
MAX_FILES = 300

_kept = []


def keep(directory):
    """Registers a directory of the running test's, to copy if it fails."""
    _kept.append(directory)


def release(directory):
    """The directory is about to be removed."""
    if directory in _kept:
        _kept.remove(directory)


def save(nodeid):
    """Copies the registered directories' small regular files (no sockets, no databases) to a
    folder named after the test; that folder's path, or None when there was nothing to keep."""
    if not _kept:
        return None
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
    return target if copied else None
