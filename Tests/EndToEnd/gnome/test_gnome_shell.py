"""The island on GNOME, in a real GNOME Shell 43: `gnome-shell --nested --wayland` in Xvfb as the
unprivileged test user (harness/gnome.py), the extension of GNOMEShellExtension/ installed for that
user and enabled before the Shell starts, the user's real islandd, and island-overlay started by the
extension as a Wayland client it owns and places. Input with xdotool on Xvfb (the nested Shell's
window takes it as a seat's), screenshots through the X protocol (harness/x11_screen.py).

Activities are started and ended with the `island` CLI as the user. The island hangs just under
the top bar, centred: the bar's pixels, the clock's included, are the same with the island as
without it. A click expands it (and gives it the keyboard: Escape collapses it), a button
reaches the app's Watch, an alert and the list show; a fullscreen window hides it but for an
alert, and takes the focus the island got when it mapped; Do Not Disturb holds an alert back;
the gap setting moves it, the size setting starts it again in that size; a killed overlay is started again; the preferences window opens; an
ended activity leaves nothing, and disabling the extension leaves no window and no
island-overlay process. Two tests run a Shell of their own: GNOME on X11 (the window found by
its pid), and two monitors (the monitor setting).

Set ISLAND_DESKTOP_SHOTS=DIR to keep every screenshot, and ISLAND_GNOME_GALLERY=DIR (the
the user guide's is docs/gallery) to save the top of the screen in each form as gnome-*.png."""

import contextlib
import json
import os
import re
import shutil
import signal
import tempfile

import pytest

from harness import desktop, gnome
from harness import overlay_scenes as scenes
from harness.desktop import LIGHT
from harness.overlay_scenes import APP, centre, size
from harness.paths import LIVENESS
from harness.varlink import Connection

REASON = gnome.why_not()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

GAP = gnome.GAP
GALLERY = os.environ.get("ISLAND_GNOME_GALLERY")


class Hosted:
    """The overlay as the Shell runs it: its standard error is in the Shell's log."""

    def __init__(self, shell):
        self.shell = shell

    def log(self):
        return "\n".join(line for line in self.shell.log().splitlines() if line.startswith("island-overlay: "))


class UnderTheBar(scenes.Screen):
    """Screenshots of the Shell; the island is looked for below the top bar, in the upper half."""

    def __init__(self, shell, panel):
        super().__init__(shell, "gnome")
        self.panel = panel

    def top(self, image):
        return (0, self.panel, image.width, image.height // 2)

    def gallery(self, image, box, name):
        """The top of the screen, the bar and the island in `box`, as docs/gallery/gnome-NAME.png."""
        if GALLERY:
            os.makedirs(GALLERY, exist_ok=True)
            image.crop((0, 0, image.width, min(image.height, box[3] + 24))).save_png(
                os.path.join(GALLERY, "gnome-%s.png" % name))


class World:
    def __init__(self, session, shell):
        self.session, self.shell = session, shell
        self.overlay = Hosted(shell)
        self.panel = gnome.panel_bottom(shell.parked_screenshot())
        self.screen = UnderTheBar(shell, self.panel)
        self.bare = self.screen.grab("bare")  # the desktop and the top bar, nothing live


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        opener = scenes.prepare(session)
        session.write(os.path.join(session.config, "island", "overlay.conf"), scenes.overlay_config(opener))
        session.start_islandd(scenes.DAEMON_CONFIG)
        shell = gnome.GnomeShell(session, env={"ISLAND_OVERLAY_FRAME_LOG": "1"})
        desktop.wait_until(shell.overlays, LIVENESS, "island-overlay started by the extension")
        shell.park()  # the pointer, which the Shell draws, away from the bar and the island
        yield World(session, shell)
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


@pytest.fixture
def cli(world):
    """`island start` and `island end` as the user, for the test app; ends what is left."""
    started = []

    def island(*args):
        return world.session.island(*args, "--app", APP).strip()

    def start(minutes=12):
        activity = island("start", "Order", "--attributes", json.dumps({"order": "A17"}),
                          "--state", json.dumps(scenes.state(minutes=minutes)["state"]))
        started.append(activity)
        return activity

    yield start
    for activity in started:
        world.session.run([os.path.join(desktop.bin_dir(), "island"), "end", activity, "--app", APP,
                           "--dismiss", "immediate"], check=False)
    world.shell.park()
    world.screen.settled(lambda image, box: box is None, what="the island hiding")


def test_the_overlay_is_given_the_room_under_the_bar(world):
    """Enabled while the Shell starts, the extension waits for the Shell's layout: the overlay's
    `--max-height` is the monitor's height less the bar and the gap, not the whole monitor."""
    [pid] = world.shell.overlays()
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        argv = f.read().decode().split("\0")
    assert argv[argv.index("--max-height") + 1] == str(world.bare.height - world.panel - GAP), argv


def watching(world):
    watch = Connection(world.session.socket)
    watch.call("org.island.Producer.Watch", {"app": APP}, more=True)
    assert watch.read()["parameters"]["event"] == {"kind": "watching"}
    return watch


def compact_of(world, cli):
    activity = cli()
    image, box = world.screen.settled(gnome.hangs_under(world.panel + GAP), name="compact")
    return activity, image, box


def differing(a, b, region):
    """How many pixels of `region` differ between images `a` and `b`."""
    x0, y0, x1, y1 = region
    return sum(1 for y in range(y0, y1) for x in range(x0, x1) if a.pixel(x, y) != b.pixel(x, y))


def clock_box(image, panel):
    """The clock: the light text in the middle third of the top bar."""
    third = image.width // 3
    return image.box(*LIGHT, region=(third, 0, 2 * third, panel))


def test_the_island_hangs_centred_under_the_top_bar_and_leaves_the_clock_alone(world, cli):
    assert world.panel >= 16, "no top bar found: %d rows" % world.panel
    assert world.screen.capsule(world.bare) is None, "something is drawn under the bar with nothing live"
    clock = clock_box(world.bare, world.panel)
    assert clock is not None and abs(centre(clock)[0] - world.bare.width / 2) <= 40, "no clock at the bar's centre"

    _, image, box = compact_of(world, cli)
    world.screen.gallery(image, box, "compact")
    assert abs(centre(box)[0] - image.width / 2) <= 2, box
    # Its top edge is the gap below the bar's bottom (antialiasing may soften the first row).
    assert world.panel + GAP <= box[1] <= world.panel + GAP + 2, (world.panel, box)
    assert 16 <= size(box)[1] <= 64 and size(box)[0] <= image.width // 3, box
    # The bar is as it was: every pixel, but for the clock's own digits should a minute turn
    # between the two shots (and the clock is still drawn where it was).
    bar = (0, 0, image.width, world.panel)
    digits = (clock[0] - 4, clock[1] - 2, clock[2] + 4, clock[3] + 2)
    outside = differing(world.bare, image, (0, 0, digits[0], world.panel)) \
        + differing(world.bare, image, (digits[2], 0, image.width, world.panel))
    assert outside == 0, "%d pixels of the top bar changed beside the clock" % outside
    assert clock_box(image, world.panel) is not None and differing(world.bare, image, bar) <= size(digits)[0] * size(digits)[1]


def test_a_click_expands_it_and_a_button_reaches_the_apps_watch(world, cli):
    activity, _, compact = compact_of(world, cli)
    mark = len(scenes.log_lines(world.overlay))
    world.shell.click(*centre(compact))
    world.shell.park()
    image, box = world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1],
                                      name="expanded")
    world.screen.gallery(image, box, "expanded")
    assert abs(centre(box)[0] - image.width / 2) <= 2 and box[1] >= world.panel + GAP, box
    scenes.actionable(world.overlay, "button %s pause" % activity, since=mark)
    lower = (box[0] + 8, (box[1] + box[3]) // 2, box[2] - 8, box[3] - 4)
    label = image.box(*LIGHT, region=lower)
    assert label is not None, "no button label in the lower half of the expanded island"
    watch = watching(world)
    world.shell.click(*centre(label))
    world.shell.park()
    event = watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "button")["parameters"]["event"]
    assert event["action"] == "pause" and event["activity"]["id"] == activity
    watch.close()


def test_a_click_reaches_an_island_after_the_pointer_swept_across_the_empty_window(world, cli):
    """While nothing is live, the overlay's window (its whole canvas, under the bar) is on screen
    with nothing to click in it: the pointer passes through it to the desktop. A hand's pointer
    crosses it on its way, and leaves onto the desktop; an island shown afterwards must still
    take a click. A fresh overlay: its window is known to be in place once it has shown an
    island where it should, and the sweep comes after that island ended."""
    world.shell.disable_extension()
    desktop.wait_until(lambda: not world.shell.overlays(), LIVENESS, "island-overlay gone after the extension's disable()")
    mark = len(scenes.log_lines(world.overlay))
    world.shell.enable_extension()
    first, _, _ = compact_of(world, cli)
    world.session.island("end", first, "--app", APP, "--dismiss", "immediate")
    world.screen.settled(lambda image, box: box is None, what="the first island gone")
    [described] = [line for line in scenes.log_lines(world.overlay, mark) if " canvas " in line]
    width, height = (int(n) for n in re.search(r" canvas ([0-9]+)x([0-9]+)", described).groups())
    screen = world.bare
    left, top = (screen.width - width) // 2, world.panel + GAP
    right, bottom = left + width, min(screen.height, top + height)
    # Across the window and back, through its middle, and out over the desktop beside it (away
    # from the upper half, where the island is looked for).
    world.shell.sweep((left + 20, top + 8), (right - 20, top + 40), (screen.width // 2, (top + bottom) // 2),
                      (left + 30, bottom - 40), (left - 120, screen.height * 3 // 4))
    world.screen.grab("swept-empty-window")
    activity, _, compact = compact_of(world, cli)
    mark = len(scenes.log_lines(world.overlay))
    world.shell.click(*centre(compact))
    desktop.wait_until(lambda: any(line.startswith("island-overlay: click at ") for line in scenes.log_lines(world.overlay, mark)),
                       LIVENESS, "the overlay logging the click on the island")
    world.shell.park()
    world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded-after-sweep")


def test_escape_collapses_the_island_a_click_expanded(world, cli):
    """The click that expands the island gives it the keyboard (the extension lets a click's
    focus stand), so Escape reaches it."""
    _, _, compact = compact_of(world, cli)
    world.shell.click(*centre(compact))
    world.shell.park()
    world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded-for-escape")
    world.session.run(["xdotool", "key", "Escape"])
    world.screen.settled(lambda image, box: box == compact, name="escaped", what="the island collapsed by Escape")


def test_an_alert_expands_it_under_the_bar(world, cli):
    activity, _, compact = compact_of(world, cli)
    with world.session.varlink("org.island.Producer") as producer:
        producer.Update(app=APP, id=activity, content=scenes.state(minutes=5),
                        alert={"title": "Your order is ready", "body": "Pick it up at the counter"})
    image, box = world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1],
                                      name="alert")
    world.screen.gallery(image, box, "alert")
    assert box[1] >= world.panel + GAP, box
    # The test's alerts last an hour (scenes.DAEMON_CONFIG): the user collapses it.
    scenes.Producer(world.session).collapse(activity)
    world.screen.settled(lambda image, box: box is not None and size(box)[1] == size(compact)[1],
                         what="the island back in compact after the alert")


def test_the_list_opens_under_the_island(world, cli):
    _, _, compact = compact_of(world, cli)
    cli(minutes=30)
    toggle = [desktop.overlay_binary(), "--toggle-list"]
    world.session.run(toggle)
    image, box = world.screen.settled(lambda image, box: box is not None and box[3] > compact[3] + 40, name="list")
    world.screen.gallery(image, box, "list")
    panel = image.box_not(desktop.BACKGROUND, region=(0, compact[3] + 2, image.width, image.height // 2))
    assert panel is not None and abs(centre(panel)[0] - image.width / 2) <= 2, panel
    world.session.run(toggle)


def host_said(world, words, since):
    """Waits for the overlay to log what the extension told it on its standard input."""
    desktop.wait_until(lambda: any(line == "island-overlay: desktop: " + words for line in scenes.log_lines(world.overlay, since)),
                       LIVENESS, "the overlay told %r" % words)


class OverFullscreen(scenes.Screen):
    """Screenshots of a fullscreen window of one colour, where the island is whatever else is
    drawn in the upper half (away from the corner where the Shell draws the pointer)."""

    background = gnome.FULLSCREEN_COLOUR

    def __init__(self, shell):
        super().__init__(self, "gnome-fullscreen")
        self.shell = shell

    def screenshot(self):
        return self.shell.screenshot()

    def top(self, image):
        return (100, 0, image.width - 100, image.height // 2)


def test_a_fullscreen_window_hides_the_island_except_for_an_alert(world, cli):
    # A new island, on a desktop with no window: mutter focuses it when it maps, and the
    # extension gives the focus back (the window below must get it).
    world.shell.disable_extension()
    desktop.wait_until(lambda: not world.shell.overlays(), LIVENESS, "island-overlay gone after the extension's disable()")
    world.shell.enable_extension()
    activity, _, compact = compact_of(world, cli)
    mark = len(scenes.log_lines(world.overlay))
    window = world.shell.start_fullscreen_window()
    try:
        host_said(world, "fullscreen yes, alerts shown", mark)
        # It has the keyboard (mutter did not announce it as "ready" instead, as it does a
        # window opened while another has the focus).
        desktop.wait_until(lambda: "fullscreen window: focus in" in world.session.log("fullscreen-window"), LIVENESS,
                           "the fullscreen window focused")
        over = OverFullscreen(world.shell)
        image, _ = over.settled(lambda image, box: box is None, name="alone", what="the fullscreen window alone")
        assert image.pixel(image.width // 2, 2) == gnome.FULLSCREEN_COLOUR, "the top bar is over the fullscreen window"
        with world.session.varlink("org.island.Producer") as producer:
            producer.Update(app=APP, id=activity, content=scenes.state(minutes=4),
                            alert={"title": "Your order is ready", "body": "Pick it up at the counter"})
        image, box = over.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1],
                                  name="alert", what="the alert over the fullscreen window")
        assert abs(centre(box)[0] - image.width / 2) <= 2, box
        # The alert over (collapsed: the test's alerts last an hour), the island keeps out of
        # the way again.
        scenes.Producer(world.session).collapse(activity)
        over.settled(lambda image, box: box is None, name="after-alert", what="the island hidden after the alert")
    finally:
        world.session.stop(window)
    host_said(world, "fullscreen no, alerts shown", mark)
    world.screen.settled(lambda image, box: box is not None and size(box)[1] == size(compact)[1], name="after-fullscreen",
                         what="the compact island back after the fullscreen window")


def test_do_not_disturb_holds_an_alert_back(world, cli):
    activity, image, compact = compact_of(world, cli)
    mark = len(scenes.log_lines(world.overlay))
    world.shell.set_desktop_setting("org.gnome.desktop.notifications", "show-banners", "false")
    try:
        host_said(world, "fullscreen no, alerts held (Do Not Disturb)", mark)
        mark = len(scenes.log_lines(world.overlay))
        with world.session.varlink("org.island.Producer") as producer:
            producer.Update(app=APP, id=activity, content=scenes.state(minutes=3),
                            alert={"title": "Your order is ready", "body": "Pick it up at the counter"})
        # The update applies (the compact island's minutes change), without expanding: no frame
        # of an alert is painted.
        later, box = world.screen.settled(lambda later, box: box is not None and later.crop(compact).pixels != image.crop(compact).pixels,
                                          name="do-not-disturb")
        assert size(box)[1] == size(compact)[1], box
        alerts = [line for line in scenes.log_lines(world.overlay, mark) if line.endswith(" alert")]
        assert not alerts, alerts
    finally:
        world.shell.set_desktop_setting("org.gnome.desktop.notifications", "show-banners", "true")
    host_said(world, "fullscreen no, alerts shown", mark)


def test_the_gap_setting_moves_the_island(world, cli):
    _, _, compact = compact_of(world, cli)
    world.shell.set_setting("gap-below-panel", "40")
    try:
        _, moved = world.screen.settled(lambda image, box: box is not None and box[1] >= world.panel + 40, name="gap-40")
        assert size(moved) == size(compact) and moved[0] == compact[0], (moved, compact)
    finally:
        world.shell.set_setting("gap-below-panel", str(GAP))
    world.screen.settled(lambda image, box: box == compact, what="the island back under the bar")


def test_the_overlay_fits_its_window_to_the_room_the_extension_says(world, cli):
    """The room under the bar changes while the overlay runs (here by the gap setting; a monitor
    plugged in or out, or a new mode or scale, changes it the same way, through the Shell's
    monitors-changed and workareas-changed, which a nested Shell cannot be made to send): the
    extension says the new room on the overlay's standard input, and the overlay resizes its
    window to it, the same process, then back when the room is back."""
    [pid] = world.shell.overlays()
    compact_of(world, cli)
    mark = len(scenes.log_lines(world.overlay))
    room = world.bare.height - world.panel - 200

    def resized(room, since):
        pattern = re.compile(r"island-overlay: the host has %d px under its bar: window (\d+)x(\d+)$" % room)
        found = [pattern.match(line) for line in scenes.log_lines(world.overlay, since)]
        return next(((int(m.group(1)), int(m.group(2))) for m in found if m), None)
    world.shell.set_setting("gap-below-panel", "200")
    try:
        width, height = desktop.wait_until(lambda: resized(room, mark), LIVENESS, "the overlay fitting a %d px room" % room)
        assert height == room, (width, height)
        world.screen.settled(lambda image, box: box is not None and box[1] >= world.panel + 200, name="gap-200")
    finally:
        mark = len(scenes.log_lines(world.overlay))
        world.shell.set_setting("gap-below-panel", str(GAP))
    full = world.bare.height - world.panel - GAP
    assert desktop.wait_until(lambda: resized(full, mark), LIVENESS, "the overlay fitting the room again")[1] == full
    assert world.shell.overlays() == [pid], "the same overlay, resized rather than started again"


def test_the_size_setting_starts_the_overlay_again_in_that_size(world, cli):
    _, _, compact = compact_of(world, cli)
    [before] = world.shell.overlays()
    world.shell.set_setting("size", "'large'")
    try:
        _, large = world.screen.settled(lambda image, box: box is not None and size(box)[1] > size(compact)[1],
                                        name="large")
        assert size(large)[0] > size(compact)[0] and abs(centre(large)[0] - centre(compact)[0]) <= 2, (large, compact)
        assert large[1] == compact[1], "not hung at the same gap under the bar: %s %s" % (large, compact)
        [after] = world.shell.overlays()
        with open("/proc/%d/cmdline" % after, "rb") as f:
            arguments = f.read().split(b"\0")
        assert after != before and arguments[1:4] == [b"--hosted", b"--size", b"large"], arguments
    finally:
        world.shell.set_setting("size", "'medium'")
    world.screen.settled(lambda image, box: box == compact, what="the island back in its medium size")


def test_the_extension_starts_the_overlay_again_after_it_crashed(world, cli):
    _, _, compact = compact_of(world, cli)
    [pid] = world.shell.overlays()
    os.kill(pid, signal.SIGKILL)
    desktop.wait_until(lambda: world.shell.overlays() and world.shell.overlays() != [pid], LIVENESS,
                       "a new island-overlay")
    assert "Island: island-overlay was killed by signal 9; starting it again in " in world.shell.log()
    world.screen.settled(lambda image, box: box == compact, name="restarted", what="the island back after the restart")


def test_an_ended_activity_leaves_nothing_on_screen(world, cli):
    activity, _, _ = compact_of(world, cli)
    world.session.island("end", activity, "--app", APP, "--dismiss", "immediate")
    world.screen.settled(lambda image, box: box is None, name="ended", what="the island hiding")


def test_the_preferences_window_opens(world):
    """prefs.js in the window of the Shell's extensions service (gnome-extensions-app's), bound
    to the extension's settings; no error from it."""
    service = world.shell.open_preferences()
    try:
        # A window in the middle of the desktop, which is bare there otherwise.
        middle = (world.bare.width // 3, world.bare.height // 3, 2 * world.bare.width // 3, 2 * world.bare.height // 3)
        image = desktop.wait_until(lambda: (lambda i: i if i.box_not(gnome.BACKGROUND, region=middle) == middle else None)(
            world.screen.grab()), LIVENESS, "the preferences window")
        world.screen.grab("preferences")
        assert image.count(*LIGHT, region=middle) > (middle[2] - middle[0]) * (middle[3] - middle[1]) // 2
        log = world.session.log("extensions-service")
        assert not [line for line in log.splitlines() if "Gjs-" in line or "JS ERROR" in line], log[-3000:]
    finally:
        world.session.stop(service)


# Last: the module's Shell has no extension afterwards.
def test_disabling_the_extension_leaves_no_window_and_no_process(world, cli):
    _, _, compact = compact_of(world, cli)
    world.shell.disable_extension()
    desktop.wait_until(lambda: not world.shell.overlays(), LIVENESS, "island-overlay gone after the extension's disable()")
    world.screen.settled(lambda image, box: box is None, name="disabled", what="the island's window gone")
    assert world.shell.extension_state() == "DISABLED"
    world.session.alive(world.shell.process)


@contextlib.contextmanager
def own_shell(overlay=True, **options):
    """A Shell of a test's own (GnomeShell's `options`), with islandd and the test app (and,
    unless `overlay` is false, the overlay it starts): the session, the Shell and a Producer;
    its logs printed if the test fails."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        scenes.prepare(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        shell = gnome.GnomeShell(session, **options)
        if overlay:
            desktop.wait_until(shell.overlays, LIVENESS, "island-overlay started by the extension")
        shell.park()
        yield session, shell, scenes.Producer(session)
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


def test_on_x11_the_extension_finds_the_overlays_window_by_its_pid():
    """A GNOME on X11 session: the Shell is the X server's window manager, and the extension
    starts island-overlay as an ordinary child and places the window whose pid is its."""
    with own_shell(x11=True) as (session, shell, producer):
        panel = gnome.panel_bottom(shell.screenshot())
        screen = UnderTheBar(shell, panel)
        screen.prefix = "gnome-x11"
        producer.request()
        image, compact = screen.settled(lambda image, box: box is not None, name="compact")
        assert abs(centre(compact)[0] - image.width / 2) <= 2, compact
        assert panel + GAP <= compact[1] <= panel + GAP + 2, (panel, compact)
        shell.click(*centre(compact))
        shell.park()
        screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded")
        shell.disable_extension()
        desktop.wait_until(lambda: not shell.overlays(), LIVENESS, "island-overlay gone after the extension's disable()")
        screen.settled(lambda image, box: box is None, name="disabled", what="the island's window gone")


def test_the_monitor_setting_hangs_it_on_another_monitor():
    """Two monitors side by side (mutter's dummy monitors in the nested Shell), the top bar on
    the primary, the first. With `monitor` '1' the island hangs at the top centre of the second,
    which has no bar: the gap from its top edge."""
    with own_shell(width=2560, height=720, env={"MUTTER_DEBUG_NUM_DUMMY_MONITORS": "2",
                                                "MUTTER_DEBUG_DUMMY_MODE_SPECS": "1280x720",
                                                "ISLAND_OVERLAY_FRAME_LOG": "1"}) as (session, shell, producer):
        panel = gnome.panel_bottom(shell.screenshot().crop((0, 0, 1280, 720)))
        screen = UnderTheBar(shell, panel)
        screen.prefix = "gnome-monitors"
        overlay = Hosted(shell)
        since = scenes.mark(overlay)
        producer.request()
        # Measured at rest: an overlay starved of CPU mid-morph leaves one frame of the spring
        # on screen, standing still (a row taller, seen beside stress-ng).
        scenes.at_rest(overlay, "compact", since)

        # Awaited where it hangs, not taken from the first still screen (gnome.hangs_under): the
        # overlay at rest says nothing of the Shell, which composites it.
        image, first = screen.settled(gnome.hangs_under(panel + GAP, 640), name="primary")
        shell.set_setting("monitor", "'1'")
        screen.top = lambda image: (1280, 0, image.width, image.height // 2)  # the second monitor, barless
        scenes.at_rest(overlay, "compact")
        image, second = screen.settled(gnome.hangs_under(GAP, 1280 + 640), name="second")
        assert image.box_not(gnome.BACKGROUND, region=(0, panel, 1280, 360)) is None, "still drawn on the first monitor"
        assert size(second) == size(first)


def test_without_island_overlay_the_extension_says_so():
    """No island-overlay in PATH: the extension stays enabled, starts nothing, and says why (in
    the log and in a notification)."""
    message = "Island: island-overlay is missing: Not in PATH: install the island-overlay package"
    # A PATH of one empty directory: missing even where the island-overlay package is installed
    # (/usr/bin/island-overlay), as the harness's system data hides the package's extension.
    nothing = tempfile.mkdtemp(prefix="island-empty-path-", dir="/tmp")
    os.chmod(nothing, 0o755)
    try:
        with own_shell(overlay=False, env={"PATH": nothing}) as (session, shell, producer):
            desktop.wait_until(lambda: message in shell.log(), LIVENESS, "the extension saying island-overlay is missing")
            screen = UnderTheBar(shell, gnome.panel_bottom(shell.screenshot()))
            screen.prefix = "gnome-missing"
            screen.grab("notified")
            assert shell.extension_state() == "ENABLED" and not shell.overlays()
            assert shell.log().count(message) == 1
    finally:
        shutil.rmtree(nothing, ignore_errors=True)
