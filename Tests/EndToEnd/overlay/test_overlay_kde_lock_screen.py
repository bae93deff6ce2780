"""island-overlay over KDE's lock screen: KWin 5.27 nested in headless sway (harness/kwin.py),
locked through its own org.freedesktop.ScreenSaver (as Plasma's Lock action does), followed by
the real island-bridge into the user's islandd. KWin offers kde_lockscreen_overlay_v1 only to a
binary an installed application entry names with X-KDE-Wayland-Interfaces: the package's own
entry (packaging/applications/org.island.overlay.desktop) is installed for the test user with
its Exec= naming the overlay under test, as the package's names /usr/bin's.

KWin's greeter (kscreenlocker_greet) does not start here: it needs Qt's Wayland platform
plugin, which is not installed; KWin then keeps the session locked behind its own black
"The screen locker is broken" screen. That is still KWin's locked state, which hides every
surface but the locker's and the ones it let over it: what is tested here is the overlay on it.
KWin says it is locked (ScreenSaver's GetActive) before that screen is up: its locker tries the
greeter four times, then maps the screen, a window of KWin's own, seconds later on a busy
machine. KWin stacks it with the layer-shell surfaces of the overlay layer, where the overlay
asks to be while locked, in the order they map (one layer keeps its windows' order): a list
mapped before it is drawn under it. So islandd is told the lock only once that screen is up.

Three apps, one of each lock-screen level: the list over the locker holds the public and the
private one's cards, never the secret one's; nothing shows over the locker before islandd has
redacted the list; islandd unlocked (`island admin lock off`) while KWin is still locked, the
island leaves the locker's screen at once.

Set ISLAND_DESKTOP_SHOTS=DIR to keep every screenshot, and ISLAND_KDE_GALLERY=DIR (the guides'
is docs/gallery) to save the top of the locked screen as kde-lock-screen.png."""

import json
import os
import re

import pytest

from harness import desktop, kwin
from harness import overlay_scenes as scenes
from harness.paths import BIN_DIR, LIVENESS, REPO

REASON = kwin.why_not() or desktop.why_not("gdbus")
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

GALLERY = os.environ.get("ISLAND_KDE_GALLERY")
PUBLIC, PRIVATE, SECRET = "org.island.test.Public", "org.island.test.Private", "org.island.test.Secret"
NAMES = {PUBLIC: "Coffee shop", PRIVATE: "Bank app", SECRET: "Diary"}
WORDS = {PUBLIC: "Table seven ready", PRIVATE: "Balance 1200", SECRET: "Dear diary"}
LEVELS = {PUBLIC: "public", PRIVATE: "private", SECRET: "secret"}
BLACK = (0, 0, 0)
OVERLAY_ENTRY = "org.island.overlay.desktop"


def layout(level):
    return {
        "lockScreenVisibility": level,
        "compactLeading": {"type": "symbol", "name": "☕"},
        "compactTrailing": {"type": "text", "template": "{{state.word}}"},
        "lockScreen": {"type": "text", "template": "{{state.word}}"},
    }


def top_band(image):
    """Above KWin's broken-locker message, which it centres on the screen."""
    return (0, 0, image.width, image.height // 3)


def over_locker(image):
    """What is drawn over the locked screen's black in the top band (None: nothing)."""
    return image.box_not(BLACK, region=top_band(image), tolerance=8)


def locker_message(image):
    """KWin's broken-locker message, in the middle band of the screen (None: not drawn yet)."""
    return image.box_not(BLACK, region=(0, image.height // 3, image.width, 2 * image.height // 3), tolerance=8)


class World:
    def __init__(self, session, kde, overlay):
        self.session, self.kwin, self.overlay = session, kde, overlay

    def log(self, since=0):
        return scenes.log_lines(self.overlay, since)

    def shot(self, name):
        image = self.kwin.screenshot()
        shots = os.environ.get("ISLAND_DESKTOP_SHOTS")
        if shots:
            os.makedirs(shots, exist_ok=True)
            image.save_png(os.path.join(shots, "kde-lock-%s.png" % name))
        return image

    def settled(self, check, what):
        """Screenshots until `check(box)` holds for the same box on two shots in a row."""
        shots = []

        def still():
            image = self.kwin.screenshot()
            shots.append((image, over_locker(image)))
            return len(shots) >= 2 and check(shots[-1][1]) and shots[-1][1] == shots[-2][1]
        desktop.wait_until(still, LIVENESS, what, interval=0.3)
        return shots[-1]


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        for app, level in LEVELS.items():
            session.write_manifest(app, name=NAMES[app])
            session.write(os.path.join(session.data, "island", "layouts", app, "Word.json"), json.dumps(layout(level)))
        session.start_islandd(scenes.DAEMON_CONFIG)
        # The package's entry, naming the binary under test; before KWin starts, which reads
        # the applications once it is first asked.
        with open(os.path.join(REPO, "packaging", "applications", OVERLAY_ENTRY)) as f:
            entry = f.read()
        assert "Exec=/usr/bin/island-overlay\n" in entry
        session.write(os.path.join(session.data, "applications", OVERLAY_ENTRY),
                      entry.replace("Exec=/usr/bin/island-overlay\n", "Exec=%s\n" % os.path.realpath(desktop.overlay_binary())))
        sway = desktop.Sway(session)
        sway.start_pointer()
        kde = kwin.KWin(session, sway)
        overlay = desktop.Overlay(session, dict(kde.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\nCollapseAfter=0\n")
        desktop.wait_until(lambda: overlay.alive() and "backend wayland" in overlay.log(), LIVENESS, "the overlay started")
        yield World(session, kde, overlay)
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


def start(world, app):
    return world.session.island("start", "Word", "--app", app, "--attributes", "{}",
                                "--state", json.dumps({"word": WORDS[app]})).strip()


def listed(world, since):
    lines = [line for line in world.log(since) if line.startswith("island-overlay: lock screen:")]
    return set(re.findall(r"[0-9a-f]{8}-[0-9a-f-]+", lines[-1])) if lines else None


def screensaver(world, method):
    return world.session.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.ScreenSaver", "--object-path",
                              "/ScreenSaver", "--method", "org.freedesktop.ScreenSaver." + method], timeout=30).stdout.decode()


def test_kwin_grants_the_overlay_its_lock_screen_and_shows_the_list_by_level(world):
    log = "\n".join(world.log())
    assert "kde_lockscreen_overlay_v1" in log and "not offered" not in log, log
    ids = {app: start(world, app) for app in LEVELS}
    image = world.kwin.screenshot()
    desktop.wait_until(lambda: world.kwin.screenshot().box_not(world.kwin.background, region=top_band(image)),
                       LIVENESS, "the island on KWin's desktop")

    # KWin locks; islandd does not know yet (no bridge): KWin hides the island with the rest.
    screensaver(world, "Lock")
    desktop.wait_until(lambda: "true" in screensaver(world, "GetActive"), LIVENESS, "KWin locked")
    # The locker's own screen is up before the overlay asks onto it (the module's docstring).
    desktop.wait_until(lambda: locker_message(world.kwin.screenshot()), LIVENESS, "KWin's broken-locker screen")
    image, box = world.settled(lambda box: box is None, "the locked screen with nothing over it")
    world.shot("locked-before-islandd")

    # island-bridge follows KWin's org.freedesktop.ScreenSaver and tells islandd.
    mark = len(world.log())
    bridge = world.session.spawn("island-bridge", [os.path.join(BIN_DIR, "island-bridge"), "--log-level", "debug"])
    desktop.wait_until(lambda: world.session.alive(bridge)
                       and world.session.island("admin", "lock", "status").startswith("Session lock: on"),
                       LIVENESS, "islandd told the session is locked")
    assert "(freedesktop)" in world.session.island("admin", "lock", "status")
    desktop.wait_until(lambda: listed(world, mark) == {ids[PUBLIC], ids[PRIVATE]}, LIVENESS,
                       "the overlay's list holding the public and the private activity, not the secret one")
    assert any("asks onto KWin's lock screen" in line for line in world.log(mark)), world.log(mark)
    image, box = world.settled(lambda box: box is not None and scenes.size(box)[1] >= 80, "the list over KWin's locker")
    world.shot("locked")
    assert abs(scenes.centre(box)[0] - image.width / 2) <= 2, box
    if GALLERY:
        os.makedirs(GALLERY, exist_ok=True)
        image.crop((image.width // 4, 0, 3 * image.width // 4, min(image.height, box[3] + 24))).save_png(
            os.path.join(GALLERY, "kde-lock-screen.png"))
    # Nothing on it acts: no target for an app is said to be clickable.
    assert not [line for line in world.log(mark) if re.search(r"actionable: .*(dismiss|tap|button) ", line)]

    # islandd unlocked while KWin is still locked: the island leaves the locker's screen.
    mark = len(world.log())
    world.session.island("admin", "lock", "off")
    world.settled(lambda box: box is None, "the island gone from KWin's locked screen")
    assert any("leaves the lock screen" in line for line in world.log(mark)), world.log(mark)
    world.shot("unlocked-by-islandd")
    world.overlay.alive()
