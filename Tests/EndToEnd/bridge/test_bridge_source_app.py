"""A producer heading its cards with the app it speaks for (Request's `sourceApp`, docs/design.md §5
and §11), against a real islandd with real peers: a process that is not entitled, one that is the
entitled app only by its claim, an entitled one naming an app that is not installed, and one naming
an installed app, whose item presenters get headed by that app; and the bridge, when islandd does
not let it speak for the apps it verified, showing them under its own name."""

import json
import os
import subprocess
import sys

import pytest

from harness.bus import APP, BRIDGE, Presenter, Session, admin, app_interpreter, install_entry, missing
from harness.paths import LIVENESS
from harness.processes import stop_process

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not os.path.exists(BRIDGE) or missing("dbus-daemon"),
                                reason="island-bridge is not built, or dbus-daemon is not installed")]

RELAY = "org.island.test.Relay"
PLAYER = "org.island.test.Player"

# One Request on a connection of its own, from the process that runs this: its executable is
# what islandd recognises it by.
CLIENT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(float(sys.argv[3]))
s.connect(sys.argv[1])
s.sendall(json.dumps({"method": "org.island.Producer.Request", "parameters": json.loads(sys.argv[2])}).encode() + b"\0")
data = b""
while not data.endswith(b"\0"):
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data.rstrip(b"\0").decode())
"""


@pytest.fixture(scope="module")
def session():
    # The bridge's own session: its islandd, with the bridge's entry, and nothing bridged here.
    session = Session()
    yield session
    session.close()


@pytest.fixture(scope="module")
def relay(session):
    """A copy of python3 named `relay`, whose installed entry entitles it to speak for other
    apps, and an installed player app it speaks for."""
    python = app_interpreter(session, "relay")
    applications = os.path.join(session.daemon.share, "applications")
    with open(os.path.join(applications, RELAY + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Relay\nIcon=network-transmit\nExec=%s\n"
                "X-Island-LiveActivities=true\nX-Island-SourceApps=true\n" % os.path.realpath(python))
    with open(os.path.join(applications, PLAYER + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Test Player\nIcon=test-player\nExec=/usr/bin/false\n")
    reply = admin(session.daemon, "Reload", {})
    assert "error" not in reply, reply
    return python


def request(session, python, app, source_app):
    parameters = {"app": app, "type": "NowPlaying", "attributes": {}, "content": {"state": {"title": "T"}},
                  "sourceApp": source_app}
    done = subprocess.run([python, "-c", CLIENT, session.daemon.socket, json.dumps(parameters), str(LIVENESS)],
                          capture_output=True, text=True, timeout=LIVENESS)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_app_not_entitled_cannot_head_its_card_with_another(session, relay):
    reply = request(session, sys.executable, "org.example.Coffee", PLAYER)
    assert reply["error"] == "org.island.PermissionDenied"
    assert reply["parameters"] == {
        "role": "producer",
        "reason": "org.example.Coffee speaks only for itself: its desktop entry does not declare X-Island-SourceApps=true"}


def test_the_entitled_app_by_its_claim_alone_cannot(session, relay):
    # In the user scope the claim binds the producer role; speaking for others takes islandd
    # recognising the process itself.
    reply = request(session, sys.executable, RELAY, PLAYER)
    assert reply["error"] == "org.island.PermissionDenied"
    assert "only by its own claim" in reply["parameters"]["reason"]


def test_an_entitled_producer_naming_an_app_not_installed_is_told_so(session, relay):
    reply = request(session, relay, RELAY, "org.island.test.Gone")
    assert reply["error"] == "org.island.Unentitled"
    assert reply["parameters"]["app"] == "org.island.test.Gone"
    assert "no desktop entry org.island.test.Gone.desktop" in reply["parameters"]["reason"]


def test_an_entitled_producer_heads_the_card_with_the_installed_app(session, relay):
    presenter = Presenter(session.daemon)
    try:
        reply = request(session, relay, RELAY, PLAYER)
        activity = reply["parameters"]["activity"]
        assert (activity["app"], activity["sourceApp"]) == (RELAY, PLAYER)
        item = presenter.wait(lambda p: p.items.get(activity["id"]), message="the relayed activity")
        assert (item["app"], item["sourceApp"]) == (RELAY, PLAYER)
        assert (item["appName"], item["appIcon"]) == ("Test Player", "test-player"), "the player's own entry, read by islandd"
        assert (item["producerName"], item["producerIcon"]) == ("Relay", "network-transmit")
    finally:
        presenter.close()


def test_a_bridge_islandd_does_not_entitle_heads_the_card_itself(session):
    # A player islandd knows, which the bridge verifies: a copy of python3 its entry names.
    python = app_interpreter(session, "testaudio")
    install_entry(session, "org.island.test.Audio", "Test Audio", "test-audio", os.path.realpath(python))
    entry = os.path.join(session.daemon.share, "applications", APP + ".desktop")
    with open(entry) as f:
        original = f.read()
    assert "X-Island-SourceApps=true\n" in original
    presenter = Presenter(session.daemon)
    peer = None
    try:
        with open(entry, "w") as f:
            f.write(original.replace("X-Island-SourceApps=true\n", ""))
        assert "error" not in admin(session.daemon, "Reload", {})
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpris_peer.py")
        peer = session.spawn([python, script, "testaudio", "org.island.test.Audio", "Test Audio", "Fallback"], "testaudio")
        item = presenter.item("NowPlaying", lambda i: i["content"]["state"].get("title") == "Fallback")
        assert item["attributes"]["app"]["desktopEntry"] == "org.island.test.Audio", "the bridge verified the player"
        assert "sourceApp" not in item and item["appName"] == "Island Bridge", \
            "refused sourceApp, the bridge asked again without it: the card is headed by the bridge"
    finally:
        if peer is not None:
            stop_process(peer)
        presenter.close()
        with open(entry, "w") as f:
            f.write(original)
        admin(session.daemon, "Reload", {})
