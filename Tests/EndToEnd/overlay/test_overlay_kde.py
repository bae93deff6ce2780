"""island-overlay on KDE Plasma's compositor: KWin 5.27 nested in the headless sway of the other
overlay tests (harness/kwin.py), the user's real islandd, and the real island-overlay on KWin's
socket, beside a window that logs the keys it gets (weston-eventdemo, which has KWin's keyboard
focus).

KWin 5.27's wlr-layer-shell is version 3: no on-demand keyboard interactivity. The overlay takes
the keyboard exclusively while the island is open (expanded, or the list) and gives it back at
every collapse; so Escape reaches the island, and the window has its keys again after. Input is
the sway seat's virtual pointer and keyboard, which KWin receives as a client of sway and hands
on; screenshots are grim's of the sway output, which KWin's window fills.

One KWin serves the module. Set ISLAND_DESKTOP_SHOTS=DIR to keep every screenshot, and
ISLAND_KDE_GALLERY=DIR (the guides' is docs/gallery) to save the top of the screen in each form
as kde-*.png."""

import contextlib
import os
import re

import pytest

from harness import desktop, kwin
from harness import overlay_scenes as scenes
from harness.overlay_scenes import centre, size
from harness.paths import LIVENESS

REASON = kwin.why_not()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

GALLERY = os.environ.get("ISLAND_KDE_GALLERY")
KEY_ESC, KEY_ENTER, KEY_SPACE = 1, 28, 57


class OnKWin(scenes.Screen):
    """Screenshots of KWin's screen. The island is looked for in the top band, above the key
    window KWin centres on the screen."""

    def top(self, image):
        return (0, 0, image.width, image.height // 3)

    def gallery(self, image, box, name):
        """The top of the screen and the island in `box`, as kde-NAME.png."""
        if GALLERY:
            os.makedirs(GALLERY, exist_ok=True)
            image.crop((0, 0, image.width, min(image.height, box[3] + 24))).save_png(
                os.path.join(GALLERY, "kde-%s.png" % name))


class World:
    def __init__(self, session, kde, keys, overlay):
        self.session, self.kwin, self.keys, self.overlay = session, kde, keys, overlay
        self.screen = OnKWin(kde, "kde")


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        sway.start_pointer()
        kde = kwin.KWin(session, sway)
        keys = kwin.KeyWindow(session, kde)
        opener = scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        # WAYLAND_DEBUG: the overlay's Wayland requests and events in its log, which
        # test_a_surface_mapped_anew_takes_the_pointer_only_on_the_island reads.
        overlay = desktop.Overlay(session, dict(kde.env, ISLAND_OVERLAY_FRAME_LOG="1", WAYLAND_DEBUG="client"),
                                  config=scenes.overlay_config(opener))
        world = World(session, kde, keys, overlay)
        # KWin gives the key window the keyboard as it maps: a key typed then reaches it (typed
        # again if it came before KWin had; each is bounded).
        desktop.wait_until(lambda: world.kwin.key(KEY_SPACE) or _arrives(world, KEY_SPACE), LIVENESS,
                           "the key window having the keyboard", interval=0)
        yield world
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


@contextlib.contextmanager
def producing(world):
    """Activities for one test, ended after it: the next test starts from an empty screen."""
    producer = scenes.Producer(world.session)
    try:
        yield producer
    finally:
        producer.end_all()
        world.kwin.park()
        world.screen.settled(lambda image, box: box is None, what="the island hiding")
        world.overlay.alive()


def _arrives(world, code, within=3):
    try:
        return desktop.wait_until(lambda: code in world.keys.keys(), within, "key %d" % code)
    except TimeoutError:
        return False


def typed_to_the_window(world, code):
    """Types `code` until the key window has it. The island gives the keyboard back as it
    collapses, and KWin hands it to the window when the island's surface is mapped anew, a
    moment the test cannot see: a key typed before then goes to the island, which takes only
    Escape and drops it. So the key is typed again, once a second, until the window has it."""
    before = len(world.keys.keys())

    def arrived():
        if code in world.keys.keys()[before:]:
            return True
        world.kwin.key(code)
        return False
    desktop.wait_until(arrived, LIVENESS, "key %d reaching the window" % code, interval=1.0)
    assert set(world.keys.keys()[before:]) == {code}, "other keys reached the window: %s" % world.keys.keys()[before:]


def compact(world, producer):
    producer.request()
    image, box = world.screen.settled(lambda image, box: box is not None and size(box)[1] <= 64, name="compact")
    return image, box


def test_the_island_shows_on_kwin_and_takes_the_keyboard_exclusively_while_open(world):
    log = desktop.wait_until(lambda: "backend wayland" in world.overlay.log() and world.overlay.log(), LIVENESS,
                             "the overlay's start-up log")
    assert "layer-shell v3" in log and "keyboard exclusive while open" in log, log
    assert "does not support on-demand keyboard interactivity" not in log, log
    with producing(world) as producer:
        image, box = compact(world, producer)
        world.screen.gallery(image, box, "compact")
        x, _ = centre(box)
        assert abs(x - image.width / 2) <= 2 and box[1] <= 24, "the capsule %s is not at the top centre" % (box,)
        assert image.pixel(box[0], box[1]) == world.kwin.background, "not a rounded capsule on KWin's desktop"


def test_the_list_opens_and_escape_closes_it_and_the_window_has_its_keys_again(world):
    """The path that failed on KWin (on-demand refused, the island never had the keyboard): the
    list opened by `--toggle-list`, with no click that could focus the island."""
    with producing(world) as producer:
        _, rest = compact(world, producer)
        mark = len(scenes.log_lines(world.overlay))
        world.session.run([desktop.overlay_binary(), "--toggle-list"])
        image, box = world.screen.settled(lambda image, box: box is not None and box[3] > rest[3] + 40, name="list")
        world.screen.gallery(image, box, "list")
        keys = len(world.keys.keys())

        world.kwin.key(KEY_ESC)
        world.screen.settled(lambda image, box: box == rest, name="list-closed")
        assert world.keys.keys()[keys:] == [], "Escape went to the window, not the island"
        lines = scenes.log_lines(world.overlay, mark)
        assert "island-overlay: list opened" in lines, lines
        # Given back at the collapse: the window has the next key.
        typed_to_the_window(world, KEY_ENTER)


def test_a_click_expands_the_island_and_escape_collapses_it(world):
    """The pointer stays on the island it clicked (the expanded island grows around it): on
    KWin the pointer leaving the open island closes it, which is another test's subject."""
    with producing(world) as producer:
        _, rest = compact(world, producer)
        world.kwin.click(*centre(rest))
        image, box = world.screen.settled(lambda image, box: box is not None and size(box)[1] > size(rest)[1] + 30,
                                          name="expanded")
        world.screen.gallery(image, box, "expanded")
        desktop.wait_until(lambda: desktop.island_mode(world.session) == "expanded", LIVENESS, "the daemon expanding")
        keys = len(world.keys.keys())

        world.kwin.key(KEY_ESC)
        desktop.wait_until(lambda: desktop.island_mode(world.session) == "compact", LIVENESS, "Escape collapsing it")
        world.screen.settled(lambda image, box: box == rest, name="collapsed")
        assert world.keys.keys()[keys:] == [], "Escape went to the window, not the island"
        typed_to_the_window(world, KEY_SPACE)


def surfaces_without_input_region(trace):
    """The island's surfaces in `trace` (the overlay's WAYLAND_DEBUG lines) whose first frame (the
    commit of their first buffer) came with no input region set since the surface was made: a
    surface with none takes the pointer on all of it."""
    missing, made = [], re.compile(r"get_layer_surface\(new id zwlr_layer_surface_v1@\d+, wl_surface@(\d+),")
    for start, line in enumerate(trace):
        found = made.search(line)
        if not found:
            continue
        surface, region, attached = "wl_surface@%s." % found.group(1), False, False
        for later in trace[start + 1:]:
            if surface + "set_input_region(" in later:
                region = True
            elif surface + "attach(wl_buffer@" in later:
                attached = True
            elif attached and surface + "commit()" in later:
                if not region:
                    missing.append(line.strip())
                break
    return missing


def test_a_surface_mapped_anew_takes_the_pointer_only_on_the_island(world):
    """Giving the keyboard back, the island's window is mapped anew (KWin 5.27 keeps the keyboard
    with a surface that stops accepting it), on a new surface. GDK sends a surface's input region
    only when it is set, so the new surface took the pointer on the whole transparent canvas
    until the island's shapes next changed, and a click into the window below as the island
    collapsed gave the island the keyboard (the window then had no keys). Read from the
    overlay's Wayland trace, by order: each surface it maps has its input region by its first
    frame. (Without the fix a surface's first frame has a region only when the daemon's answer
    happened to move the shapes in that frame first; three collapses make that unlikely.)"""
    with producing(world) as producer:
        _, rest = compact(world, producer)
        mark = len(world.overlay.log().splitlines())
        for _ in range(3):
            world.kwin.click(*centre(rest))
            world.screen.settled(lambda image, box: box is not None and size(box)[1] > size(rest)[1] + 30)
            desktop.wait_until(lambda: desktop.island_mode(world.session) == "expanded", LIVENESS, "the daemon expanding")
            world.kwin.key(KEY_ESC)
            desktop.wait_until(lambda: desktop.island_mode(world.session) == "compact", LIVENESS, "Escape collapsing it")
            world.screen.settled(lambda image, box: box == rest, name="collapsed")
        trace = world.overlay.log().splitlines()[mark:]
        assert sum("get_layer_surface(" in line for line in trace) == 3, "the window was not mapped anew at each collapse"
        assert surfaces_without_input_region(trace) == [], \
            "a surface mapped with no input region: its whole canvas took the pointer"


def test_a_click_in_the_window_collapses_the_island_and_the_window_has_its_keys(world):
    """The exclusive keyboard does not keep the user from their window: the pointer going to it
    closes the expanded island (the overlay's own collapse, logged: the test's expansions last an
    hour, so it is not the daemon's timeout), and the keys go to the window."""
    with producing(world) as producer:
        _, rest = compact(world, producer)
        world.kwin.click(*centre(rest))
        world.screen.settled(lambda image, box: box is not None and size(box)[1] > size(rest)[1] + 30)
        desktop.wait_until(lambda: desktop.island_mode(world.session) == "expanded", LIVENESS, "the daemon expanding")

        mark = len(scenes.log_lines(world.overlay))
        world.kwin.click(world.kwin.width // 2, world.kwin.height // 2)  # the key window, centred
        world.kwin.park()
        desktop.wait_until(lambda: desktop.island_mode(world.session) == "compact", LIVENESS, "the click collapsing it")
        assert any(line.startswith("island-overlay: collapse ") for line in scenes.log_lines(world.overlay, mark)), \
            "not the overlay's own collapse:\n" + "\n".join(scenes.log_lines(world.overlay, mark))
        typed_to_the_window(world, KEY_SPACE)
