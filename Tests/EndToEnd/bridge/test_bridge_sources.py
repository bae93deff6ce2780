"""island-bridge lends no names: a source shows as an app only when the process that sent it is
verified as that app by islandd's identity rules, looked up from the bus's credentials of the
sending connection; and only the connection that made a notification (or a job) changes its
activity. Hostile peers are Python clients on the session bus; the app they claim is installed, and
a copy of the interpreter named as that app's executable stands for the app itself (the executable
rule of islandd's user scope)."""

import os
import subprocess

import pytest

from harness.bus import (
    BRIDGE,
    BRIDGE_ICON,
    MPRIS_PLUGIN,
    MPV_ENTRY,
    SYSTEM_PYTHON,
    Notifier,
    Presenter,
    Session,
    app_interpreter,
    expect_line,
    install_entry,
    interact,
    job_client,
    missing,
    require_python_dbus,
    skip_without,
    start_mpv,
    start_notification_server,
    tone,
)
from harness.processes import stop_process

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon"),
                                reason="island-bridge is not built, or dbus-daemon is not installed")]

VICTIM = "org.island.test.Downloader"
VICTIM_APP = {"name": "Test Downloader", "icon": "test-downloader", "desktopEntry": VICTIM}


@pytest.fixture(scope="module")
def session():
    # Every test here starts activities of the bridge: more than the daemon's default start
    # budget allows an app in a minute.
    session = Session(daemon_config="[App:org.island.bridge]\nStartBudget=200\n")
    yield session
    session.close()


@pytest.fixture(scope="module")
def victim_python(session):
    """The victim app's executable (a copy of python3), named by its installed entry."""
    python = app_interpreter(session, "test-downloader")
    install_entry(session, VICTIM, VICTIM_APP["name"], VICTIM_APP["icon"], python)
    return python


@pytest.fixture(scope="module")
def dunst(session):
    missing_program = missing("Xvfb", "dunst", "gdbus")
    if missing_program:
        pytest.skip("%s is not installed (scripts/install-deps.sh installs it)" % missing_program)
    return start_notification_server(session)


@pytest.fixture
def presenter(session):
    presenter = Presenter(session.daemon)
    yield presenter
    presenter.close()


def state(item):
    return item["content"]["state"]


def test_a_peer_claiming_an_installed_app_is_shown_as_the_bridge_s_notification(session, presenter, dunst, victim_python):
    hostile = Notifier(session)
    hostile.notify(app="Test Downloader", icon="test-downloader", summary="Claiming", hints={"value": 31, "desktop-entry": VICTIM})
    item = presenter.item("Progress", lambda i: state(i).get("title") == "Claiming")
    assert item["attributes"]["app"] == {"name": "Notification", "icon": BRIDGE_ICON, "label": "Test Downloader"}, \
        "a Python script claiming the Test Downloader's entry is not shown as that app, nor with its icon"
    assert "sourceApp" not in item and (item["appName"], item["appIcon"]) == ("Island Bridge", BRIDGE_ICON), \
        "nor headed by it: the card says it is the bridge's"

    # notify-send, a real peer, claiming an app installed on the machine.
    if os.path.exists("/usr/share/applications/mpv.desktop") and not missing("notify-send"):
        done = session.run(["notify-send", "-a", "mpv", "-h", "string:desktop-entry:mpv", "-h", "int:value:32", "Claiming mpv"])
        assert done.returncode == 0, done.stderr
        claimed = presenter.item("Progress", lambda i: state(i).get("title") == "Claiming mpv")
        assert claimed["attributes"]["app"] == {"name": "Notification", "icon": BRIDGE_ICON, "label": "mpv"}


def test_the_verified_app_keeps_its_name_and_icon(session, presenter, dunst, victim_python):
    app = Notifier(session, python=victim_python)
    app.notify(app="Test Downloader", summary="Verified", hints={"value": 33, "desktop-entry": VICTIM})
    item = presenter.item("Progress", lambda i: state(i).get("title") == "Verified")
    assert item["attributes"]["app"] == VICTIM_APP, \
        "the process runs the executable the entry names: its name and icon come from the entry"
    assert (item["sourceApp"], item["appName"], item["appIcon"]) == (VICTIM, VICTIM_APP["name"], VICTIM_APP["icon"]), \
        "islandd heads the card with the app's own entry"
    assert item["producerName"] == "Island Bridge"


def test_a_stranger_s_replaces_id_and_close_leave_the_victim_s_activity_alone(session, presenter, dunst, victim_python):
    victim = Notifier(session, python=victim_python)
    mine = victim.notify(app="Test Downloader", summary="Backing up", body="home", hints={"value": 40, "desktop-entry": VICTIM})
    item = presenter.item("Progress", lambda i: state(i).get("title") == "Backing up" and state(i).get("percent") == 40)
    assert item["attributes"]["app"] == VICTIM_APP

    def victim_untouched(updates):
        for update in updates:
            for changed in (i for i in update.get("items", []) if i["id"] == item["id"]):
                assert changed["state"] == "active", "the stranger ended the victim's activity: %s" % changed
                assert state(changed)["title"] == "Backing up", "the stranger rewrote the victim's activity: %s" % changed

    stranger = Notifier(session)
    # The stranger replaces the victim's notification at the server (dunst lets it) with a
    # failure in the victim's name: for the bridge, a notification of the stranger's own (one
    # that ends as it starts, so never shown).
    ransom = stranger.notify(app="Test Downloader", replaces=mine, summary="Transfer failed: pay 50 EUR to unlock",
                             hints={"category": "transfer.error", "desktop-entry": VICTIM})
    # A stranger's replacement with progress: a live activity of its own, not the victim's.
    stranger.notify(app="Test Downloader", replaces=ransom, summary="Stolen", hints={"value": 99, "desktop-entry": VICTIM})
    seen = presenter.until(lambda p: any(state(i).get("title") == "Stolen" for i in p.bridged("Progress")),
                           message="the stranger's notification, as its own activity")
    theirs = next(i for i in presenter.bridged("Progress") if state(i).get("title") == "Stolen")
    assert theirs["id"] != item["id"]
    victim_untouched(seen)
    # The stranger closes the id (CloseNotification is the server's to honour): the closing
    # ends the stranger's own notification, nothing of the victim's.
    stranger.close(mine)
    # The victim goes on: its next update reaches the same activity, after everything above
    # (one call in flight per activity, in order), so a change the stranger had made would
    # have been seen first.
    # (dunst closed `mine`: it may give the replacement a new id.)
    now = victim.notify(app="Test Downloader", replaces=mine, summary="Backing up", body="home",
                        hints={"value": 70, "desktop-entry": VICTIM})
    seen += presenter.until(lambda p: state(p.items[item["id"]]).get("percent") == 70,
                            message="the victim's own update reaching its activity")
    victim_untouched(seen)
    assert presenter.items[item["id"]]["state"] == "active"
    assert presenter.items[item["id"]]["attributes"]["app"] == VICTIM_APP
    assert theirs["attributes"]["app"] == {"name": "Notification", "icon": BRIDGE_ICON, "label": "Test Downloader"}

    # The victim's own close ends it.
    victim.close(now)
    presenter.item("Progress", lambda i: i["id"] == item["id"] and i["state"] in ("ended", "dismissed"),
                   message="the victim's own CloseNotification ending its activity")


def test_a_stranger_s_close_notification_leaves_the_victim_s_activity_alone(session, presenter, dunst, victim_python):
    victim = Notifier(session, python=victim_python)
    mine = victim.notify(app="Test Downloader", summary="Syncing", hints={"value": 20, "desktop-entry": VICTIM})
    item = presenter.item("Progress", lambda i: state(i).get("title") == "Syncing" and state(i).get("percent") == 20)
    # dunst closes the notification for whoever asks, and says so (NotificationClosed, reason 3).
    Notifier(session).close(mine)
    # The victim's next update comes after the closing: it reaches the same, still active,
    # activity (dunst gives it a new id, the old one being closed).
    victim.notify(app="Test Downloader", replaces=mine, summary="Syncing", hints={"value": 50, "desktop-entry": VICTIM})
    seen = presenter.until(lambda p: any(state(i).get("title") == "Syncing" and state(i).get("percent") == 50
                                         for i in p.bridged("Progress")), message="the victim's update after the closing")
    for update in seen:
        for changed in (i for i in update.get("items", []) if i["id"] == item["id"]):
            assert changed["state"] == "active", "a stranger's CloseNotification ended the victim's activity: %s" % changed
    assert state(presenter.items[item["id"]])["percent"] == 50


def test_notify_send_updating_from_a_new_connection_each_time_leaves_no_stale_activity(session, presenter, dunst):
    if missing("notify-send"):
        pytest.skip("notify-send is not installed")

    def notify_send(*arguments):
        done = session.run(["notify-send", "-p", *arguments])
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    first = notify_send("-h", "int:value:10", "One-shot")
    item = presenter.item("Progress", lambda i: state(i).get("title") == "One-shot" and state(i).get("percent") == 10)
    # Another connection: another notification, and the first, displaced and gone with its
    # sender, is dismissed.
    notify_send("-r", first, "-h", "int:value:60", "One-shot")
    presenter.item("Progress", lambda i: state(i).get("title") == "One-shot" and state(i).get("percent") == 60)
    presenter.wait(lambda p: item["id"] not in p.items or p.items[item["id"]]["state"] not in ("active", "stale"),
                   message="the first notify-send's activity dismissed")
    live = [i for i in presenter.bridged("Progress") if state(i).get("title") == "One-shot" and i["state"] == "active"]
    assert len(live) == 1 and state(live[0])["percent"] == 60


def test_a_job_shows_its_app_only_for_the_app_s_own_process(session, presenter, victim_python):
    _, path = job_client(session, desktop_entry=VICTIM, hints={"title": "Claimed job", "immediate": True})
    claimed = presenter.item("Transfer", lambda i: state(i).get("title") == "Claimed job")
    assert claimed["attributes"]["app"] == {"name": "Transfer", "icon": BRIDGE_ICON, "label": VICTIM}
    _, path = job_client(session, desktop_entry=VICTIM, hints={"title": "Own job", "immediate": True}, python=victim_python)
    own = presenter.item("Transfer", lambda i: state(i).get("title") == "Own job")
    assert own["attributes"]["app"] == VICTIM_APP


def start_player(session, name, title, python=SYSTEM_PYTHON, desktop_entry=VICTIM, identity="Test Downloader"):
    """bridge/mpris_peer.py owning org.mpris.MediaPlayer2.`name`, playing `title`."""
    require_python_dbus()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpris_peer.py")
    player = subprocess.Popen([python, script, name, desktop_entry, identity, title], env=session.bus.env(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session.processes.append(player)
    expect_line(player, "ready")
    return player


def test_a_player_shows_its_app_only_for_the_app_s_own_process_and_a_new_owner_is_a_new_source(session, presenter, victim_python):
    hostile = start_player(session, "hostile", "Hostile Track")
    item = presenter.item("NowPlaying", lambda i: state(i).get("title") == "Hostile Track")
    assert item["attributes"]["app"] == {"name": "Media", "icon": BRIDGE_ICON, "label": "Test Downloader"}, \
        "a Python script whose DesktopEntry names the Test Downloader is the bridge's own Media"

    own = start_player(session, "testdownloader", "Own Track", python=victim_python)
    mine = presenter.item("NowPlaying", lambda i: state(i).get("title") == "Own Track")
    assert mine["attributes"]["app"] == VICTIM_APP
    # The name's owner leaves and a stranger takes the same name: its own activity, as what it is.
    stop_process(own)
    presenter.wait(lambda p: mine["id"] not in p.items or p.items[mine["id"]]["state"] not in ("active", "stale"),
                   message="the player's activity ending with its owner")
    start_player(session, "testdownloader", "Same Name", desktop_entry=VICTIM)
    taken = presenter.item("NowPlaying", lambda i: state(i).get("title") == "Same Name")
    assert taken["id"] != mine["id"]
    assert taken["attributes"]["app"] == {"name": "Media", "icon": BRIDGE_ICON, "label": "Test Downloader"}
    stop_process(hostile)


def test_now_playing_and_a_progress_notification_share_the_island_as_two_apps(session, presenter, dunst):
    # The bridge speaks for mpv (verified: its entry is installed) and for an unverified
    # notification sender as itself: two apps' activities, pill and bubble, as two apps' own
    # activities would be; not one in the island and the other only in the list.
    skip_without("mpv", MPRIS_PLUGIN, "playerctl")
    if not os.path.exists(MPV_ENTRY):
        pytest.skip("mpv's desktop entry is not installed: the bridge cannot speak for mpv")
    # What earlier tests left live would take the bubble: the user dismisses it first, and
    # whatever comes after it — the bridge holds at most 5 live activities (its app's limit) and
    # starts a notification that waited for a slot as soon as one is dismissed.
    dismissed = set()

    def nothing_live(p):
        live = [i["id"] for i in p.items.values() if i["state"] in ("active", "stale")]
        for id in live:
            if id not in dismissed:
                dismissed.add(id)
                interact(session.daemon, {"action": "dismiss", "id": id})
        return not live
    presenter.wait(nothing_live, message="nothing live")
    mpv = start_mpv(session, tone(os.path.join(session.root, "shared.wav"), seconds=60))
    copier, copying = Notifier(session), None
    try:
        playing = presenter.item("NowPlaying", lambda i: i["content"]["state"].get("status") == "playing" and i["state"] == "active")
        assert playing["sourceApp"] == "mpv"
        copying = copier.notify(app="Files", summary="Copying", body="holiday.mkv", hints={"value": 40})
        copy = presenter.item("Progress", lambda i: i["content"]["state"].get("title") == "Copying" and i["state"] == "active")
        island = presenter.wait(lambda p: p.island if p.island.get("mode") == "minimal" else None,
                                message="Now Playing and the copy together in the island")
        assert {island["attached"], island["detached"]} == {playing["id"], copy["id"]}, island
    finally:
        stop_process(mpv)
        if copying is not None:
            copier.close(copying)
