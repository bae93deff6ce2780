"""island-overlay on X11: an Xvfb server run as the unprivileged test user with its own session bus,
the user's real islandd and the real island-overlay; input with xdotool, screenshots through the
X protocol (harness/x11_screen.py). The overlay is an unmanaged window at the top centre, and a click on it
expands the island. Set ISLAND_DESKTOP_SHOTS=DIR to keep the screenshots."""

import time

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.overlay_scenes import centre, size
from harness.paths import LIVENESS

REASON = desktop.why_not("Xvfb", "xdotool", "xwininfo") or desktop.overlay_missing()
pytestmark = [pytest.mark.quick, pytest.mark.skipif(bool(REASON), reason=REASON or "")]


@pytest.fixture(scope="module")
def x11():
    session = desktop.UserSession()
    try:
        session.start_bus()
        xvfb = desktop.Xvfb(session)
        opener = scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        # The frame log says when the island is at rest.
        overlay = desktop.Overlay(session, dict(xvfb.env, ISLAND_OVERLAY_FRAME_LOG="1"),
                                  config=scenes.overlay_config(opener))
        yield session, xvfb, overlay
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


def test_an_unmanaged_window_at_the_top_centre_expands_on_click(x11):
    session, xvfb, overlay = x11
    screen = scenes.Screen(xvfb, "x11")
    live = scenes.Producer(session)
    try:
        assert screen.capsule(screen.grab("empty")) is None, "something is drawn with nothing live"
        since = scenes.mark(overlay)
        live.request()
        scenes.at_rest(overlay, "compact", since)
        image, compact = screen.settled(lambda image, box: box is not None, name="compact")
        assert abs(centre(compact)[0] - image.width / 2) <= 2, compact
        assert compact[1] <= 24, compact
        assert 16 <= size(compact)[1] <= 64 and size(compact)[0] <= image.width // 3, compact
        # Unmanaged: override-redirect, so no window manager could move or decorate it.
        tree = session.run(["xwininfo", "-root", "-children"], env=xvfb.env).stdout.decode()
        windows = [line.split()[0] for line in tree.splitlines() if line.strip().startswith("0x")]
        redirected = [w for w in windows
                      if "Override Redirect State: yes" in session.run(["xwininfo", "-id", w], env=xvfb.env).stdout.decode()
                      and "Map State: IsViewable" in session.run(["xwininfo", "-id", w], env=xvfb.env).stdout.decode()]
        assert redirected, "no mapped override-redirect window:\n" + tree
        since = scenes.mark(overlay)
        xvfb.click(*centre(compact))
        scenes.at_rest(overlay, "expanded", since)
        image, expanded = screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1],
                                         name="expanded")
        assert abs(centre(expanded)[0] - image.width / 2) <= 2 and expanded[1] <= 24, expanded
        # The pointer leaving the island does not collapse it (with no window manager, X11's
        # focus follows the pointer: leaving is a focus-out, which is not a click elsewhere).
        since = scenes.mark(overlay)
        xvfb.park()
        # The leave handled (the frame log says so as it hands it on), then an update drawn is the
        # marker: whatever the leaving set off in the overlay ran before it. (The second since is
        # only a lower bound, for a timer it started to be due.)
        desktop.wait_until(lambda: "island-overlay: the pointer left" in scenes.log_lines(overlay, since), LIVENESS,
                           "the overlay hearing the pointer leave")
        time.sleep(1)
        later = scenes.redrawn(screen, live, live.started[-1][1], image, expanded)
        assert "collapse" not in overlay.log() and size(screen.capsule(later))[1] > 2 * size(compact)[1], \
            "the expanded island collapsed when the pointer left it:\n" + overlay.log()[-2000:]
        # No window manager here: the log says fullscreen windows are not followed.
        assert "X11 with no EWMH window manager" in overlay.log(), overlay.log()
        assert overlay.alive()
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        live.end_all()



def test_reserve_does_not_apply():
    """Reserve=yes on X11: there is no exclusive zone to take, and the log says so; the island
    shows as ever."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        xvfb = desktop.Xvfb(session)
        scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = desktop.Overlay(session, xvfb.env, config="[Overlay]\nReserve=yes\n")
        scenes.Producer(session).request()
        scenes.Screen(xvfb, "x11-reserve").settled(lambda image, box: box is not None, name="compact")
        assert "Reserve=yes does not apply on X11" in overlay.log(), overlay.log()
        assert overlay.alive()
    finally:
        session.close()
