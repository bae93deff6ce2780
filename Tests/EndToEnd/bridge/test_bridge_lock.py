"""island-bridge follows the session lock into islandd's lock: GNOME Shell's
org.gnome.ScreenSaver, org.freedesktop.ScreenSaver (KDE's locker's) and logind's LockedHint
(bridge/lock_peers.py serves them as those services do, none being installed here; logind on a
system bus of the test's own), counting only the signals of each name's real owner: an
impostor on the same bus sending the owner's very signals changes nothing. islandd is asked
with `island admin lock status`; a presenter is sent a private activity's icon and name only
while locked. The bridge says the state again to an islandd that restarted."""

import os
import shutil
import subprocess
import tempfile

import pytest

from harness.bus import (
    BRIDGE,
    SYSTEM_PYTHON,
    Session,
    SessionBus,
    expect_line,
    missing,
    require_python_dbus,
    restart_daemon_under_the_bridge,
    wait_until,
)
from harness.paths import ISLAND
from harness.varlink import next_update, subscribe_presenter

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon"),
                                                    reason="island-bridge is not built, or dbus-daemon is not installed")]

COFFEE = "org.example.Coffee"  # a test app of the daemon's, entitled to Live Activities
SECRET = "SECRET-4711"
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def session(monkeypatch):
    require_python_dbus()
    root = tempfile.mkdtemp(prefix="island-system-bus-", dir="/tmp")
    system = SessionBus(root).start()
    # The bridge finds the system bus where sd-bus does: a test's own, here.
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", system.address)
    session = Session()
    session.system = system
    yield session
    session.close()
    system.stop()
    shutil.rmtree(root, ignore_errors=True)


def lock_status(session):
    done = subprocess.run([ISLAND, "admin", "lock", "status", "--socket", session.daemon.socket],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def start_peer(session, *arguments, system=False):
    env = session.bus.env()
    if system:
        env["DBUS_SYSTEM_BUS_ADDRESS"] = session.system.address
    peer = subprocess.Popen([SYSTEM_PYTHON, os.path.join(HERE, "lock_peers.py"), *arguments], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session.processes.append(peer)
    expect_line(peer, "ready")
    return peer


def command(peer, line):
    peer.stdin.write(line + "\n")
    peer.stdin.flush()
    expect_line(peer, "ok")


def test_gnome_shells_lock_is_followed_and_an_impostor_changes_nothing(session):
    wait_until(lambda: "following the session lock" in session.bridge.log(), message="the bridge following the lock")
    with session.daemon.connect("org.island.Extension") as extension:
        extension.RegisterLayout(app=COFFEE, type="Private", layout={
            "lockScreenVisibility": "private", "lockScreen": {"type": "text", "template": "{{state.secret}}"}})
    with session.daemon.connect("org.island.Producer") as producer:
        producer.Request(app=COFFEE, type="Private", attributes={}, content={"state": {"secret": SECRET}})
    presenter, snapshot = subscribe_presenter(session.daemon)
    try:
        assert snapshot["lock"] == {"on": False} and SECRET in repr(snapshot["items"])
        shell = start_peer(session, "screensaver", "org.gnome.ScreenSaver")
        wait_until(lambda: "lock report: gnome says unlocked" in session.bridge.log(), message="GNOME Shell's state read")
        assert lock_status(session) == "Session lock: off"

        command(shell, "gnome lock")
        locked = next_update(presenter, lambda update: update.get("lock", {}).get("on") is True)
        assert locked["kind"] == "snapshot" and SECRET not in repr(locked)
        assert locked["items"][0]["appName"] == snapshot["items"][0]["appName"]
        assert locked["items"][0]["content"] == {"state": {}}
        assert lock_status(session).startswith("Session lock: on since") and lock_status(session).endswith("(gnome)")

        # The impostor owns org.freedesktop.ScreenSaver and sends GNOME Shell's signal first:
        # from one connection, the bus delivers the two in order, so the bridge reads the
        # impostor's before the report it may count.
        impostor = start_peer(session, "screensaver", "org.freedesktop.ScreenSaver")
        wait_until(lambda: "lock report: freedesktop says unlocked" in session.bridge.log(), message="the second owner read")
        command(impostor, "gnome unlock")
        command(impostor, "freedesktop lock")
        wait_until(lambda: "lock report: freedesktop says locked" in session.bridge.log(), message="the owner's report")
        assert "lock report: gnome says unlocked" not in session.bridge.log().split("lock report: gnome says locked")[-1]
        # What the bridge holds now, the impostor's signal read, is what it tells an islandd that
        # restarted (which starts unlocked): "(gnome)" if it changed nothing, "(freedesktop)" if
        # it counted the impostor's unlock. A look at this islandd could come before a call of
        # the bridge's that the signal set off (it calls after it logs), and find it unchanged.
        # The bridge reconnects when it next speaks to islandd: for a file copy's progress.
        presenter.close()
        restart_daemon_under_the_bridge(session)
        wait_until(lambda: lock_status(session).startswith("Session lock: on"),
                   message="the lock said to the restarted daemon")
        assert lock_status(session).endswith("(gnome)"), "still GNOME Shell's lock"
        presenter, snapshot = subscribe_presenter(session.daemon)
        assert snapshot["lock"]["on"] is True and SECRET not in repr(snapshot)
        command(impostor, "freedesktop unlock")

        command(shell, "gnome unlock")
        unlocked = next_update(presenter, lambda update: update.get("lock", {}).get("on") is False)
        assert SECRET in repr(unlocked["items"])
        wait_until(lambda: lock_status(session) == "Session lock: off", message="unlocked")

        # Unlocked, the impostor locks nothing either: had the bridge counted its GNOME signal,
        # GNOME's lock would hide the owner's that follows it, and "(freedesktop)" never come.
        command(impostor, "gnome lock")
        command(impostor, "freedesktop lock")
        wait_until(lambda: lock_status(session).endswith("(freedesktop)"), message="the owner's own lock")
        assert "(gnome)" not in session.bridge.log().split("lock report: freedesktop says locked")[-1]
    finally:
        presenter.close()


def test_loginds_locked_hint_is_followed_and_said_again_to_a_restarted_daemon(session):
    logind = start_peer(session, "logind", system=True)
    wait_until(lambda: "lock report: logind says unlocked" in session.bridge.log(), message="logind's LockedHint read")
    command(logind, "lock")
    wait_until(lambda: lock_status(session).endswith("(logind)"), message="locked by logind")

    # islandd keeps no lock across a restart; the bridge tells the new one once its connection
    # comes back (IslandKit reconnects when the bridge next speaks to islandd, here for a file
    # copy's progress, and tells it so through the activities it lists again).
    restart_daemon_under_the_bridge(session)
    wait_until(lambda: lock_status(session).endswith("(logind)"), message="said again to the restarted daemon")

    command(logind, "unlock")
    wait_until(lambda: lock_status(session) == "Session lock: off", message="unlocked by logind")
    # logind leaving the bus: its report no longer counts.
    command(logind, "lock")
    wait_until(lambda: lock_status(session).endswith("(logind)"), message="locked again")
    logind.terminate()
    wait_until(lambda: lock_status(session) == "Session lock: off", message="logind gone")
