"""island-overlay beside a fullscreen window on X11, where there is no layer shell: Xvfb with i3, a
real EWMH window manager, run as the unprivileged test user, the user's real islandd and the real
island-overlay. The overlay reads the root's _NET_ACTIVE_WINDOW and that window's _NET_WM_STATE; an
ordinary X11 window (GTK, one flat colour, no borders: it fills the screen tiled or fullscreen) is
made fullscreen with `i3-msg fullscreen enable`. Screenshots through the X protocol (harness/x11_screen.py); set
ISLAND_DESKTOP_SHOTS=DIR to keep them, and ISLAND_X11_GALLERY=DIR (the guides' is docs/gallery) to
save the top of the screen hidden and with the alert as x11-fullscreen-*.png."""

import os

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.overlay_scenes import centre, size
from harness.paths import LIVENESS

REASON = (desktop.why_not("Xvfb", "i3", "i3-msg", "gjs") or desktop.overlay_missing())
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

GALLERY = os.environ.get("ISLAND_X11_GALLERY")
WINDOW = (0x20, 0x30, 0x40)  # the window's colour: a dark video, neither the capsule's black nor its text


class OverWindow(scenes.Screen):
    """Screenshots of the Xvfb, where the test window fills the screen: the island is what is
    not the window's colour."""

    def __init__(self, xvfb, prefix):
        super().__init__(xvfb, prefix)
        self.background = WINDOW

    def capsule(self, image):
        return image.box_not(self.background, region=self.top(image))

    def gallery(self, image, box, name):
        if GALLERY:
            os.makedirs(GALLERY, exist_ok=True)
            bottom = box[3] + 24 if box else 110
            image.crop((0, 0, image.width, min(image.height, bottom))).save_png(
                os.path.join(GALLERY, "x11-fullscreen-%s.png" % name))


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        xvfb = desktop.Xvfb(session)
        i3 = desktop.I3(session, xvfb)
        opener = scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = desktop.Overlay(session, xvfb.env, config=scenes.overlay_config(opener))
        desktop.wait_until(lambda: "from the EWMH window manager" in overlay.log(), LIVENESS,
                           "the overlay finding i3")
        i3.window("#%02x%02x%02x" % WINDOW)
        yield session, xvfb, i3, overlay
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


def test_fullscreen_hides_the_island_and_an_alert_shows_over_it(world):
    """Fullscreen=alerts (the default): over an ordinary window the island shows, and raises
    itself again when the window is raised over it; once i3 makes the window fullscreen it draws nothing; an
    alerting update shows over the window for the alert's duration, and then the island is gone
    again; when fullscreen ends the compact island is back."""
    session, xvfb, i3, overlay = world
    screen = OverWindow(xvfb, "x11-fullscreen")
    producer = scenes.Producer(session)
    try:
        activity = producer.request()
        screen.settled(lambda image, box: box is not None and size(box)[1] < 60, name="compact",
                       what="the compact island over the window")
        # A window manager that raises a window to the top of the stack (i3 does not) puts it
        # over the override-redirect island, which raises itself again.
        i3.raise_window()
        screen.settled(lambda image, box: box is not None and size(box)[1] < 60, name="raised",
                       what="the compact island over the raised window")

        i3.fullscreen(True)
        desktop.wait_until(lambda: "island-overlay: desktop: fullscreen yes" in overlay.log(), LIVENESS,
                           "the overlay hearing of the fullscreen window")
        image, _ = screen.settled(lambda image, box: box is None, name="hidden", what="nothing beside the fullscreen window")
        screen.gallery(image, None, "hidden")

        producer.update(activity, scenes.state(minutes=5), alert={"title": "Your order is ready", "body": "Pick it up"})
        image, box = screen.settled(lambda image, box: box is not None and size(box)[1] > 40, name="alert",
                                    what="the alert over the fullscreen window")
        assert abs(centre(box)[0] - image.width / 2) <= 2 and box[1] <= 24, box
        screen.gallery(image, box, "alert")
        assert "raised over the fullscreen window" in overlay.log(), overlay.log()
        producer.collapse(activity)  # the test's alerts last an hour (scenes.DAEMON_CONFIG)
        screen.settled(lambda image, box: box is None, name="after-alert", what="the island gone after the alert")

        i3.fullscreen(False)
        desktop.wait_until(lambda: "island-overlay: desktop: fullscreen no" in overlay.log(), LIVENESS,
                           "the overlay hearing that fullscreen ended")
        screen.settled(lambda image, box: box is not None and size(box)[1] < 60, name="window-back",
                       what="the compact island beside the window again")
        assert overlay.alive()
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        producer.end_all()
