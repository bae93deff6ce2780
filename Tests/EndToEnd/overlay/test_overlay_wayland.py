"""island-overlay on a real Wayland compositor: headless sway (wlroots, pixman renderer, no input
devices) run as the unprivileged test user with its own runtime directory and session bus, the
user's real islandd and the real island-overlay. What the user would see is read from `grim`
screenshots (the capsule at the top centre, its size in each form, the keyline's colour, an alert's
text); what the user would do goes through the seat's pointer — a virtual pointer
(virtual_pointer.py) moved and clicked with `swaymsg seat - cursor …`.

One session serves the module (sway, bus, islandd, overlay start in ~1 s); each test ends its
activities. Set ISLAND_DESKTOP_SHOTS=DIR to keep the screenshots as PNGs."""

import os
import time

import pytest

from harness import desktop
from harness import overlay_scenes as scenes
from harness.desktop import DARK, LIGHT
from harness.overlay_scenes import APP, CENTER_URL, OTHER, URL, centre, size
from harness.paths import LIVENESS
from harness.varlink import Connection

REASON = desktop.why_not("sway", "swaymsg", "swaybg", "grim") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")


@pytest.fixture(scope="module")
def world():
    with scenes.sway_world("wayland") as world:
        yield world


@pytest.fixture
def live(world):
    with scenes.producing(world) as producer:
        yield producer


def compact_of(world, live, **request):
    """A new activity's compact island, photographed once the overlay has painted it at rest:
    (image, box)."""
    since = scenes.mark(world.overlay)
    live.request(**request)
    scenes.at_rest(world.overlay, "compact", since)
    return world.screen.settled(lambda image, box: box is not None, name="compact")


def click_to_expand(world, box, form="expanded", name="expanded"):
    """Clicks the middle of `box` (the compact island), parks the pointer and photographs the
    island once the overlay has painted `form` at rest: (image, box)."""
    since = scenes.mark(world.overlay)
    world.sway.click(*centre(box))
    world.sway.park()
    scenes.at_rest(world.overlay, form, since)
    return world.screen.settled(lambda image, now: now is not None and size(now)[1] > 2 * size(box)[1], name=name)


def test_nothing_live_draws_nothing_then_the_capsule_comes_and_goes(world, live):
    image = world.screen.grab("empty")
    assert world.overlay.alive()
    assert world.screen.capsule(image) is None, "something dark is on screen with nothing live"
    live.request()
    world.screen.settled(lambda image, box: box is not None, name="compact")
    live.end_all()
    world.screen.settled(lambda image, box: box is None, name="hidden-again", what="the island hiding")


def test_compact_capsule_sits_at_the_top_centre(world, live):
    image, box = compact_of(world, live)
    width, height = size(box)
    x, _ = centre(box)
    assert abs(x - image.width / 2) <= 2, "capsule %s is not centred on a %d px screen" % (box, image.width)
    assert box[1] <= 24, "capsule %s is not at the top" % (box,)
    # A pill: wider than tall, small next to the screen.
    assert 16 <= height <= 64 and 2 * height <= width <= image.width // 3, box
    # A black capsule, rounded: the bounding box's corner shows the desktop.
    assert image.pixel(box[0], box[1]) == desktop.BACKGROUND
    assert image.count(*DARK, region=box) > 0.6 * width * height
    # Its content is drawn: light text pixels inside the capsule.
    assert image.count(*LIGHT, region=box) > 20


def test_the_keyline_is_a_quiet_line_with_a_little_of_the_layouts_tint(world, live):
    """The keyline separates the black capsule from dark content without ringing it on light
    content: a thin light line just outside the edge, mostly white with a little of the layout's
    tint (KEYLINE, #FF2020) at low alpha, so it lightens what is behind it a little (over the
    blue desktop, a lighter, warmer blue); never the saturated tint itself, and no grey line
    inside the black."""
    image, outline = compact_of(world, live)
    red = ((200, 0, 0), (255, 90, 90))
    assert image.box(*red, region=world.screen.top(image)) is None, "the keyline is the saturated tint"
    # All along it: the outermost pixels at the left, right, top and bottom edges through the
    # capsule's middle are the desktop lightened and warmed a little, and the capsule is black
    # right inside.
    background = desktop.BACKGROUND
    x, y = (int(v) for v in centre(outline))
    inward = {"left": lambda i: (outline[0] + i, y), "right": lambda i: (outline[2] - 1 - i, y),
              "top": lambda i: (x, outline[1] + i), "bottom": lambda i: (x, outline[3] - 1 - i)}
    for side, at in inward.items():
        pixels = [image.pixel(*at(i)) for i in range(3)]
        line = [(r, g, b) for r, g, b in pixels
                if r >= background[0] + 20 and (r - background[0]) >= (b - background[2]) + 15]
        assert line, "no quiet warm keyline outside the %s edge: %s" % (side, pixels)
        assert all(c <= 40 for c in image.pixel(*at(4))), "the capsule is not black inside its %s edge" % side


def test_a_timer_ticks_on_screen_with_tabular_digits(world, live):
    """The Pomodoro example counts down in its compact trailing view: the overlay redraws it
    every second by itself (the producer sends nothing), and the digits are tabular, so the
    capsule keeps its size while they change."""
    now = time.time()
    since = scenes.mark(world.overlay)
    live.request(app="org.island.example.Pomodoro", type="Pomodoro",
                 attributes={"task": "Write the report", "rounds": 4},
                 content={"state": {"phase": "Focus", "round": 1, "startedAt": now, "endsAt": now + 1500}})
    scenes.at_rest(world.overlay, "compact", since)
    first, box = world.screen.settled(lambda image, box: box is not None, name="timer")

    def ticked():
        image = world.screen.grab()
        return image if image.crop(box).pixels != first.crop(box).pixels else None
    later = desktop.wait_until(ticked, LIVENESS, "the timer's next second on screen")
    assert world.screen.capsule(later) == box, "the capsule changed size as the timer ticked"


def test_minimal_shows_an_attached_capsule_and_a_detached_bubble(world, live):
    since = scenes.mark(world.overlay)
    live.request(relevance=50)
    live.request(app=OTHER, content={"state": {"step": "3/5"}})
    scenes.at_rest(world.overlay, "minimal", since)
    image, box = world.screen.settled(
        lambda image, box: box is not None and len(world.screen.shapes(image, box)) == 2, name="minimal")
    (a0, a1), (b0, b1) = world.screen.shapes(image, box)
    bubble = image.box_not(desktop.BACKGROUND, region=(b0, box[1], b1, box[3]))
    attached = image.box_not(desktop.BACKGROUND, region=(a0, box[1], a1, box[3]))
    # The bubble is small and round (as tall as wide, within antialiasing), to the right.
    bw, bh = size(bubble)
    assert abs(bw - bh) <= 2 and bh <= size(attached)[1] + 2, (bubble, attached)
    assert bubble[0] > attached[2]


def test_click_expands_and_the_island_grows(world, live):
    _, compact = compact_of(world, live)
    image, expanded = click_to_expand(world, compact)
    assert size(expanded)[0] > size(compact)[0]
    assert abs(centre(expanded)[0] - image.width / 2) <= 2 and expanded[1] <= 24
    # The centre text and the button label: light pixels on two separate bands of rows.
    rows = [y for y in range(expanded[1], expanded[3])
            if image.count(*LIGHT, region=(expanded[0] + 8, y, expanded[2] - 8, y + 1))]
    bands = sum(1 for a, b in zip(rows, rows[1:]) if b - a > 3) + 1
    assert bands >= 2, "expected text and a button, got light rows %s" % rows


def expand(world, live):
    _, compact = compact_of(world, live)
    mark = scenes.mark(world.overlay)
    shown = click_to_expand(world, compact)
    # A click acts only on what has stood still on screen for a while (docs/design.md §10).
    scenes.actionable(world.overlay, "tap %s" % live.started[-1][1], since=mark)
    return shown


def test_a_click_on_the_expanded_island_taps_and_opens_the_url(world, live):
    image, box = expand(world, live)
    watch = Connection(world.session.socket)
    watch.call("org.island.Producer.Watch", {"app": APP}, more=True)
    assert watch.read()["parameters"]["event"] == {"kind": "watching"}
    before = world.opened()
    # The centre region's text is in the upper half of the expanded island.
    upper = (box[0] + size(box)[1] // 2, box[1], box[2] - size(box)[1] // 2, (box[1] + box[3]) // 2)
    text = image.box(*LIGHT, region=upper)
    assert text is not None, "no text in the upper half of the expanded island"
    world.sway.click(*centre(text))
    world.sway.park()
    event = watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "tap")["parameters"]["event"]
    assert event["activity"]["id"] == live.started[-1][1]
    # The app hears of the tap with the layout's URL (PROTOCOL.md); the desktop opens the URL of
    # the region under the pointer, the centre's.
    assert event["url"] == URL
    desktop.wait_until(lambda: len(world.opened()) > len(before), LIVENESS, "the stub opener being run")
    assert world.opened()[len(before):] == [CENTER_URL]
    # The opener (a browser, often, that outlives the overlay) holds none of its sockets.
    desktop.wait_until(lambda: len(world.opener_sockets()) >= len(world.opened()), LIVENESS, "the opener's count")
    assert world.opener_sockets()[-1] == 0, "the opener inherited the overlay's sockets"
    watch.close()


def test_a_click_on_a_button_reaches_the_apps_watch(world, live):
    image, box = expand(world, live)
    watch = Connection(world.session.socket)
    watch.call("org.island.Producer.Watch", {"app": APP}, more=True)
    assert watch.read()["parameters"]["event"] == {"kind": "watching"}
    before = world.opened()
    logged = len(world.overlay.log().splitlines())
    lower = (box[0] + 8, (box[1] + box[3]) // 2, box[2] - 8, box[3] - 4)
    label = image.box(*LIGHT, region=lower)
    assert label is not None, "no button label in the lower half of the expanded island"
    # Hover feedback: with the pointer over it, the button's face (beside its label) changes.
    face = (label[0] - 6, label[1] + 2, label[0] - 2, label[3] - 2)
    resting = image.colours(face)
    # As a hand moves a mouse: onto the island, then on over the button.
    x, y = centre(label)
    world.sway.move(x - 4, y)
    world.sway.move(x, y)
    hovered = desktop.wait_until(lambda: world.screen.grab().colours(face) - resting, LIVENESS, "hover feedback on the button")
    assert all(max(c) > 20 for c in hovered), "the hovered face %s is not a button's" % hovered
    world.sway.click(*centre(label))
    world.sway.park()
    event = watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "button")["parameters"]["event"]
    assert event["action"] == "pause"
    # A tap on the centre's text after it is the marker: the overlay logs each URL it opens, in
    # the order of the clicks; the tap's must be the first after the button's.
    upper = (box[0] + size(box)[1] // 2, box[1], box[2] - size(box)[1] // 2, (box[1] + box[3]) // 2)
    text = image.box(*LIGHT, region=upper)
    assert text is not None, "no text in the upper half of the expanded island"
    world.sway.click(*centre(text))
    world.sway.park()
    desktop.wait_until(lambda: len(world.opened()) > len(before), LIVENESS, "the tap's URL opened")
    opened = [line.split()[2] for line in world.overlay.log().splitlines()[logged:]
              if line.startswith("island-overlay: opened ")]
    assert opened[:1] == [CENTER_URL], "a button press opened a URL: %s" % opened
    watch.close()


def test_a_sixty_row_layout_is_cut_at_the_islands_height_and_clicks_below_it_do_nothing(world, live):
    """A legal 60-row vstack once made the expanded island as tall as the screen, and a click at
    (640, 600) became a tap. The island stops at its maximum height (160 px at scale 1), and a click
    below it reaches the desktop, not the overlay: the overlay, which logs every click it gets
    (frame log), logs none, and loses the keyboard focus to the click elsewhere, so it collapses
    (its own collapse, logged)."""
    _, compact = compact_of(world, live, type="Tall")
    activity = live.started[-1][1]
    mark = scenes.mark(world.overlay)
    image, box = click_to_expand(world, compact, name="tall-expanded")
    assert size(box)[1] <= 160 + 2, "the expanded island is %s px tall: %s" % (size(box)[1], box)
    assert box[3] < 600
    # Its first rows are drawn, down to near its bottom, where the rest is cut.
    rows = [y for y in range(box[1], box[3]) if image.count(*LIGHT, region=(box[0] + 20, y, box[2] - 20, y + 1))]
    assert rows and rows[-1] > box[3] - 40, "no rows drawn near the bottom of %s: %s" % (box, rows)
    scenes.actionable(world.overlay, "tap %s" % activity, since=mark)
    before = world.opened()
    mark = len(scenes.log_lines(world.overlay))
    world.sway.click(640, 600)
    world.sway.park()
    desktop.wait_until(lambda: "island-overlay: collapse %s" % activity in scenes.log_lines(world.overlay, mark),
                       LIVENESS, "the overlay collapsing on the click elsewhere")
    clicks = [line for line in scenes.log_lines(world.overlay, mark) if line.startswith("island-overlay: click at ")]
    assert clicks == [], "the click below the island reached the overlay: %s" % clicks
    assert world.opened() == before
    scenes.at_rest(world.overlay, "compact", mark)
    world.screen.settled(lambda image, box: box == compact, name="tall-collapsed", what="the island collapsing")


def test_an_alert_shows_its_title_and_body(world, live):
    image, compact = compact_of(world, live)
    activity = live.started[-1][1]
    since = scenes.mark(world.overlay)
    live.update(activity, scenes.state(minutes=5), alert={"title": "Your order is ready", "body": "Pick it up at the counter"})
    scenes.at_rest(world.overlay, "alert", since)
    image, box = world.screen.settled(
        lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="alert")
    # Light text on two lines, read through the middle of the island (clear of its symbol).
    x = int(centre(box)[0])
    # The body may be secondary grey: any neutral ink lighter than the capsule.
    ink = ((100, 100, 100), (255, 255, 255))
    # (Inside the keyline, which lies just outside the black and lightens the desktop there.)
    rows = [y for y in range(box[1] + 2, box[3] - 2) if image.count(*ink, region=(x - 40, y, x + 40, y + 1))]
    bands = sum(1 for a, b in zip(rows, rows[1:]) if b - a > 3) + 1 if rows else 0
    assert bands == 2, "expected the title and the body on two lines, got light rows %s" % rows
    # The alert holds (AlertSec=1h here) until the user collapses it; then the island rests in
    # compact again: as tall as before, and narrower, since the capsule hugs its content and
    # "5 min" is shorter than "12 min".
    since = scenes.mark(world.overlay)
    live.collapse(activity)
    scenes.at_rest(world.overlay, "compact", since)
    world.screen.settled(lambda image, box: box is not None and size(box)[1] == size(compact)[1] and size(box)[0] < size(compact)[0],
                         name="after-alert", what="the island after the alert")


def test_the_expanded_island_collapses_when_the_pointer_stays_away():
    """CollapseAfter=1: the island stays expanded while the pointer is on it, and collapses a
    second after it left (the overlay's own collapse, not the daemon's 8 s timeout)."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        sway.start_pointer()
        scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\nCollapseAfter=1\n")
        producer = scenes.Producer(session)
        activity = producer.request()
        screen = scenes.Screen(sway, "away")
        scenes.at_rest(overlay, "compact")
        _, compact = screen.settled(lambda image, box: box is not None, name="compact")
        since = scenes.mark(overlay)
        sway.click(*centre(compact))
        scenes.at_rest(overlay, "expanded", since)
        image, expanded = screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1],
                                         name="expanded")
        # More than CollapseAfter with the pointer on it (a lower bound, for the overlay's timer
        # to be due had it been started), then an update drawn as the marker: the timer ran first.
        time.sleep(1.5)
        later = scenes.redrawn(screen, producer, activity, image, expanded)
        assert "pointer away" not in overlay.log(), "collapsed with the pointer on it:\n" + overlay.log()
        assert size(screen.capsule(later))[1] > 2 * size(compact)[1], "collapsed with the pointer on it"
        since = scenes.mark(overlay)
        sway.park()
        scenes.at_rest(overlay, "compact", since)
        screen.settled(lambda image, box: box is not None and size(box)[1] == size(compact)[1], name="collapsed",
                       what="the island collapsing once the pointer left")
        assert "collapse %s" % activity in overlay.log()
    finally:
        session.close()


def test_escape_collapses_the_expanded_island(world, live):
    """The click gives the island the keyboard (layer-shell on-demand focus); Escape, typed on
    the seat's virtual keyboard with the pointer still over the island, collapses it."""
    _, compact = compact_of(world, live)
    activity = live.started[-1][1]
    since = scenes.mark(world.overlay)
    world.sway.click(*centre(compact))
    scenes.at_rest(world.overlay, "expanded", since)
    world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded")
    since = scenes.mark(world.overlay)
    world.sway.key(1)  # KEY_ESC
    # The overlay's own collapse (it logs it), not the daemon's timeout, which would look the same.
    desktop.wait_until(lambda: "collapse %s" % activity in world.overlay.log(), LIVENESS, "the overlay collapsing on Escape")
    # The cursor is drawn into the screenshots: out of the way before the capsule is measured
    # (the compact capsule is shorter than the cursor is tall below the island's middle).
    world.sway.park()
    scenes.at_rest(world.overlay, "compact", since)
    world.screen.settled(lambda image, box: box == compact, name="escaped",
                         what="the island collapsing on Escape")
    assert "collapse %s" % activity in world.overlay.log()


def session_with_a_window(session):
    """sway, islandd and a foot window under where the island goes, drawn in the desktop's
    colour with its cursor hidden, so that only the island shows in screenshots."""
    if desktop.missing_programs("foot"):
        pytest.skip("foot not installed (scripts/install-deps.sh installs it)")
    session.start_bus()
    sway = desktop.Sway(session)
    sway.start_pointer()
    scenes.prepare(session)
    session.start_islandd(scenes.DAEMON_CONFIG)
    session.spawn("foot", ["foot", "-o", "colors.background=%02x%02x%02x" % desktop.BACKGROUND, "sh", "-c",
                           "printf '\\033[?25l'; exec sleep 60"])
    desktop.wait_until(lambda: '"app_id": "foot"' in sway.swaymsg("-t", "get_tree"), LIVENESS, "foot's window")
    return sway


def test_a_click_in_another_window_collapses_the_expanded_island():
    """Focus lost: a click in a window under the island (foot, drawn in the desktop's colour with
    its cursor hidden) takes the keyboard from the expanded island, which collapses at once."""
    session = desktop.UserSession()
    try:
        sway = session_with_a_window(session)
        overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\nCollapseAfter=0\n")
        producer = scenes.Producer(session)
        activity = producer.request()
        screen = scenes.Screen(sway, "focus")
        scenes.at_rest(overlay, "compact")
        _, compact = screen.settled(lambda image, box: box is not None, name="compact")
        since = scenes.mark(overlay)
        sway.click(*centre(compact))
        scenes.at_rest(overlay, "expanded", since)
        screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded")
        since = scenes.mark(overlay)
        sway.click(sway.width // 2, sway.height - 100)  # in foot
        # The overlay's own collapse (it logs it), not the daemon's timeout, which would look the same.
        desktop.wait_until(lambda: "collapse %s" % activity in overlay.log(), LIVENESS, "the overlay collapsing")
        scenes.at_rest(overlay, "compact", since)
        screen.settled(lambda image, box: box == compact, name="clicked-elsewhere",
                       what="the island collapsing when another window took the focus")
        assert "collapse %s" % activity in overlay.log()
    finally:
        session.close()


def test_the_island_goes_on_the_output_overlay_conf_names():
    """Output= picks the monitor: with two outputs side by side, Output=1 centres the island on
    the second."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session, outputs=2)
        first, second = sorted(sway.outputs(), key=lambda o: o["rect"]["x"])
        scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = desktop.Overlay(session, sway.env, config="[Overlay]\nOutput=1\n")
        scenes.Producer(session).request()
        screen = scenes.Screen(sway, "outputs")
        image, box = screen.settled(lambda image, box: box is not None, name="second-output")
        rect = second["rect"]
        assert abs(centre(box)[0] - (rect["x"] + rect["width"] / 2)) <= 2, (box, second)
        assert box[1] < rect["y"] + 24
        assert overlay.alive()
    finally:
        session.close()


@pytest.mark.skipif(not REASON and bool(desktop.missing_programs("weston")),
                    reason="weston not installed (scripts/install-deps.sh installs it)")
@pytest.mark.parametrize("desktop_name", ["GNOME", "weston"])
def test_without_layer_shell_it_says_so_and_exits(desktop_name):
    """GNOME on Wayland has no wlr-layer-shell; weston has none either. The overlay must say so
    and exit with status 69, never fall back to a stray window, and name what works instead:
    on GNOME the Shell extension, elsewhere the compositors with layer-shell and the extension,
    never a false name for the compositor it is on (weston is not "GNOME's Mutter")."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        weston = desktop.Weston(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        overlay = desktop.Overlay(session, dict(weston.env, GDK_BACKEND="wayland", XDG_CURRENT_DESKTOP=desktop_name))
        try:
            status = overlay.process.wait(20)
        except Exception:
            pytest.fail("island-overlay kept running on a compositor without layer-shell:\n" + overlay.log())
        log = overlay.log()
        assert status == 69, "exit status %s\n%s" % (status, log)
        assert "no wlr-layer-shell" in log, log
        assert "gnome-extensions enable island@island.org" in log, log
        assert "Mutter" not in log, log
        if desktop_name != "GNOME":
            assert "sway" in log and "KDE Plasma" in log, log
    finally:
        session.close()


def test_the_list_opens_from_the_command_and_dismisses_from_a_card(world, live):
    _, compact = compact_of(world, live)
    activity = live.started[-1][1]
    toggle = [desktop.overlay_binary(), "--toggle-list"]
    since = scenes.mark(world.overlay)
    world.session.run(toggle)
    # The frame log names the island's form; the list is open beside it.
    scenes.at_rest(world.overlay, "compact", since)
    image, box = world.screen.settled(lambda image, box: box is not None and box[3] > compact[3] + 40, name="list")
    # A panel under the island, centred, holding the activity's card.
    panel = image.box_not(desktop.BACKGROUND, region=(0, compact[3] + 2, image.width, image.height // 2))
    assert panel is not None and abs(centre(panel)[0] - image.width / 2) <= 2, panel
    world.session.run(toggle)
    world.screen.settled(lambda image, box: box == compact, name="list-closed", what="the list closing")

    mark = scenes.mark(world.overlay)
    world.session.run(toggle)
    scenes.at_rest(world.overlay, "compact", mark)
    scenes.actionable(world.overlay, "dismiss %s" % activity, since=mark)
    image, box = world.screen.settled(lambda image, box: box is not None and box[3] > compact[3] + 40, name="list")
    panel = image.box_not(desktop.BACKGROUND, region=(0, compact[3] + 2, image.width, image.height // 2))
    # The card's dismiss button (×) is the light mark at the panel's right end.
    cross = image.box(*LIGHT, region=(panel[2] - 60, panel[1], panel[2] - 4, panel[3]))
    assert cross is not None, "no dismiss button on the card"
    watch = Connection(world.session.socket)
    watch.call("org.island.Producer.Watch", {"app": APP}, more=True)
    assert watch.read()["parameters"]["event"] == {"kind": "watching"}
    world.sway.click(*centre(cross))
    world.sway.park()
    event = watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "state"
                             and m["parameters"]["event"]["activity"]["state"] == "dismissed")
    assert event["parameters"]["event"]["activity"]["id"] == activity
    watch.close()
    live.started = []
    world.screen.settled(lambda image, box: box is None, name="dismissed", what="the island and list hiding")


def light_bands(image, box):
    """The separate bands of rows with light pixels (text, a button's label) inside `box`, the
    capsule with its keyline: the keyline's rows, a light line over the desktop at the top and
    bottom edge, are no text and are left out (as its columns are at the sides). One mask of the
    image for all the rows: a check Screen.settled makes on every shot must be quick, or on a busy
    machine a mask of the whole image per row (seconds a shot) leaves it too few shots to see
    the island stand still within LIVENESS."""
    light = image.mask(*LIGHT)
    rows = [y for y in range(box[1] + 3, box[3] - 3)
            if light.find(1, y * image.width + box[0] + 8, y * image.width + box[2] - 8) >= 0]
    return sum(1 for a, b in zip(rows, rows[1:]) if b - a > 3) + 1 if rows else 0


def test_while_the_screen_is_shared_the_island_keeps_its_shape_and_shows_no_content(world, live):
    """While the screen is shared (`island admin sharing on`, as island-bridge says while a screen
    cast lives), islandd sends the overlay no content: the compact island stays a capsule with the
    app's icon and a concealed eye instead of "12 min", and the expanded one says "Hidden while
    sharing" with no button. Set ISLAND_GALLERY_SHARED=PATH.png to save the expanded island's
    photograph there, and the compact one's beside it (PATH-compact.png)."""
    before, compact = compact_of(world, live)
    since = scenes.mark(world.overlay)
    world.session.island("admin", "sharing", "on")
    try:
        scenes.at_rest(world.overlay, "compact", since)
        image, shared = world.screen.settled(
            lambda image, box: box is not None and image.crop(box).pixels != before.crop(compact).pixels, name="shared-compact",
            what="the compact island redrawn without its content")
        assert size(shared)[1] == size(compact)[1], "still the compact capsule: %s then %s" % (compact, shared)
        assert abs(centre(shared)[0] - image.width / 2) <= 2
        gallery = os.environ.get("ISLAND_GALLERY_SHARED")
        margin = 24
        if gallery:
            image.crop((shared[0] - 8 * margin, 0, shared[2] + 8 * margin, shared[3] + margin)).save_png(
                gallery.replace(".png", "-compact.png"))
        image, expanded = click_to_expand(world, shared, name="shared-expanded")
        # "Hidden while sharing" and nothing below it, where the layout's own expanded island
        # has its text and a button.
        assert light_bands(image, expanded) == 1, "expected one line of text and no button"
        if gallery:
            image.crop((max(0, expanded[0] - 4 * margin), 0, min(image.width, expanded[2] + 4 * margin),
                        min(image.height, expanded[3] + margin))).save_png(gallery)
        since = scenes.mark(world.overlay)
        world.session.island("admin", "sharing", "off")
        scenes.at_rest(world.overlay, "expanded", since)
        world.screen.settled(lambda image, box: box is not None and light_bands(image, box) >= 2, name="shown-again",
                             what="the expanded island with its text and button again")
    finally:
        world.session.island("admin", "sharing", "off")


# Last of the tests on the module's session: the daemon it restarts is this test's process, and
# conftest stops it when the test ends.
def test_the_overlay_comes_back_after_islandd_restarts(world, live):
    _, before = compact_of(world, live)
    activity = live.started[-1][1]
    session = world.session
    session.stop(session.islandd)
    session.start_islandd()
    # The activity was persisted; an update after the restart reaches the screen only through a
    # new subscription: its longer text widens the capsule.
    live.update(activity, scenes.state(minutes=123456))
    world.screen.settled(lambda image, box: box is not None and size(box)[0] > size(before)[0],
                         name="reconnected", what="the island after the daemon's restart")
