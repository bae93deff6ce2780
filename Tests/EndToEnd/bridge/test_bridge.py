"""island-bridge with real peers (docs/design.md §11): mpv with mpv-mpris as the player,
cross-checked with playerctl; notify-send talking to dunst, the user's notification daemon, which
the bridge only watches; KDE's job tracker protocol driven with gdbus and a KIO-style client, the
cancel observed with gdbus monitor. One bus, islandd and bridge for the module."""

import json
import os
import time

import pytest

from harness.bus import (
    BRIDGE,
    BRIDGE_ICON,
    MPRIS_PLUGIN,
    MPV_ENTRY,
    Notifier,
    Presenter,
    Session,
    admin,
    expect_line,
    job_client,
    missing,
    notification_server,
    playerctl,
    skip_without,
    start_mpv,
    start_notification_server,
    tone,
    wait_until,
)
from harness.paths import LIVENESS
from harness.processes import stop_process

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon"),
                                reason="island-bridge is not built, or dbus-daemon is not installed")]


@pytest.fixture(scope="module")
def session():
    session = Session()
    yield session
    session.close()


@pytest.fixture
def presenter(session):
    presenter = Presenter(session.daemon)
    yield presenter
    presenter.close()


# MARK: MPRIS


def test_a_playing_mpv_is_now_playing_and_its_buttons_reach_it(session, presenter):
    skip_without("mpv", MPRIS_PLUGIN, "playerctl")
    first = tone(os.path.join(session.root, "first.wav"), seconds=40,
                 tags={"IART": "Claude Debussy", "IPRD": "Suite bergamasque"})
    second = tone(os.path.join(session.root, "second.wav"), seconds=40, frequency=660)
    # mpv-mpris names a cover.jpg beside the track as its art (a local file: the bridge passes
    # its path on; what is in it is for a presenter to read and decode).
    cover = os.path.join(session.root, "cover.jpg")
    with open(cover, "wb") as f:
        f.write(b"\xff\xd8\xff\xd9")
    mpv = start_mpv(session, first, second)
    try:
        wait_until(lambda: playerctl(session, "status") == "Playing", message="mpv playing")
        title = playerctl(session, "metadata", "title")
        assert title == "Island Test Tone"
        item = presenter.item("NowPlaying", lambda i: i["content"]["state"].get("status") == "playing"
                              and "endsAt" in i["content"]["state"])
        state = item["content"]["state"]
        assert state["title"] == title, "the activity shows the track playerctl reports"
        assert playerctl(session, "metadata", "artist") == "Claude Debussy"
        assert state["artist"] == "Claude Debussy", "the artist mpv sends as a list (xesam:artist, an as) reaches the state"
        assert state["album"] == "Suite bergamasque"
        assert state["artUrl"] == "file://" + cover, "the cover mpv names, as a local file URL"
        assert item["attributes"]["player"] == "org.mpris.MediaPlayer2.mpv"
        if os.path.exists(MPV_ENTRY):
            assert item["attributes"]["app"] == {"name": "mpv Media Player", "icon": "mpv", "desktopEntry": "mpv"}, \
                "the source's name and icon come from its installed desktop entry"
            # The card is headed by mpv, from islandd's own reading of mpv's entry, and says
            # quieter that it came through the bridge.
            assert (item["sourceApp"], item["appName"], item["appIcon"]) == ("mpv", "mpv Media Player", "mpv")
            assert (item["producerName"], item["producerIcon"]) == ("Island Bridge", BRIDGE_ICON)
        # A time range presenters tick through: the track's 40 s from where playback started.
        assert state["endsAt"] - state["startedAt"] == pytest.approx(40, abs=0.5)
        assert state["startedAt"] <= time.time() <= state["endsAt"]
        assert item["content"].get("staleDate") is None

        presenter.press(item["id"], "playPause")
        wait_until(lambda: playerctl(session, "status") == "Paused", message="mpv paused by the island's button")
        paused = presenter.item("NowPlaying", lambda i: i["id"] == item["id"] and i["content"]["state"].get("status") == "paused")
        assert paused["content"]["state"]["paused"] is True
        assert paused["content"]["staleDate"] > time.time(), "a paused player goes stale after StaleAfterPause"
        # Paused: the timer stands at the position (its `to` is the pause).
        position = float(playerctl(session, "position"))
        paused_state = paused["content"]["state"]
        assert paused_state["endsAt"] - paused_state["startedAt"] == pytest.approx(position, abs=0.6)

        presenter.press(item["id"], "playPause")
        wait_until(lambda: playerctl(session, "status") == "Playing", message="mpv playing again")
        presenter.item("NowPlaying", lambda i: i["id"] == item["id"] and i["content"]["state"].get("status") == "playing")

        presenter.press(item["id"], "next")
        wait_until(lambda: "second.wav" in playerctl(session, "metadata", "xesam:url"), message="mpv on the next track")
        assert len(presenter.bridged("NowPlaying")) == 1, "one activity per player"
    finally:
        stop_process(mpv)
    presenter.wait(lambda p: not any(i["state"] in ("active", "stale") for i in p.bridged("NowPlaying")),
                   message="the activity ending when mpv quits")


def test_no_per_second_updates_while_playing_and_a_crashed_player_ends(session, presenter):
    skip_without("mpv", MPRIS_PLUGIN, "playerctl")
    mpv = start_mpv(session, tone(os.path.join(session.root, "long.wav"), seconds=60))
    try:
        item = presenter.item("NowPlaying", lambda i: i["content"]["state"].get("status") == "playing"
                              and "endsAt" in i["content"]["state"])
        # Three seconds of playing (a lower bound: time enough for per-second updates to come),
        # then a stimulus, a pause, as the marker: of what reached the presenter before it,
        # nothing may be a mere move of the time range, as a position sent every second would be.
        time.sleep(3.0)
        playerctl(session, "pause")
        read = presenter.until(lambda p: p.items[item["id"]]["content"]["state"].get("status") == "paused",
                               message="the pause reaching the presenter")
        timing = ("startedAt", "endsAt", "position", "elapsed")
        previous = {k: v for k, v in item["content"]["state"].items() if k not in timing}
        for update in read[:-1]:
            for changed in (i for i in update.get("items", []) if i["id"] == item["id"]):
                state = {k: v for k, v in changed["content"]["state"].items() if k not in timing}
                assert state != previous, \
                    "a playing track's position reaches presenters as a time range, not as updates: %s" % changed
                previous = state
        # A player that crashes leaves the bus like one that quits.
        mpv.kill()
        mpv.wait()
    finally:
        stop_process(mpv)
    presenter.wait(lambda p: not any(i["state"] in ("active", "stale") for i in p.bridged("NowPlaying")),
                   message="the activity ending when mpv is killed")


# MARK: Progress notifications


@pytest.fixture(scope="module")
def dunst(session):
    missing_program = missing("Xvfb", "dunst", "notify-send", "gdbus")
    if missing_program:
        pytest.skip("%s is not installed (scripts/install-deps.sh installs it)" % missing_program)
    return start_notification_server(session)


def notify(session, *arguments):
    """notify-send's id for the notification (the server's reply), as dunst gave it."""
    done = session.run(["notify-send", "-p", *arguments])
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def test_a_progress_notification_is_updated_in_place_and_ends_at_100(session, presenter, dunst):
    server = notification_server(session)
    assert "dunst" in server
    # An app keeps its connection: only that connection's calls change its notification's
    # activity (notify-send connects anew for each call, so each is another sender).
    downloader = Notifier(session)
    first = downloader.notify(app="Downloader", summary="Downloading", body="ubuntu.iso", hints={"value": 40})
    item = presenter.item("Progress", lambda i: i["content"]["state"].get("percent") == 40)
    assert item["content"]["state"]["title"] == "Downloading"
    assert item["attributes"]["app"] == {"name": "Notification", "icon": BRIDGE_ICON, "label": "Downloader"}, \
        "a sender not verified as an app is the bridge's own Notification; its app name is only a label"

    second = downloader.notify(app="Downloader", replaces=first, summary="Downloading", body="ubuntu.iso", hints={"value": 80})
    assert second == first, "dunst replaced its notification: the bridge did not take its place"
    updated = presenter.item("Progress", lambda i: i["id"] == item["id"] and i["content"]["state"].get("percent") == 80)
    assert updated["state"] == "active"

    downloader.notify(app="Downloader", replaces=first, summary="Downloaded", body="ubuntu.iso", hints={"value": 100})
    ended = presenter.item("Progress", lambda i: i["id"] == item["id"] and i["state"] == "ended")
    assert ended["content"]["state"]["percent"] == 100
    assert ended["content"]["state"]["done"] is True
    assert len([i for i in presenter.bridged("Progress") if i["id"] != item["id"] and i["state"] == "active"]) == 0
    # dunst still serves, as before: a plain notification gets the next id.
    assert notify(session, "Plain", "no progress") > first
    assert notification_server(session) == server


def test_a_notification_its_sender_calls_private_is_private_on_the_lock_screen(session, presenter, dunst):
    """GNOME Shell's `x-gnome-privacy-scope` hint, the one hint a desktop defines for this:
    `user` (about the user) makes the activity a PrivateProgress, whose layout is private: while
    the session is locked presenters get its app and nothing it says."""
    client = Notifier(session)
    first = client.notify(app="Mail", summary="Sending to Dr. Smith", body="results.pdf",
                          hints={"value": 30, "x-gnome-privacy-scope": "user"})
    item = presenter.item("PrivateProgress", lambda i: i["content"]["state"].get("percent") == 30)
    assert item["content"]["state"]["title"] == "Sending to Dr. Smith"
    try:
        assert admin(session.daemon, "SetLock", {"on": True})["parameters"]["lock"]["on"] is True
        locked = presenter.wait(lambda p: p.last and p.last.get("lock", {}).get("on") is True and p.items.get(item["id"]),
                                message="the redacted snapshot")
        assert locked["content"] == {"state": {}}
        assert "Dr. Smith" not in json.dumps(presenter.last)
    finally:
        admin(session.daemon, "SetLock", {"on": False})
        presenter.wait(lambda p: p.last and p.last.get("lock", {}).get("on") is False, message="unlocked")
    client.notify(app="Mail", replaces=first, summary="Sent", hints={"value": 100})
    presenter.item("PrivateProgress", lambda i: i["id"] == item["id"] and i["state"] == "ended")


def test_stack_tags_replace_and_closing_ends(session, presenter, dunst):
    backup = Notifier(session)
    tag = {"x-dunst-stack-tag": "backup"}
    backup.notify(app="Backup", summary="Backing up", body="home", hints=dict(tag, value=10))
    item = presenter.item("Progress", lambda i: i["content"]["state"].get("title") == "Backing up"
                          and i["content"]["state"].get("percent") == 10)
    second = backup.notify(app="Backup", summary="Backing up", body="home", hints=dict(tag, value=55))
    presenter.item("Progress", lambda i: i["id"] == item["id"] and i["content"]["state"].get("percent") == 55,
                   message="the same app's notification with the same stack tag updating it")
    # A notification that closes ends its activity: CloseNotification from its own connection
    # makes dunst emit NotificationClosed for it.
    backup.close(second)
    presenter.item("Progress", lambda i: i["id"] == item["id"] and i["state"] in ("ended", "dismissed"),
                   message="the activity ending when its notification closes")


def test_hostile_notifications_are_cut_and_bounded(session, presenter, dunst):
    body = "x" * 120_000  # a command line argument holds at most 128 KiB
    hints = ", ".join("'h%d': <%d>" % (n, n) for n in range(3000))
    done = session.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
                        "--object-path", "/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.Notify",
                        "Flood" * 100, "0", "/etc/passwd", "\x1b]0;title\x07" + "T" * 5000, body, "[]",
                        "{'value': <int32 33>, %s}" % hints, "0"], timeout=LIVENESS)
    assert done.returncode == 0, done.stderr
    item = presenter.item("Progress", lambda i: i["content"]["state"].get("percent") == 33)
    state = item["content"]["state"]
    assert len(state["title"].encode()) <= 128 and "\x1b" not in state["title"]
    assert len(state.get("body", "").encode()) <= 256
    assert len(item["attributes"]["app"]["name"].encode()) <= 64
    assert len(item["attributes"]["app"]["label"].encode()) <= 64
    assert item["attributes"]["app"]["icon"] == BRIDGE_ICON, "a path is never an icon name, nor a peer's icon the app's"
    with open("/proc/%d/status" % session.bridge.pid) as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    assert rss < 96 * 1024, "the bridge's RSS stays small (%d KiB)" % rss
    assert session.bridge.process.poll() is None


# MARK: KDE jobs


def test_a_kde_job_is_a_transfer_whose_buttons_reach_the_job(session, presenter):
    skip_without("gdbus")
    monitor = session.spawn(["gdbus", "monitor", "--session", "--dest", "org.kde.JobViewServer"], "gdbus-monitor")
    client, path = job_client(session)
    assert path.startswith("/org/island/bridge/JobView/")
    client.stdin.write("update " + json.dumps({"title": "Copying", "infoMessage": "3 files", "percent": 40,
                                               "processedBytes": 12_000_000, "totalBytes": 30_000_000, "speed": 2_500_000}) + "\n")
    client.stdin.flush()
    expect_line(client, "updated")
    item = presenter.item("Transfer", lambda i: i["content"]["state"].get("percent") == 40)
    state = item["content"]["state"]
    assert state["title"] == "Copying" and state["amount"] == "12 MB of 30 MB" and state["speed"] == "2.5 MB/s"
    assert item["attributes"]["app"] == {"name": "Transfer", "icon": BRIDGE_ICON, "label": "org.kde.dolphin"}, \
        "a client that claims Dolphin but is a Python script is shown as the bridge's own Transfer"

    presenter.press(item["id"], "suspendResume")
    assert expect_line(client, "signal") == "signal suspendRequested"
    presenter.item("Transfer", lambda i: i["id"] == item["id"] and i["content"]["state"].get("suspended") is True)
    presenter.press(item["id"], "suspendResume")
    assert expect_line(client, "signal") == "signal resumeRequested"

    presenter.press(item["id"], "cancel")
    assert expect_line(client, "signal") == "signal cancelRequested"
    assert expect_line(client, "terminated") == "terminated 1"
    ended = presenter.item("Transfer", lambda i: i["id"] == item["id"] and i["state"] == "ended")
    assert ended["content"]["state"]["canceled"] is True
    wait_until(lambda: "cancelRequested" in session.log_of("gdbus-monitor"), message="gdbus monitor seeing cancelRequested")
    stop_process(monitor)
    monitored = session.log_of("gdbus-monitor")
    assert "%s: org.kde.JobViewV3.cancelRequested ()" % path in monitored
    assert "org.kde.JobViewV3.suspendRequested" in monitored and "org.kde.JobViewV3.resumeRequested" in monitored


def test_a_job_whose_owner_leaves_ends_as_owner_gone(session, presenter):
    skip_without("gdbus")
    # gdbus call asks for a view and leaves the bus at once, as a crashed client would.
    done = session.run(["gdbus", "call", "--session", "--dest", "org.kde.JobViewServer", "--object-path", "/JobViewServer",
                        "--method", "org.kde.JobViewServerV2.requestView", "org.kde.dolphin", "1",
                        "{'title': <'Moving'>, 'percent': <uint32 5>}"])
    assert done.returncode == 0 and "/org/island/bridge/JobView/" in done.stdout, done.stderr
    item = presenter.item("Transfer", lambda i: i["content"]["state"].get("title") == "Moving" and i["state"] == "ended")
    assert item["content"]["state"]["ownerGone"] is True

    # A job left running by its client ends the same way when the client quits.
    client, _ = job_client(session, hints={"title": "Syncing", "immediate": True})
    syncing = presenter.item("Transfer", lambda i: i["content"]["state"].get("title") == "Syncing" and i["state"] == "active")
    client.stdin.write("quit\n")
    client.stdin.flush()
    client.wait(timeout=LIVENESS)
    gone = presenter.item("Transfer", lambda i: i["id"] == syncing["id"] and i["state"] == "ended")
    assert gone["content"]["state"]["ownerGone"] is True


def test_only_the_job_s_owner_may_change_it(session, presenter):
    skip_without("gdbus")
    client, path = job_client(session, hints={"title": "Mine", "immediate": True})
    presenter.item("Transfer", lambda i: i["content"]["state"].get("title") == "Mine" and i["state"] == "active")
    done = session.run(["gdbus", "call", "--session", "--dest", "org.kde.JobViewServer", "--object-path", path,
                        "--method", "org.kde.JobViewV3.terminate", "0", "hijacked", "{}"])
    assert "AccessDenied" in done.stderr, done.stderr
    client.stdin.write("terminate 0 \n")
    client.stdin.flush()
    expect_line(client, "terminated")
    presenter.item("Transfer", lambda i: i["content"]["state"].get("title") == "Mine" and i["state"] == "ended")
