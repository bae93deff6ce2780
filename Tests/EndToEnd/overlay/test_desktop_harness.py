"""The desktop harness the overlay's tests stand on (desktop.py), proved with a stand-in client
(foot) so that a failure of the overlay's tests is the overlay's: headless sway runs as the test
user, grim's screenshots are read right, and clicks sent with `swaymsg seat - cursor …` reach a
surface only once the virtual pointer gives the seat a pointer (WLR_LIBINPUT_NO_DEVICES=1 leaves
it none). About 3 s."""

import os
import re

import pytest

from harness import desktop
from harness.paths import LIVENESS

REASON = desktop.why_not("sway", "swaymsg", "swaybg", "grim", "foot")
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")


def test_screenshots_and_pointer_clicks_reach_a_real_client():
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        image = sway.screenshot()
        assert (image.width, image.height) == (sway.width, sway.height) == (1280, 720)
        assert image.pixel(640, 360) == desktop.BACKGROUND and image.pixel(0, 0) == desktop.BACKGROUND

        # foot fills the tiled output with its background; with mouse reporting on (DECSET
        # 1000) every click arrives on its terminal as bytes, which cat records. foot reads what
        # its shell writes in order: once the background turns black (OSC 11, written after the
        # DECSET), mouse reporting is on.
        clicks = os.path.join(session.home, "clicks")
        session.spawn("foot", ["foot", "-o", "colors.background=505050", "sh", "-c",
                               "stty raw -echo; printf '\\033[?1000h\\033]11;#000000\\033\\\\'; exec cat > %s" % clicks])
        desktop.wait_until(lambda: sway.screenshot().box(*desktop.DARK) == (0, 0, 1280, 720), LIVENESS,
                           "foot's window, black once mouse reporting is on")

        sway.move(640, 360)
        sway.swaymsg("seat", "-", "cursor", "press", "button1")
        sway.swaymsg("seat", "-", "cursor", "release", "button1")

        # A click elsewhere with the pointer is the marker: foot reports clicks in order, so the
        # first report is where the pointerless click was (the middle) if that one got through.
        sway.start_pointer()
        sway.click(320, 200)
        data = desktop.wait_until(lambda: open(clicks, "rb").read(), LIVENESS, "the click reaching foot")
        # X10 mouse reports (press, release): ESC [ M, button+32, column+33, row+33, 1-based
        # cells of the size foot logs.
        cell = re.search(r"cell width=(\d+), height=(\d+)", session.log("foot"))
        width, height = int(cell.group(1)), int(cell.group(2))
        assert data.startswith(b"\x1b[M ") and len(data) >= 6, data
        assert (data[4] - 32, data[5] - 32) != (640 // width + 1, 360 // height + 1), \
            "a click reached a client while the seat had no pointer: %r" % data
        assert (data[4] - 32, data[5] - 32) == (320 // width + 1, 200 // height + 1), data
    finally:
        session.close()
