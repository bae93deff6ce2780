"""Screen sharing hides activity content (docs/design.md §13): a screen-cast session on the portal
(bridge/screencast_portal_peer.py serves xdg-desktop-portal's ScreenCast, which is not installed
here; bridge/screencast_client.py casts as OBS does) is seen by the real island-bridge's monitor,
which tells the real islandd; a presenter — the raw Presenter stream and `island-presenter waybar` —
shows the app and the island's shape but no content while the session lives, and all of it again
once the client closes the session, the portal closes it, or the client leaves. `island admin
sharing on` hides it too, and nothing a producer sends shows it meanwhile."""

import os
import subprocess

import pytest

from harness.bus import (
    BRIDGE,
    SYSTEM_PYTHON,
    Presenter,
    Session,
    expect_line,
    missing,
    require_python_dbus,
    wait_until,
)
from harness.paths import ISLAND
from harness.presenters import Presenter as BarPresenter
from harness.presenters import waybar_json

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon"),
                                                    reason="island-bridge is not built, or dbus-daemon is not installed")]

COFFEE = "org.example.Coffee"  # a test app of the daemon's, entitled to Live Activities
SECRET = "SECRET-4711"
HIDDEN = "Hidden while sharing"
# A producer that asks for everything to show: its own text everywhere, a button, progress,
# and hideContentOnLockScreen false.
LAYOUT = {
    "hideContentOnLockScreen": False,
    "compactLeading": {"type": "text", "template": "{{state.secret}}"},
    "compactTrailing": {"type": "text", "template": "{{attributes.title}}"},
    "minimal": {"type": "progress", "value": "{{state.progress}}", "total": 1},
    "lockScreen": {"type": "vstack", "children": [
        {"type": "text", "template": "{{state.secret}}"},
        {"type": "button", "action": "reveal", "label": "Reveal {{state.secret}}"},
    ]},
    "chip": "Pay",
}
HERE = os.path.dirname(os.path.abspath(__file__))
# Start calls a hostile peer floods with: hundreds of times the pending table of old.
FLOOD = 20_000


@pytest.fixture(scope="module")
def session():
    require_python_dbus()
    session = Session()
    with session.daemon.connect("org.island.Extension") as extension:
        extension.RegisterLayout(app=COFFEE, type="Transfer", layout=LAYOUT)
    with session.daemon.connect("org.island.Producer") as producer:
        producer.Request(app=COFFEE, type="Transfer", attributes={"title": "Bank transfer"},
                         content={"state": {"secret": SECRET, "progress": 0.5}})
    yield session
    session.close()


def sharing(session, *arguments):
    done = subprocess.run([ISLAND, "admin", "sharing", *arguments, "--socket", session.daemon.socket],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def hidden(presenter):
    """Whether the presenter's last snapshot says content is hidden, and no item shows any."""
    items = list(presenter.items.values())
    return (presenter.last_sharing.get("contentHidden") is True and items
            and all(item["content"]["state"] == {} and item["attributes"] == {} for item in items))


class SharingPresenter(Presenter):
    """The raw stream, remembering the sharing state of the last snapshot."""

    def apply(self, update):
        if update["kind"] == "snapshot":
            self.last_sharing = update.get("sharing", {})
        super().apply(update)


def assert_nothing_leaks(presenter):
    text = repr(presenter.items)
    for word in (SECRET, "Bank transfer", "Reveal", "progress", "Pay"):
        assert word not in text, "%s reached a presenter while shared" % word


def start_peer(session, script):
    peer = subprocess.Popen([SYSTEM_PYTHON, os.path.join(HERE, script)], env=session.bus.env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session.processes.append(peer)
    return peer


def command(process, line, answer):
    process.stdin.write(line + "\n")
    process.stdin.flush()
    return expect_line(process, answer)


def test_a_portal_cast_hides_content_until_it_ends(session):
    portal = start_peer(session, "screencast_portal_peer.py")
    expect_line(portal, "ready")
    wait_until(lambda: "following screen casts" in session.bridge.log(), message="the bridge's monitor")
    presenter = SharingPresenter(session.daemon)
    bar = BarPresenter(session.daemon, "waybar")
    try:
        assert not hidden(presenter) and SECRET in repr(presenter.items)
        bar.next_line(lambda line: SECRET in waybar_json(line)["text"])

        # The client casts: hidden until it closes the session.
        client = start_peer(session, "screencast_client.py")
        expect_line(client, "started")
        presenter.wait(hidden, message="content hidden while the portal casts")
        assert_nothing_leaks(presenter)
        assert any(item["layout"]["lockScreen"]["children"][1]["template"] == HIDDEN for item in presenter.items.values())
        assert sharing(session, "status").startswith("Screen sharing: on since ")
        assert "(portal), content hidden" in sharing(session, "status")
        line = waybar_json(bar.next_line(lambda line: "sharing" in waybar_json(line)["class"]))
        assert SECRET not in line["text"] + line["tooltip"] and "Bank" not in line["text"] + line["tooltip"]
        assert HIDDEN in line["tooltip"]
        assert "the screen is shared" in session.bridge.log()

        command(client, "close", "closed")
        presenter.wait(lambda p: not p.last_sharing.get("on") and SECRET in repr(p.items), message="content back after Close")
        assert sharing(session, "status") == "Screen sharing: off"
        bar.next_line(lambda line: SECRET in waybar_json(line)["text"] and "sharing" not in waybar_json(line)["class"])

        # The portal ends a session itself (Session.Closed).
        client = start_peer(session, "screencast_client.py")
        expect_line(client, "started")
        presenter.wait(hidden, message="content hidden for the second cast")
        command(portal, "close-all", "closed-all")
        presenter.wait(lambda p: not p.last_sharing.get("on"), message="content back after Closed")

        # The client leaves the bus without closing.
        client = start_peer(session, "screencast_client.py")
        expect_line(client, "started")
        presenter.wait(hidden, message="content hidden for the third cast")
        client.stdin.close()
        client.wait(timeout=60)
        presenter.wait(lambda p: not p.last_sharing.get("on"), message="content back after the client left")
    finally:
        bar.stop()
        presenter.close()


def test_admin_sharing_hides_content_and_no_producer_can_show_it(session):
    presenter = SharingPresenter(session.daemon)
    try:
        assert sharing(session, "on").startswith("Screen sharing: on since ")
        presenter.wait(hidden, message="content hidden by island admin sharing on")
        assert "(manual)" in sharing(session, "status")

        # The producer updates with an alert and a new layout saying show everything.
        with session.daemon.connect("org.island.Extension") as extension:
            extension.RegisterLayout(app=COFFEE, type="Transfer", layout=dict(LAYOUT, hideContentOnLockScreen=False))
        with session.daemon.connect("org.island.Producer") as producer:
            activity = producer.Request(app=COFFEE, type="Transfer", attributes={"title": "Bank transfer", "hideContent": False},
                                        content={"state": {"secret": SECRET, "progress": 0.9}})["activity"]
            delivery = producer.Update(app=COFFEE, id=activity["id"], content={"state": {"secret": SECRET + "-again"}},
                                       alert={"title": SECRET, "body": "Bank transfer"})["delivery"]
        assert delivery["alerted"] is True, "the alert applies: only its words are withheld"
        presenter.wait(lambda p: activity["id"] in p.items, message="the new activity")
        presenter.wait(lambda p: p.last.get("alert") is not None, message="the alert")
        assert presenter.last["alert"] == {"id": activity["id"], "title": "", "body": ""}
        assert hidden(presenter)
        assert_nothing_leaks(presenter)

        assert sharing(session, "off") == "Screen sharing: off"
        presenter.wait(lambda p: SECRET + "-again" in repr(p.items), message="content back after island admin sharing off")
    finally:
        presenter.close()


def test_follow_no_leaves_sharing_alone():
    require_python_dbus()
    session = Session(bridge_config="[ScreenSharing]\nFollow=no\n")
    try:
        portal = start_peer(session, "screencast_portal_peer.py")
        expect_line(portal, "ready")
        client = start_peer(session, "screencast_client.py")
        expect_line(client, "started")
        # No monitor is made for screen casts at all, so nothing can say the screen is shared.
        assert "following screen casts" not in session.bridge.log()
        assert sharing(session, "status") == "Screen sharing: off"
        command(client, "close", "closed")
        assert "the screen is shared" not in session.bridge.log()
    finally:
        session.close()


def test_a_flood_of_refused_starts_neither_hides_a_real_cast_nor_stops_the_monitor(session):
    """A hostile peer calls Start for a session it does not own, as fast as it can, while a real
    client's Start waits for the portal's answer: the portal refuses every one of the flood, and
    the real cast is still counted once the portal answers — the flood pushes out only the
    flooder's own pending calls — and the bridge still reads its monitor afterwards: the
    client's Close is seen."""
    portal = start_peer(session, "screencast_portal_peer.py")
    expect_line(portal, "ready")
    wait_until(lambda: "following screen casts" in session.bridge.log(), message="the bridge's monitor")
    presenter = SharingPresenter(session.daemon)
    try:
        presenter.wait(lambda p: SECRET in repr(p.items), message="the activity, shown")
        command(portal, "hold", "holding")
        client = start_peer(session, "screencast_client.py")
        expect_line(portal, "held")
        # The client's own session: the one the portal made for it, named by its unique name.
        flooder = subprocess.Popen([SYSTEM_PYTHON, os.path.join(HERE, "screencast_flood_peer.py"),
                                    "/org/freedesktop/portal/desktop/session/1_999/cast", str(FLOOD)],
                                   env=session.bus.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        session.processes.append(flooder)
        flooded = expect_line(flooder, "flooded")
        assert int(flooded.split()[1]) > FLOOD, flooded
        command(portal, "release", "released")
        expect_line(client, "started")
        presenter.wait(hidden, message="content hidden: the real cast counted despite the flood")
        assert "(portal), content hidden" in sharing(session, "status")
        assert_nothing_leaks(presenter)

        command(client, "close", "closed")
        presenter.wait(lambda p: not p.last_sharing.get("on") and SECRET in repr(p.items),
                       message="content back: the bridge still reads its monitor after the flood")
        assert sharing(session, "status") == "Screen sharing: off"
        flooder.stdin.close()
        flooder.wait(timeout=60)
    finally:
        presenter.close()
