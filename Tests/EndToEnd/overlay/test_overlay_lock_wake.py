"""An alert while the session is locked wakes the screen: island-overlay asks the session bus's
org.freedesktop.ScreenSaver to `SimulateUserActivity` (what KDE's locker and
xfce4-screensaver take as the user's touch), and only then: not for an alert while unlocked,
not for an update that does not alert, and never for a secret activity, of which islandd sends
a locked session's presenters nothing at all. The owner of the name here is a stand-in
(screensaver_peer.py) that prints each call it gets; the overlay is the real one in headless
sway, locked as island-bridge locks islandd (`island admin lock on`).

The calls go out in the order the overlay read the daemon's updates, on one bus connection:
so once the call for the last alert has arrived, a call for an earlier update would have
arrived before it, and counting the calls then says which updates woke the screen."""

import os

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.paths import LIVENESS

REASON = desktop.why_not("sway", "swaymsg", "grim") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "screensaver_peer.py")
# The other app's activities are secret on the lock screen (the user's choice).
CONFIG = scenes.DAEMON_CONFIG + "[LockScreen:%s]\nVisibility=secret\n" % scenes.OTHER
ALERT = {"title": "Your order", "body": "is at the door"}


def wakes(session):
    return [line for line in session.log("screensaver").splitlines() if line.startswith("woken by ")]


def test_an_alert_while_locked_wakes_the_screen_and_nothing_else_does():
    with scenes.sway_world("lock-wake", daemon_config=CONFIG) as world:
        session = world.session
        peer = session.spawn("screensaver", ["python3", PEER])
        desktop.wait_until(lambda: session.alive(peer) and "ready" in session.log("screensaver"), LIVENESS,
                           "the screen saver owning its name")
        desktop.wait_until(lambda: any("subscribed;" in line for line in scenes.log_lines(world.overlay)), LIVENESS,
                           "the overlay subscribed")
        producer = scenes.Producer(session)
        public = producer.request()
        secret = producer.request(app=scenes.OTHER)

        producer.update(public, scenes.state(minutes=11), alert=ALERT)  # unlocked: the screen is on
        session.island("admin", "lock", "on")
        producer.update(secret, scenes.state(minutes=10), app=scenes.OTHER, alert=ALERT)  # secret: nothing is sent
        producer.update(public, scenes.state(minutes=9))  # no alert
        producer.update(public, scenes.state(minutes=8), alert=ALERT)
        desktop.wait_until(lambda: wakes(session), LIVENESS, "the screen woken")
        assert len(wakes(session)) == 1, wakes(session)

        session.island("admin", "lock", "off")
        producer.update(public, scenes.state(minutes=7), alert=ALERT)  # unlocked again
        session.island("admin", "lock", "on")
        producer.update(public, scenes.state(minutes=6), alert=ALERT)
        desktop.wait_until(lambda: len(wakes(session)) >= 2, LIVENESS, "the screen woken again")
        assert len(wakes(session)) == 2, wakes(session)
        world.overlay.alive()
