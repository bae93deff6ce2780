"""Do Not Disturb on a real compositor (docs/design.md §13): with `island admin focus on`, an
alerting update changes the compact island in headless sway without drawing its alert, and the
update's reply says `focus`; with focus off again, the next alert shows. The overlay draws what the
daemon's presenter stream says, so the first change on screen after an update is that update's: the
test waits for it rather than for a time. Set ISLAND_DESKTOP_SHOTS=DIR to keep the screenshots."""

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.overlay_scenes import size

REASON = desktop.why_not("sway", "swaymsg", "swaybg", "grim") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

ALERT = {"title": "Your order is ready", "body": "Pick it up"}
COMPACT_HEIGHT = 60  # taller than the compact capsule, shorter than an alert


def changed_from(image, box):
    """A check for Screen.settled: something is drawn, and the pixels inside `box` differ from
    `image`'s there (the island redrawn since `image`)."""
    return lambda later, now: now is not None and later.crop(box).pixels != image.crop(box).pixels


def test_focus_keeps_an_alert_from_expanding_the_island_and_the_reply_says_so():
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        # The frame log says when the island is at rest: the photograph the update is compared
        # with must not be a frame of the island's arrival, which the end of that morph would
        # change as well.
        overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\n")
        producer = scenes.Producer(session)
        activity = producer.request()
        screen = scenes.Screen(sway, "focus")
        scenes.at_rest(overlay, "compact")
        image, box = screen.settled(lambda image, box: box is not None and size(box)[1] < COMPACT_HEIGHT,
                                    name="compact", what="the compact island")

        assert "on" in session.island("admin", "focus", "on")
        since = scenes.mark(overlay)
        delivery = producer.update(activity, scenes.state(minutes=5), alert=ALERT)["delivery"]
        assert delivery["alerted"] is False
        assert delivery["alertSuppressed"] is True and delivery["alertSuppressedReason"] == "focus", delivery
        scenes.at_rest(overlay, "compact", since)
        image, quiet = screen.settled(changed_from(image, box), name="focus-on-update",
                                      what="the update drawn while focus is on")
        assert size(quiet)[1] < COMPACT_HEIGHT, "the alert expanded the island although focus is on: %s" % (quiet,)

        # The control: with focus off the same kind of update shows its alert.
        assert "off" in session.island("admin", "focus", "off")
        delivery = producer.update(activity, scenes.state(minutes=3), alert=ALERT)["delivery"]
        assert delivery["alerted"] is True, delivery
        screen.settled(lambda image, box: box is not None and size(box)[1] > COMPACT_HEIGHT,
                       name="focus-off-alert", what="the alert, with focus off")
        assert overlay.alive()
    finally:
        session.close()
