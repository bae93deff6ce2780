"""island-overlay beside panels and windows, on a real headless sway with the real islandd, in grim
screenshots: a real Waybar at the top of the same output keeps its pixels and the island starts
below it (the island's layer surface takes no exclusive zone, so sway places it under the bar's);
with Reserve=yes a foot window starts below the island while it shows something, with Reserve=no the
island lies over the window's top rows, and fades while the pointer rests on it. Set
ISLAND_DESKTOP_SHOTS=DIR to keep the screenshots as PNGs."""

import json
import os
import signal
import threading

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.paths import LIVENESS

REASON = desktop.why_not("sway", "swaymsg", "grim", "foot", "waybar") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

BAR = (0x20, 0x30, 0x40)  # Waybar's background here: neither the desktop's blue nor the capsule's black
WINDOW = (0x3A, 0x7D, 0x44)  # foot's background: a green the island is never drawn in
BAR_STYLE = """* { border: none; border-radius: 0; font-family: sans-serif; font-size: 13px; min-height: 0; }
window#waybar { background: #%02x%02x%02x; color: #ffffff; }
""" % BAR


def start(session):
    session.start_bus()
    sway = desktop.Sway(session)
    scenes.prepare(session)
    session.start_islandd(scenes.DAEMON_CONFIG)
    return sway


def start_overlay(session, sway, config=""):
    # The frame log says when the island is at rest (`at_rest`).
    return desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\n" + config)


def at_rest(overlay, since=0):
    """Waits until the overlay, which showed nothing before its log's line `since`, has painted
    the compact island at rest (scenes.at_rest); over a window a box around everything drawn is
    the window's, so a screenshot's box alone could not say so either."""
    scenes.at_rest(overlay, "compact", since)


def island_screen(sway, prefix, top=0):
    """Screenshots in which the island is the capsule below row `top`, whatever window or bar
    is beside it: a scene is settled when the island's own box has stood still."""
    return scenes.Screen(sway, prefix, capsule=lambda image: capsule(image, top))


def start_waybar(session, sway, layer):
    """A Waybar at the top of the output, in `layer`, showing a fixed label; returns its
    process once its bar is drawn (and the bar's height in pixels)."""
    config = {"layer": layer, "position": "top", "height": 30, "modules-left": ["custom/label"],
              "modules-center": [], "modules-right": [], "custom/label": {"format": "Waybar beside the island"}}
    path = os.path.join(session.config, "waybar", "config")
    style = os.path.join(session.config, "waybar", "style.css")
    session.write(path, json.dumps(config))
    session.write(style, BAR_STYLE)
    process = session.spawn("waybar", ["waybar", "-c", path, "-s", style], env=sway.env)

    def drawn():
        session.alive(process)
        box = sway.screenshot().box(*exactly(BAR))
        return box if box and box[0] == 0 and box[1] == 0 and box[2] == sway.width else None
    return process, desktop.wait_until(drawn, LIVENESS, "Waybar's bar")[3]


def exactly(colour, tolerance=2):
    return tuple(max(0, c - tolerance) for c in colour), tuple(min(255, c + tolerance) for c in colour)


def capsule(image, top=0):
    """The island's black capsule below row `top` of the upper half, or None."""
    return image.box(*desktop.DARK, region=(0, top, image.width, image.height // 2))


def near(pixel, colour, tolerance=2):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


def window_top(image, x=4):
    """The first row, in column `x` (far from the island), where foot's window is drawn."""
    box = image.box(*exactly(WINDOW), region=(x, 0, x + 1, image.height))
    return box and box[1]


@pytest.mark.parametrize("layer", ["bottom", "top"])
def test_the_island_starts_below_a_waybar_and_leaves_its_pixels(layer):
    """Waybar (in its default bottom layer, and in the top layer) at the top of the output:
    with the overlay running and the island shown, every pixel of the bar is what it was
    without, and the capsule starts below the bar, MarginTop under its edge."""
    session = desktop.UserSession()
    try:
        sway = start(session)
        _, height = start_waybar(session, sway, layer)
        screen = scenes.Screen(sway, "panels-waybar-" + layer)
        bar = (0, 0, sway.width, height)
        before, _ = screen.settled(lambda image, box: box is not None and box[3] == height, name="bar-alone",
                                   what="the bar alone")
        overlay = start_overlay(session, sway)
        scenes.Producer(session).request()
        image, _ = screen.settled(lambda image, box: capsule(image, height) is not None, name="bar-and-island",
                                  what="the island beside the bar")
        island = capsule(image, height)
        assert island[1] >= height + 8, (island, height)
        assert image.crop(bar).pixels == before.crop(bar).pixels, "the bar's pixels changed"
        assert overlay.alive()
    finally:
        session.close()


def foot(session, sway):
    """A foot window in WINDOW's colour, cursor hidden, tiled over the whole output; its sway
    container once it is mapped."""
    session.spawn("foot", ["foot", "-o", "colors.background=%02x%02x%02x" % WINDOW, "sh", "-c",
                           "printf '\\033[?25l'; exec sleep 120"])
    return desktop.wait_until(lambda: foot_node(sway), LIVENESS, "foot's window")


def foot_node(sway):
    def walk(node):
        if node.get("app_id") == "foot":
            return node
        return next(filter(None, map(walk, node.get("nodes", []) + node.get("floating_nodes", []))), None)
    return walk(json.loads(sway.swaymsg("-t", "get_tree")))


def test_reserve_yes_keeps_a_window_below_the_island_while_it_shows():
    """Reserve=yes: a tiled foot window's top row is below the capsule (sway tiles it under the
    island's exclusive zone: MarginTop, the capsule and a gap), and when the island shows
    nothing any more the window takes the strip back."""
    session = desktop.UserSession()
    try:
        sway = start(session)
        overlay = start_overlay(session, sway, "Reserve=yes\n")
        producer = scenes.Producer(session)
        producer.request()
        foot(session, sway)
        at_rest(overlay)
        screen = island_screen(sway, "panels-reserve-yes")
        image, _ = screen.settled(lambda image, box: capsule(image) is not None and window_top(image) is not None,
                                  name="window-below", what="the island and the window")
        island = capsule(image)
        assert window_top(image) >= island[3], (window_top(image), island)
        assert foot_node(sway)["rect"]["y"] >= island[3]
        assert "reserving the island's strip: exclusive zone" in overlay.log(), overlay.log()

        producer.end_all()
        screen.settled(lambda image, box: capsule(image) is None and window_top(image) == 0, name="strip-free",
                       what="the window back at the top once the island shows nothing")
        assert foot_node(sway)["rect"]["y"] == 0
        assert overlay.alive()
    finally:
        session.close()


def test_reserve_no_lies_over_the_window():
    """Reserve=no (the default): the foot window starts at the output's top edge, and the
    capsule lies over its top rows."""
    session = desktop.UserSession()
    try:
        sway = start(session)
        overlay = start_overlay(session, sway)
        scenes.Producer(session).request()
        foot(session, sway)
        at_rest(overlay)
        screen = island_screen(sway, "panels-reserve-no")
        image, _ = screen.settled(lambda image, box: capsule(image) is not None and window_top(image) == 0,
                                  name="island-over-window", what="the island over the window")
        island = capsule(image)
        # The window all round the capsule: it is drawn over the window's rows.
        x0, y0, x1, y1 = island
        around = ((x0 - 3, y0), (x1 + 2, y1 - 1), ((x0 + x1) // 2, y1 + 2), ((x0 + x1) // 2, max(0, y0 - 3)))
        assert all(near(image.pixel(x, y), WINDOW) for x, y in around), [image.pixel(x, y) for x, y in around]
        assert foot_node(sway)["rect"]["y"] == 0
        assert "exclusive zone" not in overlay.log()
        assert overlay.alive()
    finally:
        session.close()


def test_reserve_yes_under_a_waybar_in_the_overlay_layer():
    """Reserve=yes beside a Waybar: sway stacks exclusive zones layer by layer (overlay, top,
    bottom, background), so a bar in the overlay layer keeps the output's edge whenever either
    started; the island hangs under the bar and the window starts under the island."""
    session = desktop.UserSession()
    try:
        sway = start(session)
        overlay = start_overlay(session, sway, "Reserve=yes\n")
        scenes.Producer(session).request()
        _, height = start_waybar(session, sway, "overlay")
        foot(session, sway)
        at_rest(overlay)
        screen = island_screen(sway, "panels-reserve-waybar", top=height)
        image, _ = screen.settled(lambda image, box: capsule(image, height) is not None and window_top(image) is not None,
                                  name="bar-island-window", what="the bar, the island and the window")
        island = capsule(image, height)
        assert island[1] >= height + 8, (island, height)
        assert window_top(image) >= island[3], (window_top(image), island)
        assert overlay.alive()
    finally:
        session.close()


@pytest.mark.parametrize("moving", ["jump", "sweep"])
def test_the_pointer_resting_on_the_island_fades_it_over_the_window(moving):
    """Reserve=no: the pointer resting on the compact island over a foot window fades it, so
    the window's rows under it show through; the pointer leaving brings it back whole. The
    pointer jumps there and away (warped, as a keyboard-driven pointer is: it enters and
    leaves with no motion on the island), or sweeps there and away as a hand moves a mouse."""
    session = desktop.UserSession()
    try:
        sway = start(session)
        sway.start_pointer()
        overlay = start_overlay(session, sway)
        scenes.Producer(session).request()
        foot(session, sway)
        # Measured at rest: an island measured mid-morph is never seen again.
        at_rest(overlay)
        screen = island_screen(sway, "panels-rest")
        image, _ = screen.settled(lambda image, box: capsule(image) is not None and window_top(image) == 0,
                                  name="whole", what="the island over the window")
        island = capsule(image)
        dark = image.count(*desktop.DARK, region=island)

        x, y = scenes.centre(island)
        if moving == "jump":
            sway.move(x, y)
        else:
            sway.sweep(x, y)
        faded, _ = screen.settled(lambda image, box: image.count(*desktop.DARK, region=island) < dark // 10,
                                  name="faded", what="the island faded under the resting pointer")
        assert "the pointer rests on the island: faded" in overlay.log(), overlay.log()
        # The window shows through where the capsule was.
        assert faded.count(*exactly(WINDOW, tolerance=48), region=island) > dark // 2

        if moving == "jump":
            sway.park()
        else:
            sway.sweep(1, sway.height - 1)
        screen.settled(lambda image, box: capsule(image) == island and image.count(*desktop.DARK, region=island) > dark * 0.9,
                       name="whole-again", what="the island whole once the pointer left")
        assert overlay.alive()
    finally:
        session.close()


def test_an_island_starved_mid_morph_is_measured_only_at_rest():
    """What the measurements above stand on: an overlay starved of CPU mid-morph (stopped at
    the island's first frame over the window, continued a second later) leaves a smaller island
    on screen, unchanged while it waits, which a settled screenshot alone would take for the
    island; measured once the overlay says it is at rest, it is the island the same activity
    shows when it comes again unhindered."""
    session = desktop.UserSession()
    try:
        sway = start(session)
        overlay = start_overlay(session, sway)
        foot(session, sway)
        producer = scenes.Producer(session)
        screen = island_screen(sway, "panels-starved")
        mark = len(scenes.log_lines(overlay))
        producer.request()
        # Stopped as soon as it has painted the morph's first frame.
        desktop.wait_until(lambda: "us animating compact" in "\n".join(scenes.log_lines(overlay, mark)), LIVENESS,
                           "the island's first frame", interval=0.001)
        os.kill(overlay.process.pid, signal.SIGSTOP)
        resume = threading.Timer(1.0, os.kill, (overlay.process.pid, signal.SIGCONT))
        resume.start()
        try:
            at_rest(overlay)
            _, starved = screen.settled(lambda image, box: box is not None and window_top(image) == 0,
                                        name="starved", what="the island over the window")
        finally:
            resume.join()

        producer.end_all()
        screen.settled(lambda image, box: box is None, what="the island gone")
        mark = len(scenes.log_lines(overlay))
        producer.request()
        at_rest(overlay, since=mark)
        _, unhindered = screen.settled(lambda image, box: box is not None and window_top(image) == 0,
                                       name="unhindered", what="the island over the window again")
        assert starved == unhindered
        assert overlay.alive()
    finally:
        session.close()


def test_reserve_yes_with_output_all_reserves_a_strip_on_every_output():
    """Reserve=yes, Output=all on two outputs: each island reserves its strip on its own
    output, and a foot window on each starts below that output's island."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session, outputs=2)
        scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = start_overlay(session, sway, "Reserve=yes\nOutput=all\n")
        scenes.Producer(session).request()
        rects = {o["name"]: o["rect"] for o in sway.outputs()}
        for name in sorted(rects):
            sway.swaymsg("focus", "output", name)
            before = len(foot_rects(sway))
            session.spawn("foot-" + name, ["foot", "-o", "colors.background=%02x%02x%02x" % WINDOW, "sh", "-c",
                                           "printf '\\033[?25l'; exec sleep 120"])
            desktop.wait_until(lambda: len(foot_rects(sway)) == before + 1, LIVENESS,
                               "foot's window on " + name)

        def each(image, _):
            found = {}
            for name, r in rects.items():
                island = image.box(*desktop.DARK, region=(r["x"], 0, r["x"] + r["width"], r["height"] // 2))
                column = image.box(*exactly(WINDOW), region=(r["x"] + 4, 0, r["x"] + 5, r["height"]))
                if island is None or column is None:
                    return None
                found[name] = (island, column[1])
            return found
        screen = scenes.Screen(sway, "panels-reserve-all")
        image, _ = screen.settled(lambda image, box: each(image, box) is not None, name="two-strips",
                                  what="an island and a window below it on each output")
        found = each(image, None)
        for name, (island, top) in found.items():
            assert top >= island[3], (name, island, top)
        windows = foot_rects(sway)
        assert len(windows) == 2 and all(rect["y"] >= found[name][0][3] for name, rect in zip(sorted(rects), sorted(windows, key=lambda r: r["x"]))), windows
        assert overlay.alive()
    finally:
        session.close()


def foot_rects(sway):
    found = []

    def walk(node):
        if node.get("app_id") == "foot":
            found.append(node["rect"])
        for child in node.get("nodes", []) + node.get("floating_nodes", []):
            walk(child)
    walk(json.loads(sway.swaymsg("-t", "get_tree")))
    return found
