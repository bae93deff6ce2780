"""The island's motion on a real compositor (docs/design.md §10): bursts of `grim` frames of
headless sway while the real island-overlay expands and collapses, on a plain blue desktop. In every
frame, whatever is not the desktop must lie inside the capsule as that frame shows it: within the
extent of the capsule's own pixels (its black and its keyline's red) on its row and on its column,
with a few pixels for antialiasing. Text drawn at its final place outside the growing capsule,
content cutting through the keyline, a translucent ghost of the bubble: each puts pixels there (each
once did).

The verdict is the same on a busy machine: a burst takes as many frames as grim gives it
(fewer when busy) and every one of them must be clean; it ends once the overlay's frame log says
the island is at rest in its new form and a frame begun after that is taken; nothing is timed."""

import pytest

from harness import desktop, motion_frames
from harness import overlay_scenes as scenes
from harness.overlay_scenes import OTHER, size

REASON = desktop.why_not("sway", "swaymsg", "swaybg", "grim") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

# The capsule's own pixels: its black, the test layout's red keyline (scenes.KEYLINE, #FF2020)
# and every blend of the two (the keyline antialiased over the black, on a curve, where no pixel
# is fully red). The blue desktop is in no such blend, nor is anything translucent over it.
CAPSULE = (((0, 0, 0), (255, 40, 40)),)


@pytest.fixture(scope="module")
def world():
    with scenes.sway_world("motion") as world:
        yield world


@pytest.fixture
def live(world):
    with scenes.producing(world) as producer:
        yield producer


def top(world):
    """The band of the output where the island and its motion are: 600 px wide, 240 tall."""
    middle = world.sway.width // 2
    return (middle - 300, 0, middle + 300, 240)


def morph(world, action, form, activity=None):
    """A burst of frames while the island does `action` (expand, collapse), from before it is
    asked until the overlay has painted `form` at rest and a frame of that is taken; the burst."""
    parameters = {"action": action}
    if activity:
        parameters["id"] = activity
    since = scenes.mark(world.overlay)
    with motion_frames.Burst(world.session, top(world), after=0) as burst:
        world.session.call_as_user("org.island.Presenter.Interact", parameters)
        scenes.at_rest(world.overlay, form, since)
        burst.take_one_more()
    return burst


def assert_inside_the_capsule(world, burst, what):
    frames = burst.frames
    assert len(frames) >= 2, "%s: grim gave %d frames" % (what, len(frames))
    assert burst.changed(), "%s: nothing moved on screen during the burst" % what
    for index, (_, image) in enumerate(frames):
        found = motion_frames.strays(image, desktop.BACKGROUND, dark=CAPSULE)
        if found:
            if world.screen.shots:
                world.screen.count += 1
                image.save_png("%s/motion-%02d-%s-frame-%02d.png" % (world.screen.shots, world.screen.count, what, index))
            xs, ys = [x for x, _ in found], [y for _, y in found]
            raise AssertionError("%s, frame %d of %d: %d pixels outside the capsule, within x %d..%d, y %d..%d (of the band %s)"
                                 % (what, index, len(frames), len(found), min(xs), max(xs), min(ys), max(ys), top(world)))


def test_expanding_and_collapsing_draw_nothing_outside_the_capsule(world, live):
    since = scenes.mark(world.overlay)
    activity = live.request()
    scenes.at_rest(world.overlay, "compact", since)
    _, compact = world.screen.settled(lambda image, box: box is not None, name="compact")
    assert_inside_the_capsule(world, morph(world, "expand", "expanded", activity), "expand")
    world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded")
    assert_inside_the_capsule(world, morph(world, "collapse", "compact"), "collapse")
    world.screen.settled(lambda image, box: box is not None and size(box) == size(compact), name="compact-again")


def test_with_a_bubble_expanding_and_collapsing_draw_nothing_outside_the_capsule(world, live):
    """Two activities: the second shows as the detached bubble, which merges into the island as
    it expands and splits off again as it collapses."""
    since = scenes.mark(world.overlay)
    activity = live.request(relevance=50)
    live.request(app=OTHER, content={"state": {"step": "3/5"}})
    scenes.at_rest(world.overlay, "minimal", since)
    two = lambda image, box: box is not None and len(world.screen.shapes(image, box)) == 2  # noqa: E731
    _, minimal = world.screen.settled(two, name="minimal")
    assert_inside_the_capsule(world, morph(world, "expand", "expanded", activity), "expand-from-minimal")
    world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(minimal)[1], name="expanded")
    assert_inside_the_capsule(world, morph(world, "collapse", "minimal"), "collapse-to-minimal")
    world.screen.settled(two, name="minimal-again")


def test_the_capsule_check_sees_text_over_the_desktop(world):
    """The check itself: a frame with light pixels beside the capsule fails it; the same frame
    without them passes."""
    image = motion_frames.grab(world.session, top(world))
    width = image.width
    pixels = bytearray(image.pixels)

    def paint(x0, y0, x1, y1, colour):
        for y in range(y0, y1):
            for x in range(x0, x1):
                pixels[(y * width + x) * 3:(y * width + x) * 3 + 3] = bytes(colour)
    paint(100, 10, 200, 50, (0, 0, 0))
    paint(120, 20, 150, 30, (255, 255, 255))
    clean = desktop.Image(b"P6\n%d %d\n255\n" % (width, image.height) + bytes(pixels))
    assert motion_frames.strays(clean, desktop.BACKGROUND, dark=CAPSULE) == []
    paint(210, 20, 230, 30, (255, 255, 255))
    stray = desktop.Image(b"P6\n%d %d\n255\n" % (width, image.height) + bytes(pixels))
    found = motion_frames.strays(stray, desktop.BACKGROUND, dark=CAPSULE)
    assert found and all(205 <= x < 230 and 20 <= y < 30 for x, y in found), found[:5]
