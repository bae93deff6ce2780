"""What islandd reads from its configuration folder, which any program of the user's can write
to as it can the data directories: islandd.conf and islandd.conf.d/*.conf. What is no regular
file there — a FIFO no one writes to, a device, a link to one, a link loop, a folder — is an
invalid configuration named with its reason, at the start (status 78) and at a reload (the
running one kept), and is never opened for reading: a FIFO once held the start for good, and a
reload with every later rescan of the data directories queued behind it on the file thread."""

import os

import pytest

from harness import junk
from harness.varlink import Connection

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick


# (how the junk is made, the reason the daemon names)
JUNK = [(make, reason) for _, make, reason in
        junk.cases(junk.make_fifo, junk.link_to_zero, junk.copy_of_zero, junk.link_to_tty, junk.link_loop, junk.folder)]
IDS = [make.__name__ for make, _ in JUNK]


@pytest.mark.parametrize("where", ["main", "drop-in"])
@pytest.mark.parametrize("make,reason", JUNK, ids=IDS)
def test_the_start_names_what_is_no_regular_file_and_stops_with_78(unstarted_daemon, where, make, reason):
    daemon = unstarted_daemon()
    if where == "main":
        os.remove(daemon.config)
        path = daemon.config
    else:
        os.makedirs(daemon.config + ".d")
        path = os.path.join(daemon.config + ".d", "50-junk.conf")
    make(path)
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.returncode == 78, daemon.log()
    assert "%s: %s" % (path, reason) in daemon.log(), daemon.log()


def reload(daemon):
    """Admin Reload on a connection of its own, answered within LIVENESS (or the test fails)."""
    connection = Connection(daemon.socket)
    try:
        return connection.ask("org.island.Admin.Reload")
    finally:
        connection.close()


def status(daemon):
    connection = Connection(daemon.socket)
    try:
        return connection.ask("org.island.Admin.Status")["parameters"]
    finally:
        connection.close()


def test_a_reload_refuses_what_is_no_regular_file_and_the_next_one_applies(daemon):
    drop_ins = daemon.config + ".d"
    os.makedirs(drop_ins)
    for index, (make, reason) in enumerate(JUNK):
        path = os.path.join(drop_ins, "50-junk-%d.conf" % index)
        make(path)
        reply = reload(daemon)
        assert reply.get("error") == "org.island.InvalidConfiguration", reply
        assert reply["parameters"]["path"] == daemon.config, reply
        assert reply["parameters"]["message"] == "%s: %s" % (path, reason), reply
        (os.rmdir if os.path.isdir(path) and not os.path.islink(path) else os.remove)(path)
        # The file thread is free again: the next reload reads the next configuration.
        with open(os.path.join(drop_ins, "10-limits.conf"), "w") as f:
            f.write("[Limits]\nMaxActivities=%d\n" % (10 + index))
        assert "error" not in reload(daemon)
        assert status(daemon)["limits"]["maxActivities"] == 10 + index
    assert daemon.process.poll() is None
