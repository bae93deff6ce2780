"""island-bridge follows the desktop's Do Not Disturb into islandd's focus (docs/design.md §13):
real dunst under Xvfb paused and resumed with dunstctl, GNOME's show-banners set with gsettings
through a real dconf-service, and KDE's inhibition, swaync's Do Not Disturb and mako's
do-not-disturb mode from peers serving them as Plasma, swaync and mako do
(bridge/kde_notifications_peer.py, swaync_peer.py, mako_peer.py: none is installed here); the real
islandd asked with `island admin focus status`, and an alerting update of another app whose reply
says `alertSuppressedReason: focus` while the desktop's switch says Do Not Disturb."""

import json
import os
import signal
import subprocess

import pytest

from harness.bus import (
    BRIDGE,
    SYSTEM_PYTHON,
    Bridge,
    Session,
    expect_line,
    missing,
    require_python_dbus,
    restart_daemon_under_the_bridge,
    start_notification_server,
    wait_until,
)
from harness.paths import ISLAND
from harness.varlink import subscribe_presenter

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon", "gdbus"),
                                                    reason="island-bridge is not built, or dbus-daemon or gdbus is not installed")]
needs_dunst = pytest.mark.skipif(missing("Xvfb", "dunst", "dunstctl"), reason="Xvfb or dunst is not installed")

COFFEE = "org.example.Coffee"  # a test app of the daemon's, entitled to Live Activities
ALERT = {"title": "Ready", "body": "Counter 2"}
FOLLOWED_ON = "following dunst's pause: Do Not Disturb on"
FOLLOWED_OFF = "following dunst's pause: Do Not Disturb off"


def focus_status(session):
    done = subprocess.run([ISLAND, "admin", "focus", "status", "--socket", session.daemon.socket],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def dunstctl(session, *arguments):
    done = session.run(["dunstctl", *arguments])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def alerting_update(session):
    """The delivery of an alerting update of a test app's activity."""
    with session.daemon.connect("org.island.Producer") as producer:
        activity = producer.Request(app=COFFEE, type="Order", attributes={}, content={"state": {"n": 0}})["activity"]
        return producer.Update(app=COFFEE, id=activity["id"], content={"state": {"n": 1}}, alert=ALERT)["delivery"]


@pytest.fixture
def session():
    session = Session()
    yield session
    session.close()


@needs_dunst
def test_dunst_paused_turns_focus_on_and_resumed_turns_it_off(session):
    start_notification_server(session)
    wait_until(lambda: FOLLOWED_OFF in session.bridge.log(), message="the bridge reading dunst's pause")

    dunstctl(session, "set-paused", "true")
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on")
    assert FOLLOWED_ON in session.bridge.log(), "the log names the switch followed"
    delivery = alerting_update(session)
    assert delivery["alerted"] is False
    assert delivery["alertSuppressed"] is True and delivery["alertSuppressedReason"] == "focus"

    dunstctl(session, "set-paused", "false")
    wait_until(lambda: focus_status(session) == "Do Not Disturb: off", message="focus off")
    delivery = alerting_update(session)
    assert delivery["alerted"] is True and "alertSuppressedReason" not in delivery

    # Paused again, then the bridge stops: the desktop's switch is still on, so focus stays.
    dunstctl(session, "set-paused", "true")
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on again")
    assert session.bridge.stop() == 0
    assert focus_status(session).startswith("Do Not Disturb: on"), "stopping leaves focus as it was"


@needs_dunst
def test_follow_no_leaves_focus_alone_until_reloaded_with_follow_yes(session):
    conf = os.path.join(session.bridge.config_home, "island", "bridge.conf")
    with open(conf, "w") as f:
        f.write("[DoNotDisturb]\nFollow=no\n")
    session.bridge.process.send_signal(signal.SIGHUP)
    wait_until(lambda: "reloaded the configuration" in session.bridge.log(), message="the reload")

    start_notification_server(session)
    dunstctl(session, "set-paused", "true")
    assert dunstctl(session, "is-paused") == "true"

    with open(conf, "w") as f:
        f.write("[DoNotDisturb]\nFollow=yes\n")
    session.bridge.process.send_signal(signal.SIGHUP)
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on once following")
    log = session.bridge.log()
    assert log.count(FOLLOWED_ON) == 1 and FOLLOWED_OFF not in log
    assert log.index(FOLLOWED_ON) > log.rindex("reloaded the configuration"), \
        "nothing was followed while Follow=no"


class GnomeBridge(Bridge):
    """The bridge in a GNOME session (the harness's bridge runs in none)."""

    def start(self):
        env = self.bus.env(XDG_CONFIG_HOME=self.config_home, XDG_DATA_HOME=self.daemon.share,
                           XDG_DATA_DIRS="/usr/share", XDG_CURRENT_DESKTOP="GNOME")
        for key in ("NOTIFY_SOCKET", "JOURNAL_STREAM", "ISLAND_SOCKET", "GSETTINGS_BACKEND"):
            env.pop(key, None)
        self.process = subprocess.Popen([BRIDGE, "--socket", self.daemon.socket, "--log-level", "debug"],
                                        env=env, stdout=open(self.log_path, "a"), stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        wait_until(lambda: "connected to islandd" in self.log() or self.process.poll() is not None,
                   message="the bridge connecting to islandd")
        assert self.process.poll() is None, "island-bridge exited:\n" + self.log()
        return self


@pytest.mark.skipif(missing("gsettings", "dbus-update-activation-environment", "/usr/libexec/dconf-service",
                            "/usr/share/glib-2.0/schemas/org.gnome.desktop.notifications.gschema.xml"),
                    reason="GSettings with dconf, or GNOME's notification schema, is not installed")
def test_gnome_show_banners_off_turns_focus_on_and_on_turns_it_off(session):
    # dconf-service, started by our bus on the first write, keeps the settings in the test's
    # own directories, where the bridge's `gsettings get` reads them.
    session.bridge.stop()
    bridge = GnomeBridge(os.path.join(session.root, "gnome"), session.bus, session.daemon)
    session.bridge = bridge
    runtime = os.path.join(session.root, "runtime")
    os.makedirs(runtime, mode=0o700)
    dconf_env = {"XDG_CONFIG_HOME": bridge.config_home, "XDG_RUNTIME_DIR": runtime}
    done = session.run(["dbus-update-activation-environment", *("%s=%s" % item for item in dconf_env.items())])
    assert done.returncode == 0, done.stderr

    def gsettings(value):
        done = session.run(["gsettings", "set", "org.gnome.desktop.notifications", "show-banners", value], **dconf_env)
        assert done.returncode == 0, done.stderr

    gsettings("true")
    bridge.start()
    wait_until(lambda: "following GNOME's show-banners: Do Not Disturb off" in bridge.log(),
               message="the bridge reading show-banners")

    gsettings("false")
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on")
    assert "following GNOME's show-banners: Do Not Disturb on" in bridge.log()
    delivery = alerting_update(session)
    assert delivery["alertSuppressed"] is True and delivery["alertSuppressedReason"] == "focus"

    gsettings("true")
    wait_until(lambda: focus_status(session) == "Do Not Disturb: off", message="focus off")


def gnome_session(session):
    """The bridge restarted in a GNOME session whose dconf-service (started by our bus on the first
    write) keeps the settings in the test's own directories; `gsettings(...)` sets them there."""
    session.bridge.stop()
    bridge = GnomeBridge(os.path.join(session.root, "gnome"), session.bus, session.daemon)
    session.bridge = bridge
    runtime = os.path.join(session.root, "runtime")
    os.makedirs(runtime, mode=0o700)
    dconf_env = {"XDG_CONFIG_HOME": bridge.config_home, "XDG_RUNTIME_DIR": runtime}
    done = session.run(["dbus-update-activation-environment", *("%s=%s" % item for item in dconf_env.items())])
    assert done.returncode == 0, done.stderr

    def gsettings(*arguments):
        done = session.run(["gsettings", *arguments], **dconf_env)
        assert done.returncode == 0, done.stderr

    return bridge, gsettings


TOLD_LEVELS = "set islandd's desktop lock-screen levels"
APP_SETTINGS = "org.gnome.desktop.notifications.application:/org/gnome/desktop/notifications/application/%s/"


@pytest.mark.skipif(missing("gsettings", "dconf", "dbus-update-activation-environment", "/usr/libexec/dconf-service",
                            "/usr/share/glib-2.0/schemas/org.gnome.desktop.notifications.gschema.xml"),
                    reason="GSettings with dconf, dconf's CLI, or GNOME's notification schema, is not installed")
def test_gnome_per_app_lock_screen_settings_the_user_set_hide_an_apps_activities_while_locked(session):
    """GNOME Settings' "show content on the lock screen" switch, off for an app, makes its
    activities private on the locked screen (a presenter is sent the app's icon and name only);
    "notifications on the lock screen" off makes them absent. An app that merely notified, whose
    details-in-lock-screen is GNOME's default false, is left as it was."""
    bridge, gsettings = gnome_session(session)
    # GNOME Shell registers every app that notifies: its id, and no level.
    gsettings("set", APP_SETTINGS % "org-example-coffee", "application-id", "org.example.Coffee.desktop")
    gsettings("set", "org.gnome.desktop.notifications", "application-children", "['org-example-coffee']")
    with session.daemon.connect("org.island.Extension") as extension:
        extension.RegisterLayout(app=COFFEE, type="Public", layout={
            "lockScreenVisibility": "public", "lockScreen": {"type": "text", "template": "{{state.word}}"}})
    with session.daemon.connect("org.island.Producer") as producer:
        activity = producer.Request(app=COFFEE, type="Public", attributes={}, content={"state": {"word": "OPEN-1"}})["activity"]
    bridge.start()
    wait_until(lambda: "set islandd's desktop lock-screen levels" in bridge.log(), message="the bridge telling GNOME's settings")
    # Locked by the user, once the bridge has said what the (absent) screensavers say.
    wait_until(lambda: "set islandd's lock on=false" in bridge.log(), message="the bridge telling the lock")
    with session.daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=True)

    def locked_item():
        presenter, snapshot = subscribe_presenter(session.daemon)
        presenter.close()
        return next((item for item in snapshot["items"] if item["id"] == activity["id"]), None)

    item = locked_item()
    assert item is not None and "OPEN-1" in json.dumps(item), "GNOME's default is no setting of the user's"

    # The user turns the app's details off in GNOME Settings.
    gsettings("set", APP_SETTINGS % "org-example-coffee", "details-in-lock-screen", "false")
    wait_until(lambda: "OPEN-1" not in json.dumps(locked_item()), message="the activity private while locked")
    item = locked_item()
    assert item["content"] == {"state": {}} and item["attributes"] == {}

    # A daemon that restarted is told again (it holds nothing of it, nor the lock) once the
    # bridge's connection comes back (IslandKit reconnects when the bridge next speaks to
    # islandd, here for a file copy's progress).
    said = bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=1")
    restart_daemon_under_the_bridge(session)
    wait_until(lambda: bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=1") > said, message="the levels said again")
    with session.daemon.connect("org.island.Producer") as producer:
        activity = producer.Request(app=COFFEE, type="Public", attributes={}, content={"state": {"word": "OPEN-2"}})["activity"]
    with session.daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=True)
    item = locked_item()
    assert item is not None and "OPEN-2" not in json.dumps(item)

    # Hidden from the lock screen altogether: absent. Hidden details switched back on (while
    # locked a level can only tighten, so seen at the next lock).
    gsettings("set", APP_SETTINGS % "org-example-coffee", "show-in-lock-screen", "false")
    wait_until(lambda: locked_item() is None, message="the activity absent while locked")
    gsettings("reset", APP_SETTINGS % "org-example-coffee", "show-in-lock-screen")
    said = bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=0 secret=0")
    gsettings("set", APP_SETTINGS % "org-example-coffee", "details-in-lock-screen", "true")
    wait_until(lambda: bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=0 secret=0") > said,
               message="the last change said")
    with session.daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=False)
        admin.SetLock(on=True)
    assert "OPEN-2" in json.dumps(locked_item())

    # A bridge that starts says what it reads, islandd's default too: the bridge before it may
    # have said more, and the user changed the setting meanwhile.
    said = bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=1")
    gsettings("set", APP_SETTINGS % "org-example-coffee", "details-in-lock-screen", "false")
    wait_until(lambda: bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=1") > said, message="private said")
    bridge.stop()
    gsettings("reset", APP_SETTINGS % "org-example-coffee", "details-in-lock-screen")
    said_empty = bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=0 secret=0")
    said_unlocked = bridge.log().count("set islandd's lock on=false")
    bridge.start()
    wait_until(lambda: bridge.log().count(TOLD_LEVELS + " everyAppSecret=false private=0 secret=0") > said_empty
               and bridge.log().count("set islandd's lock on=false") > said_unlocked, message="the new bridge's levels said")
    with session.daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=True)
    assert "OPEN-2" in json.dumps(locked_item())


def start_peer(session, script):
    """A test peer of bridge/ on the session bus, once it owns its name."""
    require_python_dbus()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
    peer = subprocess.Popen([SYSTEM_PYTHON, path], env=session.bus.env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session.processes.append(peer)
    expect_line(peer, "ready")
    return peer


def gdbus_call(session, name, path, method, *arguments):
    done = session.run(["gdbus", "call", "--session", "--dest", name, "--object-path", path, "--method", method, *arguments])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_kde_inhibition_turns_focus_on_and_its_end_turns_it_off(session):
    # Plasma is not installed here: a peer serves its inhibition as Plasma's server does.
    start_peer(session, "kde_notifications_peer.py")
    wait_until(lambda: "following KDE's notification inhibition: Do Not Disturb off" in session.bridge.log(),
               message="the bridge reading Plasma's inhibition")

    def call(method, *arguments):
        return gdbus_call(session, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                          "org.freedesktop.Notifications." + method, *arguments)

    cookie = call("Inhibit", "org.example.Presenter", "Presenting", "{}").strip("(),").split()[-1]
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on")
    assert "following KDE's notification inhibition: Do Not Disturb on" in session.bridge.log()
    assert alerting_update(session)["alertSuppressedReason"] == "focus"

    call("UnInhibit", cookie)
    wait_until(lambda: focus_status(session) == "Do Not Disturb: off", message="focus off")


def test_swaync_dnd_turns_focus_on_and_off(session):
    # swaync is not installed here: a peer serves its control interface as swaync does.
    start_peer(session, "swaync_peer.py")
    wait_until(lambda: "following swaync's Do Not Disturb: Do Not Disturb off" in session.bridge.log(),
               message="the bridge reading swaync's Do Not Disturb")

    def set_dnd(state):
        gdbus_call(session, "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc.SetDnd", state)

    set_dnd("true")
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on")
    assert "following swaync's Do Not Disturb: Do Not Disturb on" in session.bridge.log()
    assert alerting_update(session)["alertSuppressedReason"] == "focus"
    set_dnd("false")
    wait_until(lambda: focus_status(session) == "Do Not Disturb: off", message="focus off")


def test_mako_do_not_disturb_mode_turns_focus_on_and_off(session):
    # mako is not installed here: a peer serves its modes as mako does.
    start_peer(session, "mako_peer.py")
    wait_until(lambda: "following mako's do-not-disturb mode: Do Not Disturb off" in session.bridge.log(),
               message="the bridge reading mako's modes")

    def set_modes(modes):
        gdbus_call(session, "org.freedesktop.Notifications", "/fr/emersion/Mako", "fr.emersion.Mako.SetModes", modes)

    set_modes("['default', 'do-not-disturb']")
    wait_until(lambda: focus_status(session).startswith("Do Not Disturb: on"), message="focus on")
    assert "following mako's do-not-disturb mode: Do Not Disturb on" in session.bridge.log()
    assert alerting_update(session)["alertSuppressedReason"] == "focus"
    set_modes("['default']")
    wait_until(lambda: focus_status(session) == "Do Not Disturb: off", message="focus off")
