"""The island on GNOME's lock screen, in a real GNOME Shell 43 (harness/gnome.py, nested, with
GDM's Version on its private system bus so that it builds its screen shield), locked through
org.gnome.ScreenSaver as Super+L does. The extension stays enabled in the `unlock-dialog`
session mode, tells island-overlay it is locked, and shows the overlay's window under the lock
screen's clock; islandd is told the session is locked as island-bridge tells it (`island admin
lock on`; the bridge's following of the Shell's signals is tested in bridge/test_bridge_lock.py).

Three apps, each of one lock-screen level (their layouts' `lockScreenVisibility`): the public
one's card shows its content, the private one only its app's name and icon, the secret one
nothing; the overlay shows nothing on the lock screen before islandd has redacted it; no key
reaches the island while locked, not even when a click had given it the keyboard; unlocked, the
island is back under the top bar.

Set ISLAND_DESKTOP_SHOTS=DIR to keep every screenshot, and ISLAND_GNOME_GALLERY=DIR (the user
guide's is docs/gallery) to save the lock screen as gnome-lock-screen.png."""

import json
import os
import re

import pytest

from harness import desktop, gnome
from harness import overlay_scenes as scenes
from harness.overlay_scenes import centre, size
from harness.paths import LIVENESS

REASON = gnome.why_not()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

GALLERY = os.environ.get("ISLAND_GNOME_GALLERY")
PUBLIC, PRIVATE, SECRET = "org.island.test.Public", "org.island.test.Private", "org.island.test.Secret"
NAMES = {PUBLIC: "Coffee shop", PRIVATE: "Bank app", SECRET: "Diary"}
WORDS = {PUBLIC: "Table seven ready", PRIVATE: "Balance 1200", SECRET: "Dear diary"}
LEVELS = {PUBLIC: "public", PRIVATE: "private", SECRET: "secret"}
# The list's panel and cards: near black, unlike the lock screen's blurred blue and its white clock.
DARK = ((0, 0, 0), (48, 48, 56))


def layout(level):
    return {
        "lockScreenVisibility": level,
        "compactLeading": {"type": "symbol", "name": "☕"},
        "compactTrailing": {"type": "text", "template": "{{state.word}}"},
        "lockScreen": {"type": "text", "template": "{{state.word}}"},
    }


class Screen(scenes.Screen):
    """Screenshots of the Shell; the island is looked for under the top bar, in the upper half."""

    def __init__(self, shell, panel):
        super().__init__(shell, "gnome-lock")
        self.panel = panel

    def top(self, image):
        return (0, self.panel, image.width, image.height // 2)


class World:
    def __init__(self, session, shell):
        self.session, self.shell = session, shell
        self.panel = gnome.panel_bottom(shell.screenshot())
        self.screen = Screen(shell, self.panel)

    def log(self, since=0):
        return [line for line in self.shell.log().splitlines() if line.startswith("island-overlay: ")][since:]


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        opener = scenes.prepare(session)
        for app, level in LEVELS.items():
            session.write_manifest(app, name=NAMES[app])
            session.write(os.path.join(session.data, "island", "layouts", app, "Word.json"), json.dumps(layout(level)))
        session.write(os.path.join(session.config, "island", "overlay.conf"), scenes.overlay_config(opener))
        session.start_islandd(scenes.DAEMON_CONFIG)
        # A monitor as tall as a laptop's: room under the lock screen's clock for two cards.
        shell = gnome.GnomeShell(session, width=1280, height=1024, env={"ISLAND_OVERLAY_FRAME_LOG": "1"}, lockable=True)
        desktop.wait_until(shell.overlays, LIVENESS, "island-overlay started by the extension")
        shell.park()
        yield World(session, shell)
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


def start(world, app):
    return world.session.island("start", "Word", "--app", app, "--attributes", "{}",
                                "--state", json.dumps({"word": WORDS[app]})).strip()


def list_box(image):
    """The lock-screen list's dark panel, or None (the pointer, dark too, is not one)."""
    box = image.box(*DARK, region=(0, 0, image.width, image.height))
    return box if box and size(box)[0] >= 100 and size(box)[1] >= 40 else None


def clock_of(image, bottom=None):
    """The lock screen's clock: its white digits in the middle of the screen (above `bottom`),
    or None."""
    return image.box((230, 230, 230), (255, 255, 255),
                     region=(image.width // 3, image.height // 4, 2 * image.width // 3, bottom or 3 * image.height // 4))


def woken(world):
    """A shot of the lock screen with its clock: the shield fades the screen to black as it
    locks, and a move of the pointer brings the clock back."""
    shot = []

    def shown():
        world.session.run(["xdotool", "mousemove", "640", "700"])
        world.shell.park()
        shot[:] = [world.shell.screenshot()]
        return clock_of(shot[0]) is not None
    desktop.wait_until(shown, LIVENESS, "the lock screen's clock", interval=0.5)
    return shot[0]


def settled_list(world):
    """A shot of the lock screen and its list's box, once the list stands still: the same box
    on two shots in a row (the list opens with a spring, which overshoots)."""
    shots = []

    def still():
        image = woken(world)
        shots.append((image, list_box(image)))
        return len(shots) >= 2 and shots[-1][1] is not None and shots[-1][1] == shots[-2][1]
    desktop.wait_until(still, LIVENESS, "the list standing still on the lock screen", interval=0.3)
    return shots[-1]


def listed(world, since):
    """The ids the overlay's last "lock screen:" line after line `since` names (the frame log:
    its list's cards on the lock screen)."""
    lines = [line for line in world.log(since) if line.startswith("island-overlay: lock screen:")]
    return set(re.findall(r"[0-9a-f]{8}-[0-9a-f-]+", lines[-1])) if lines else None


def lock(world):
    """Locks the Shell as Super+L does, and islandd as island-bridge would; the overlay's log
    line where it stood before."""
    mark = len(world.log())
    world.shell.lock()
    desktop.wait_until(world.shell.locked, LIVENESS, "the Shell's screen shield up")
    desktop.wait_until(lambda: any("locked (the lock-screen list)" in line for line in world.log(mark)), LIVENESS,
                       "the overlay told it is locked")
    return mark


def test_locked_the_list_shows_under_the_clock_by_level_and_unlocked_the_island_is_back(world):
    ids = {app: start(world, app) for app in LEVELS}
    image, compact = world.screen.settled(gnome.hangs_under(world.panel + gnome.GAP, centred=False), name="unlocked")

    mark = lock(world)
    # Told by the Shell before islandd is: nothing is shown until islandd has redacted the list.
    image = woken(world)
    assert list_box(image) is None, "the list shown on the lock screen before islandd redacted it"

    world.session.island("admin", "lock", "on")
    desktop.wait_until(lambda: listed(world, mark) == {ids[PUBLIC], ids[PRIVATE]}, LIVENESS,
                       "the overlay's list holding the public and the private activity, not the secret one")
    settled_list(world)
    image = world.screen.grab("locked")
    box = list_box(image)
    # Under the clock, centred: the clock's white digits end above the list's top.
    clock = clock_of(image, bottom=box[1])
    assert clock is not None and clock[3] < box[1], ("the list is not under the clock", clock, box)
    assert abs(centre(box)[0] - image.width / 2) <= 2, box
    # Two cards, each under its app's heading: the public one's and the private one's.
    assert size(box)[1] > 2 * size(compact)[1], box
    # Nothing on it acts: the overlay says no target may be clicked.
    since_list = world.log(mark)
    since_list = since_list[next(i for i, line in enumerate(since_list) if line.startswith("island-overlay: lock screen:")):]
    assert not [line for line in since_list if re.search(r"actionable: .*(dismiss|tap|button) ", line)], since_list
    if GALLERY:
        os.makedirs(GALLERY, exist_ok=True)
        # The middle of the screen: the clock, the date and the list under them.
        image.crop((image.width // 4, clock[1] - 40, 3 * image.width // 4, box[3] + 40)).save_png(
            os.path.join(GALLERY, "gnome-lock-screen.png"))

    world.session.island("admin", "lock", "off")
    world.shell.unlock()
    desktop.wait_until(lambda: not world.shell.locked(), LIVENESS, "the Shell's screen shield down")
    image, box = world.screen.settled(lambda image, box: box == compact, name="unlocked-again",
                                      what="the compact island back under the bar")


def test_an_alert_while_locked_lights_the_dark_lock_screen(world):
    """The shield goes dark as the Shell locks. An alert islandd sends while locked reaches the
    overlay, which tells the extension (`{"wake": true}` on its standard output), and the Shell
    lights its lock screen as it does for its own notifications: the clock is back, no pointer
    moved. (That no other update wakes it, nor a secret activity's alert, is the overlay's rule:
    overlay/test_overlay_lock_wake.py counts its wakes.)"""
    public = start(world, PUBLIC)
    world.screen.settled(gnome.hangs_under(world.panel + gnome.GAP, centred=False), name="before-wake")
    mark = lock(world)
    world.session.island("admin", "lock", "on")
    desktop.wait_until(lambda: public in (listed(world, mark) or ()), LIVENESS, "the list on the lock screen")
    desktop.wait_until(lambda: clock_of(world.shell.screenshot()) is None, LIVENESS, "the lock screen dark",
                       interval=0.5)

    world.session.island("update", public, "--app", PUBLIC, "--state", json.dumps({"word": "Table seven now"}),
                         "--alert-title", "Ready", "--alert-body", "now")
    desktop.wait_until(lambda: clock_of(world.shell.screenshot()) is not None, LIVENESS,
                       "the lock screen lit by the alert", interval=0.2)
    world.screen.grab("woken-by-alert")

    world.session.island("admin", "lock", "off")
    world.shell.unlock()
    desktop.wait_until(lambda: not world.shell.locked(), LIVENESS, "the Shell's screen shield down")
    world.screen.settled(gnome.hangs_under(world.panel + gnome.GAP, centred=False), name="unlocked-after-wake")


def test_no_key_reaches_the_island_while_locked(world):
    """Even when a click gave the island the keyboard before the lock (the last test: without
    GDM, the password prompt the keys bring up never lets the shield go)."""
    start(world, PUBLIC)
    _, compact = world.screen.settled(gnome.hangs_under(world.panel + gnome.GAP, centred=False), name="before-keys")
    world.shell.click(*centre(compact))
    world.shell.park()
    world.screen.settled(lambda image, box: box is not None and size(box)[1] > 2 * size(compact)[1], name="expanded")
    lock(world)
    world.session.island("admin", "lock", "on")
    image, box = settled_list(world)
    clock = clock_of(image, bottom=box[1])

    keys_from = len(world.log())
    world.session.run(["xdotool", "key", "Escape", "x"])
    world.shell.park()
    # Run with the frame log, the overlay logs any key it gets while locked ("locked: a key
    # ignored"); xdotool's keys have been handled by the Shell once the unlock dialog's password
    # prompt (its white avatar) is in place of the clock.
    desktop.wait_until(lambda: clock_of(world.shell.screenshot(), bottom=box[1]) != clock,
                       LIVENESS, "the password prompt in place of the clock", interval=0.5)
    world.screen.grab("keys-pressed")
    assert not [line for line in world.log(keys_from) if "key ignored" in line], world.log(keys_from)
    assert list_box(world.shell.screenshot()) == box, "the list changed with the keys"
