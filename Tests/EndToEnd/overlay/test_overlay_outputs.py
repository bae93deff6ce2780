"""island-overlay's manners on a wlroots compositor (docs/design.md §10): which output it is on
(Output= by connector name, `focused` following focus, an output created while it runs) and what it
shows beside a fullscreen window (Fullscreen=), on a real headless sway with two outputs side by
side, the real islandd and foot windows drawn in the desktop's colour (cursor hidden), so that only
the island shows in the grim screenshots. Set ISLAND_DESKTOP_SHOTS=DIR to keep them as PNGs."""

import json
import re

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.overlay_scenes import centre, size
from harness.paths import LIVENESS

REASON = desktop.why_not("sway", "swaymsg", "swaybg", "grim", "foot") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")


def start(session, outputs, config):
    """sway with `outputs` outputs, islandd, and the overlay with `config`, its frame log on."""
    session.start_bus()
    sway = desktop.Sway(session, outputs=outputs)
    scenes.prepare(session)
    session.start_islandd(scenes.DAEMON_CONFIG)
    overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\n" + config)
    return sway, overlay


def outputs_by_name(sway):
    return {o["name"]: o["rect"] for o in sway.outputs()}


def on_output(rect):
    """A check for Screen.settled: the capsule is at the top centre of the output at `rect`."""
    def check(image, box):
        return box is not None and abs(centre(box)[0] - (rect["x"] + rect["width"] / 2)) <= 2 and box[1] < rect["y"] + 24
    return check


def said_on(overlay, name):
    """Waits until the overlay logs that the island is on output `name`; returns how often it did."""
    desktop.wait_until(lambda: ("island-overlay: on output %s " % name) in overlay.log(), LIVENESS,
                       "the overlay saying it is on %s" % name)
    return overlay.log().count("island-overlay: on output %s " % name)


def foot(session, sway, name):
    """A foot window on the focused workspace, in the desktop's colour with its cursor hidden;
    returns its sway container id once it is mapped."""
    before = set(foot_ids(sway))
    session.spawn(name, ["foot", "-o", "colors.background=%02x%02x%02x" % desktop.BACKGROUND, "sh", "-c",
                         "printf '\\033[?25l'; exec sleep 120"])
    return desktop.wait_until(lambda: (set(foot_ids(sway)) - before or {None}).pop(), LIVENESS, "foot's window")


def foot_ids(sway):
    found = []

    def walk(node):
        if node.get("app_id") == "foot":
            found.append(node["id"])
        for child in node.get("nodes", []) + node.get("floating_nodes", []):
            walk(child)
    walk(json.loads(sway.swaymsg("-t", "get_tree")))
    return found


def test_output_names_a_connector():
    """Output=HEADLESS-2 (the connector, from xdg-output; not GDK's model, "headless" for both):
    the island is at the top centre of the second output, and the log names that output."""
    session = desktop.UserSession()
    try:
        sway, overlay = start(session, 2, "Output=HEADLESS-2\n")
        rects = outputs_by_name(sway)
        assert set(rects) == {"HEADLESS-1", "HEADLESS-2"}, rects
        scenes.Producer(session).request()
        screen = scenes.Screen(sway, "outputs-name")
        screen.settled(on_output(rects["HEADLESS-2"]), name="on-headless-2", what="the island on HEADLESS-2")
        said_on(overlay, "HEADLESS-2")
        assert "no output" not in overlay.log(), overlay.log()
        assert re.search(r"connector names from xdg-output v\d", overlay.log()), overlay.log()
        assert overlay.alive()
    finally:
        session.close()


def test_focused_follows_focus_to_the_other_output():
    """Output=focused: the island is on the output of the focused window, and moves (its layer
    surface made again there) when focus goes to a window on the other output, and back."""
    session = desktop.UserSession()
    try:
        sway, overlay = start(session, 2, "Output=focused\n")
        rects = outputs_by_name(sway)
        sway.swaymsg("focus", "output", "HEADLESS-1")
        foot(session, sway, "foot-1")
        scenes.Producer(session).request()
        screen = scenes.Screen(sway, "outputs-focused")
        screen.settled(on_output(rects["HEADLESS-1"]), name="focus-on-1", what="the island on HEADLESS-1")

        sway.swaymsg("focus", "output", "HEADLESS-2")
        foot(session, sway, "foot-2")
        screen.settled(on_output(rects["HEADLESS-2"]), name="focus-on-2", what="the island following focus to HEADLESS-2")
        said_on(overlay, "HEADLESS-2")

        sway.swaymsg("focus", "output", "HEADLESS-1")
        screen.settled(on_output(rects["HEADLESS-1"]), name="focus-back-on-1", what="the island following focus back")
        desktop.wait_until(lambda: overlay.log().count("island-overlay: on output HEADLESS-1 ") == 2, LIVENESS,
                           "the overlay saying it is back on HEADLESS-1")
        assert overlay.alive()
    finally:
        session.close()


def test_an_output_created_while_running_gets_the_island():
    """Output=HEADLESS-2 with one output: the island waits on the first and says so; when
    `swaymsg create_output` makes HEADLESS-2, it moves there."""
    session = desktop.UserSession()
    try:
        sway, overlay = start(session, 1, "Output=HEADLESS-2\n")
        scenes.Producer(session).request()
        screen = scenes.Screen(sway, "outputs-created")
        first = outputs_by_name(sway)["HEADLESS-1"]
        screen.settled(on_output(first), name="before", what="the island on the only output")
        desktop.wait_until(lambda: "no output HEADLESS-2 among HEADLESS-1" in overlay.log(), LIVENESS,
                           "the overlay saying HEADLESS-2 is not there")

        sway.swaymsg("create_output")
        desktop.wait_until(lambda: "HEADLESS-2" in outputs_by_name(sway), LIVENESS, "sway's new output")
        rects = outputs_by_name(sway)
        screen.settled(on_output(rects["HEADLESS-2"]), name="moved", what="the island on the new output")
        said_on(overlay, "HEADLESS-2")
        assert overlay.alive()
    finally:
        session.close()


def islands(image, rects):
    """The capsule in the top half of each output, by name (None where there is none)."""
    return {name: image.box_not(desktop.BACKGROUND, region=(r["x"], r["y"], r["x"] + r["width"], r["y"] + r["height"] // 2))
            for name, r in rects.items()}


def on_every(rects, check=lambda box: True):
    """A check for Screen.settled: a capsule at the top centre of every output, each passing `check`."""
    def every(image, _):
        found = islands(image, rects)
        return all(box is not None and abs(centre(box)[0] - (rects[name]["x"] + rects[name]["width"] / 2)) <= 2
                   and check(box) for name, box in found.items())
    return every


def test_all_puts_an_island_on_every_output_showing_the_same():
    """Output=all: an island on each of two outputs; a click on the second expands both (one
    state, the daemon's); an output created while running gets a third island."""
    session = desktop.UserSession()
    try:
        sway, overlay = start(session, 2, "Output=all\nCollapseAfter=0\n")
        sway.start_pointer()
        rects = outputs_by_name(sway)
        since = scenes.mark(overlay)
        scenes.Producer(session).request()
        screen = scenes.Screen(sway, "outputs-all")
        # Measured at rest: an island starved mid-morph stands still on screen too.
        scenes.at_rest(overlay, "compact", since)
        image, _ = screen.settled(on_every(rects), name="two", what="an island on each output")
        compact = islands(image, rects)
        assert size(compact["HEADLESS-1"]) == size(compact["HEADLESS-2"]), compact
        said_on(overlay, "HEADLESS-1")
        said_on(overlay, "HEADLESS-2")

        since = scenes.mark(overlay)
        sway.click(*centre(compact["HEADLESS-2"]))
        sway.park()
        scenes.at_rest(overlay, "expanded", since)
        screen.settled(on_every(rects, lambda box: size(box)[1] > 2 * size(compact["HEADLESS-1"])[1]),
                       name="both-expanded", what="both islands expanded by a click on one")

        sway.swaymsg("create_output")
        desktop.wait_until(lambda: "HEADLESS-3" in outputs_by_name(sway), LIVENESS, "sway's new output")
        rects = outputs_by_name(sway)
        screen.settled(on_every(rects), name="three", what="an island on the new output too")
        said_on(overlay, "HEADLESS-3")
        assert overlay.alive()
    finally:
        session.close()


@pytest.mark.parametrize("layer", ["top", "overlay"])
def test_fullscreen_hides_the_island_and_an_alert_shows_over_it(layer):
    """Fullscreen=alerts (the default): beside a fullscreen foot the island draws nothing, not
    even on the overlay layer, where it would otherwise cover the window; an alerting update
    shows over the window (from Layer=top the island rises to overlay for it) until it ends
    (collapsed here, as the user would: the test's alerts last an hour), and then the island is
    gone again."""
    session = desktop.UserSession()
    try:
        sway, overlay = start(session, 1, "Layer=%s\n" % layer)
        foot(session, sway, "foot")
        producer = scenes.Producer(session)
        activity = producer.request()
        screen = scenes.Screen(sway, "fullscreen-" + layer)
        screen.settled(lambda image, box: box is not None, name="compact", what="the island beside a normal window")
        sway.swaymsg("[app_id=foot]", "fullscreen", "enable")
        desktop.wait_until(lambda: "island-overlay: desktop: fullscreen yes" in overlay.log(), LIVENESS,
                           "the overlay hearing of the fullscreen window")
        screen.settled(lambda image, box: box is None, name="hidden", what="nothing beside the fullscreen window")

        since = scenes.mark(overlay)
        producer.update(activity, scenes.state(minutes=5), alert={"title": "Your order is ready", "body": "Pick it up"})
        scenes.at_rest(overlay, "alert", since)
        image, box = screen.settled(lambda image, box: box is not None and size(box)[1] > 40, name="alert",
                                    what="the alert over the fullscreen window")
        assert abs(centre(box)[0] - image.width / 2) <= 2, box
        if layer == "top":
            assert "layer overlay: showing over the fullscreen window" in overlay.log(), overlay.log()
        producer.collapse(activity)
        screen.settled(lambda image, box: box is None, name="after-alert", what="the island gone after the alert")

        # The window leaves fullscreen: the compact island is back.
        sway.swaymsg("[app_id=foot]", "fullscreen", "disable")
        screen.settled(lambda image, box: box is not None and size(box)[1] < 60, name="window-back",
                       what="the compact island beside a normal window")
        assert overlay.alive()
    finally:
        session.close()


def test_fullscreen_always_shows_the_island_over_the_window():
    """Fullscreen=always: as if there were no fullscreen window; from Layer=top the island
    rises to the overlay layer to be seen."""
    session = desktop.UserSession()
    try:
        sway, overlay = start(session, 1, "Fullscreen=always\n")
        foot(session, sway, "foot")
        sway.swaymsg("[app_id=foot]", "fullscreen", "enable")
        scenes.Producer(session).request()
        screen = scenes.Screen(sway, "fullscreen-always")
        screen.settled(lambda image, box: box is not None, name="compact-over", what="the island over the fullscreen window")
        assert "layer overlay: showing over the fullscreen window" in overlay.log(), overlay.log()
        assert overlay.alive()
    finally:
        session.close()
