"""What island-bridge reads from its configuration folder, which any program of the user's can
write to: bridge.conf. Only a regular file of at most 1 MiB is read. What is no regular file
there — a FIFO, a link to an endless device, a link loop, a folder — or a larger file is refused
by name, at the start (status 78) and on SIGHUP (the running configuration kept). Before, a
2 GiB sparse file was read whole into memory (twice its size held), a FIFO or a device was
refused as "You don't have permission" and a link loop was taken as no file at all."""

import os
import signal
import subprocess

import pytest

from harness import junk
from harness.bus import BRIDGE, Bridge, Session, missing, wait_until
from harness.paths import LIVENESS

pytestmark = pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon"),
                                reason="island-bridge is not built, or dbus-daemon is not installed")

# (name, how the junk is made at a path, the reason the bridge names)
JUNK = junk.cases(junk.make_fifo, junk.link_to_zero, junk.link_loop, junk.folder, junk.sparse_2_gib, limit=1 << 20)
IDS = [name for name, _, _ in JUNK]


@pytest.fixture
def session():
    session = Session()
    yield session
    session.close()


def conf_path(bridge):
    return os.path.join(bridge.config_home, "island", "bridge.conf")


@pytest.mark.parametrize("name,make,reason", JUNK, ids=IDS)
def test_the_start_names_what_is_no_regular_file_and_stops_with_78(session, name, make, reason):
    bridge = Bridge(os.path.join(session.root, "second-" + name), session.bus, session.daemon)
    path = conf_path(bridge)
    os.remove(path)
    make(path)
    env = session.bus.env(XDG_CONFIG_HOME=bridge.config_home, XDG_DATA_HOME=session.daemon.share)
    done = subprocess.run([BRIDGE, "--socket", session.daemon.socket], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=LIVENESS)
    assert done.returncode == 78, done.stderr
    assert "%s: %s" % (path, reason) in done.stderr, done.stderr


def test_sighup_refuses_what_is_no_regular_file_and_the_next_one_is_read(session):
    path = conf_path(session.bridge)
    for name, make, reason in JUNK:
        os.remove(path)
        make(path)
        session.bridge.process.send_signal(signal.SIGHUP)
        wait_until(lambda: "%s: %s" % (path, reason) in session.bridge.log(),
                   message="the %s refused by name" % name)
        (os.rmdir if name == "folder" else os.remove)(path)
        # The reloads are not held: the next SIGHUP reads the next file.
        with open(path, "w") as f:
            f.write("[Jobs]\nEnabled=%s\n" % name)
        session.bridge.process.send_signal(signal.SIGHUP)
        wait_until(lambda: "%s:2: Enabled= takes yes or no, not '%s'" % (path, name) in session.bridge.log(),
                   message="the next SIGHUP's file read")
        os.remove(path)
        open(path, "w").close()
    assert session.bridge.process.poll() is None
