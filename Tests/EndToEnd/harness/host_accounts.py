"""The host's user and group databases, shared by tests that run at the same time.

A few tests change them (daemon/test_system_users.py adds throwaway users, and
daemon/test_local_trust.py the `island` group when the host has none), and the package tests
check that installing a package into a root of its own left them unchanged. Run side by side
(scripts/test.sh runs the package tests beside the end-to-end suite, and other test runs may
share the machine), one would see the other's change as its own. So a test that changes the
accounts holds them exclusively, and a test that checks they did not change holds them shared
for as long as it compares: a lock file, machine-wide, that the kernel releases with the
process whatever happens."""

import contextlib
import fcntl
import os

LOCK = os.environ.get("ISLAND_HOST_ACCOUNTS_LOCK", "/tmp/island-tests-host-accounts.lock")


@contextlib.contextmanager
def _held(kind):
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        # Blocks until the other holders are done: each holds it for one test at most.
        fcntl.flock(fd, kind)
        yield
    finally:
        os.close(fd)


def changing():
    """Held while a test adds or removes users or groups on the host."""
    return _held(fcntl.LOCK_EX)


def unchanged():
    """Held while a test checks that something it ran left the host's accounts as they were."""
    return _held(fcntl.LOCK_SH)
