"""island-bridge follows the desktop's Do Not Disturb into islandd's focus (docs/design.md §13):
real dunst under Xvfb paused and resumed with dunstctl, GNOME's show-banners set with gsettings
through a real dconf-service, and KDE's inhibition, swaync's Do Not Disturb and mako's
do-not-disturb mode from peers serving them as Plasma, swaync and mako do
(bridge/kde_notifications_peer.py, swaync_peer.py, mako_peer.py: none is installed here); the real
islandd asked with `island admin focus status`, and an alerting update of another app whose reply
says `alertSuppressedReason: focus` while the desktop's switch says Do Not Disturb."""

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
    start_notification_server,
    wait_until,
)
from harness.paths import ISLAND

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
