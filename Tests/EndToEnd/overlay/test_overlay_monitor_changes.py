"""island-overlay follows monitor changes while it runs (docs/user-guide.md, "Which monitor"):
on a real headless sway, while activities are shown, an output's scale changes, an output is
created, its mode and scale change, and it is disabled again; after each change the island's
window fits its monitor as it is then — the capsule at the top centre of that output and the
open list ending above the output's bottom edge, in grim's screenshots — and the overlay logs
the output, its geometry and the canvas it fitted. Set ISLAND_DESKTOP_SHOTS=DIR to keep the
screenshots as PNGs."""

import re

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.overlay_scenes import centre
from harness.paths import LIVENESS

REASON = desktop.why_not("sway", "swaymsg", "swaybg", "grim") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")


def outputs(sway):
    """sway's active outputs by name: (logical rect, scale)."""
    return {o["name"]: (o["rect"], o["scale"]) for o in sway.outputs()}


def physical(sway, rect):
    """`rect` (logical, as sway says it) in grim's pixels: grim draws the whole layout at the
    highest scale of its outputs."""
    scale = max(scale for _, scale in outputs(sway).values())
    return tuple(int(round(v * scale)) for v in (rect["x"], rect["y"], rect["x"] + rect["width"], rect["y"] + rect["height"]))


def drawn_on(sway, name):
    """A check for Screen.settled: what is drawn on output `name` (the capsule, and the list if
    open) is at its top centre and ends above its bottom edge by the list's margin, whole; the
    same output must be there all along (sway's rect is read at each shot)."""
    def check(image, _):
        rect, _ = outputs(sway).get(name, (None, None))
        if rect is None:
            return False
        x0, y0, x1, y1 = physical(sway, rect)
        box = image.box_not(desktop.BACKGROUND, region=(x0, y0, x1, y1))
        if box is None:
            return False
        scale = (x1 - x0) / rect["width"]
        return abs(centre(box)[0] - (x0 + x1) / 2) <= 2 * scale and box[1] < y0 + 24 * scale and box[3] <= y1 - 4 * scale
    return check


def panel_height(sway, name, image):
    x0, y0, x1, y1 = physical(sway, outputs(sway)[name][0])
    box = image.box_not(desktop.BACKGROUND, region=(x0, y0, x1, y1))
    return box[3] - box[1]


def fitted(overlay, output, geometry, scale, since=0):
    """Waits until the overlay logs that the island is on `output`, of `geometry` (WxH+X+Y,
    logical) at `scale`; returns the canvas it fitted (width, height)."""
    pattern = re.compile(r"island-overlay: on output %s \(\S+ %s, scale %d\), Output=\S+, canvas (\d+)x(\d+)"
                         % (re.escape(output), re.escape(geometry), scale))

    def said():
        found = pattern.findall(overlay.log()[since:])
        return found and tuple(int(n) for n in found[-1])
    return desktop.wait_until(said, LIVENESS, "the overlay on %s (%s, scale %d)" % (output, geometry, scale))


def test_the_island_follows_an_output_added_rescaled_and_removed():
    """Output=HEADLESS-2 on a sway with one output: the island waits on HEADLESS-1, its list
    open; HEADLESS-1's scale goes to 2 (640x360 logical): the window shrinks to fit, and the
    list ends above the bottom edge instead of running off it. `create_output` makes HEADLESS-2:
    the island moves there; its mode goes to 1920x1080 (a wider canvas) and its scale to 2;
    disabled, the island is back on HEADLESS-1, fitted to it. One overlay process throughout."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session, outputs=1)
        opener = scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"),
                                  config=scenes.overlay_config(opener) + "Output=HEADLESS-2\n")
        producer = scenes.Producer(session)
        for minutes in range(3, 9):
            producer.request(content=scenes.state(title="Order %d" % minutes, minutes=minutes))
        screen = scenes.Screen(sway, "monitor-changes")
        screen.settled(drawn_on(sway, "HEADLESS-1"), name="compact", what="the compact island on HEADLESS-1")
        canvas = fitted(overlay, "HEADLESS-1", "1280x720+0+0", 1)
        assert canvas[1] == 712, canvas  # under MarginTop=8

        # The list open, taller than a 360-pixel output leaves.
        session.run([desktop.overlay_binary(), "--toggle-list"], env=sway.env)
        image, _ = screen.settled(lambda image, box: box is not None and box[3] > 400, name="list",
                                  what="the list open under the island")
        tall = panel_height(sway, "HEADLESS-1", image)

        sway.swaymsg("output", "HEADLESS-1", "scale", "2")
        image, _ = screen.settled(drawn_on(sway, "HEADLESS-1"), name="scale-2",
                                  what="the island and its list within HEADLESS-1 at scale 2")
        assert fitted(overlay, "HEADLESS-1", "640x360+0+0", 2) == (canvas[0], 352)
        # Fewer cards, drawn whole (the list counts those left out), rather than cut at the edge.
        assert panel_height(sway, "HEADLESS-1", image) < tall, (panel_height(sway, "HEADLESS-1", image), tall)
        session.run([desktop.overlay_binary(), "--toggle-list"], env=sway.env)

        mark = len(overlay.log())
        sway.swaymsg("create_output")
        desktop.wait_until(lambda: "HEADLESS-2" in outputs(sway), LIVENESS, "sway's new output")
        screen.settled(drawn_on(sway, "HEADLESS-2"), name="created", what="the island on the new output")
        # The canvas: standard width, under MarginTop on the new 1280x720 output.
        rect, _ = outputs(sway)["HEADLESS-2"]
        assert fitted(overlay, "HEADLESS-2", "1280x720+%d+%d" % (rect["x"], rect["y"]), 1, mark) == (canvas[0], 712)

        sway.swaymsg("output", "HEADLESS-2", "mode", "1920x1080")
        desktop.wait_until(lambda: outputs(sway)["HEADLESS-2"][0]["width"] == 1920, LIVENESS, "HEADLESS-2 at 1920x1080")
        screen.settled(drawn_on(sway, "HEADLESS-2"), name="1920", what="the island at the top centre of HEADLESS-2 at 1920x1080")
        rect, _ = outputs(sway)["HEADLESS-2"]
        wide = fitted(overlay, "HEADLESS-2", "1920x1080+%d+%d" % (rect["x"], rect["y"]), 1, mark)
        # The expanded island may grow on a wide output: the canvas is wider there.
        assert wide[0] > canvas[0] and wide[1] == 720, wide

        sway.swaymsg("output", "HEADLESS-2", "scale", "2")
        desktop.wait_until(lambda: outputs(sway)["HEADLESS-2"][1] == 2, LIVENESS, "HEADLESS-2 at scale 2")
        screen.settled(drawn_on(sway, "HEADLESS-2"), name="1920-scale-2", what="the island on HEADLESS-2 at scale 2")
        rect, _ = outputs(sway)["HEADLESS-2"]
        assert fitted(overlay, "HEADLESS-2", "960x540+%d+%d" % (rect["x"], rect["y"]), 2, mark) == (canvas[0], 532)

        mark = len(overlay.log())
        sway.swaymsg("output", "HEADLESS-2", "disable")
        desktop.wait_until(lambda: "HEADLESS-2" not in outputs(sway), LIVENESS, "HEADLESS-2 disabled")
        screen.settled(drawn_on(sway, "HEADLESS-1"), name="back", what="the island back on HEADLESS-1")
        assert fitted(overlay, "HEADLESS-1", "640x360+0+0", 2, mark) == (canvas[0], 352)
        desktop.wait_until(lambda: "no output HEADLESS-2 among HEADLESS-1" in overlay.log()[mark:], LIVENESS,
                           "the overlay saying it waits for HEADLESS-2 again")
        assert overlay.alive()
        assert overlay.log().count("island-overlay: backend ") == 1, "one window, never made anew"
    finally:
        session.close()
