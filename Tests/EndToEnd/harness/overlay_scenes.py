"""What the overlay's end-to-end tests (Wayland and X11) share: the apps, layouts and stub opener
a session is prepared with, the activities a test produces (and ends), and screenshots that
wait for the island to settle, with the shapes read from them."""

import contextlib
import json
import os
import re
import time

from harness import desktop
from harness.paths import LIVENESS

APP = "org.island.test.Overlay"
OTHER = "org.island.test.Other"
URL = "https://example.org/order/A17"
CENTER_URL = "https://example.org/center"
KEYLINE = "#FF2020"

# Compact: a symbol and a short text; expanded: a wide centre text (tapped) and a button below.
LAYOUT = {
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.minutes}} min"},
    "minimal": {"type": "symbol", "name": "☕"},
    "expanded": {
        "leading": {"type": "symbol", "name": "☕", "priority": 1},
        "center": {"type": "text", "template": "{{state.title}}", "priority": 2, "url": CENTER_URL},
        "trailing": {"type": "text", "template": "{{state.minutes}} min", "priority": 1},
        "bottom": {"type": "button", "action": "pause", "label": "Pause the order", "priority": 0},
    },
    "keylineTint": KEYLINE,
    "chip": "Order",
    "url": URL,
}
OTHER_URL = "https://other.example/b"
OTHER_LAYOUT = {
    "compactLeading": {"type": "symbol", "name": "🚀"},
    "compactTrailing": {"type": "text", "template": "{{state.step}}"},
    "minimal": {"type": "symbol", "name": "🚀"},
    "url": OTHER_URL,
}
# APP's type "Tall": a legal layout whose expanded bottom is a 60-row vstack (it once made
# the expanded island as tall as the screen); its last row is a button.
TALL_URL = "https://example.org/tall"
TALL_LAYOUT = {
    "compactLeading": {"type": "text", "template": "Tall"},
    "expanded": {"bottom": {"type": "vstack", "priority": 0, "children": [
        {"type": "text", "template": "Row %d of sixty" % row} for row in range(59)
    ] + [{"type": "button", "action": "last-row", "label": "Last row"}]}},
    "url": TALL_URL,
}

# A test starts an activity or two, more than the default 10 a minute per app in all.
BUILT_IN_TIMES_CONFIG = "[Limits]\nStartBudget=1000\n"
# An expansion and an alert last an hour, not 8 s and 5 s: a test photographs the expanded
# island or an alert until it has it twice alike, which a busy machine may take longer than
# seconds to do, and must not find it gone. A test that needs the island at rest again
# collapses it (`collapse`), as the user would; how long they last by themselves is the
# daemon's rule, tested on an injected clock (IslandArbiterTests).
DAEMON_CONFIG = BUILT_IN_TIMES_CONFIG + "[Daemon]\nExpandedSec=1h\nAlertSec=1h\n"

# The stub opener the overlay is configured with: it records each URL it is asked to open, and
# how many sockets it was started holding (none: the overlay's connection to islandd, which
# SwiftNIO opens without close-on-exec, must not reach a program that may outlive it).
OPENER = """#!/bin/sh
printf '%s\\n' "$*" >> "$HOME/opened"
ls -l /proc/$$/fd | grep -c 'socket:' >> "$HOME/opener-sockets"
exit 0
"""


def state(title="Order received", minutes=12):
    return {"state": {"title": title, "minutes": minutes}}


def prepare(session):
    """Manifests, layouts and the stub opener, before islandd starts."""
    session.write_manifest(APP, name="Overlay test")
    session.write_manifest(OTHER, name="Other app")
    for app, layout in ((APP, LAYOUT), (OTHER, OTHER_LAYOUT)):
        session.write(os.path.join(session.data, "island", "layouts", app, "Order.json"), json.dumps(layout))
    session.write(os.path.join(session.data, "island", "layouts", APP, "Tall.json"), json.dumps(TALL_LAYOUT))
    opener = os.path.join(session.home, "opener")
    session.write(opener, OPENER, mode=0o755)
    return opener


def overlay_config(opener):
    # The pointer is parked away from the island between steps: the overlay must not collapse
    # the island because of that while a slow machine takes its time (CollapseAfter=0: never).
    return "[Overlay]\nOpener=%s\nCollapseAfter=0\n" % opener


class Producer:
    """Activities started for a test, ended (and dismissed) when it is done."""

    def __init__(self, session):
        self.session = session
        self.started = []

    def request(self, app=APP, content=None, relevance=None, type="Order", attributes=None):
        content = dict(content or state())
        if relevance is not None:
            content["relevanceScore"] = relevance
        with self.session.varlink("org.island.Producer") as producer:
            activity = producer.Request(app=app, type=type, attributes=attributes or {"order": "A17"},
                                        content=content)["activity"]
        self.started.append((app, activity["id"]))
        return activity["id"]

    def update(self, activity, content, app=APP, alert=None):
        with self.session.varlink("org.island.Producer") as producer:
            return producer.Update(app=app, id=activity, content=content, alert=alert)

    def collapse(self, activity):
        """The user collapses the island showing `activity` expanded (an alert, or opened by a
        click), as the overlay asks on Escape: through the presenter role, the user's."""
        self.session.call_as_user("org.island.Presenter.Interact", {"action": "collapse", "id": activity})

    def end_all(self):
        # A producer connection acts for one app.
        for app, activity in self.started:
            with self.session.varlink("org.island.Producer") as producer:
                producer.End(app=app, id=activity, dismissalPolicy={"kind": "immediate"})
        self.started = []


class Screen:
    """Screenshots of a display (Sway or Xvfb), the named ones saved as PNGs to
    $ISLAND_DESKTOP_SHOTS when set, so a person can look at what the tests saw (a failed test
    keeps its last few anyway: harness/artifacts.py)."""

    def __init__(self, display, prefix, capsule=None):
        """`capsule(image)`: where the island is in a screenshot, when more than the island may
        differ from the desktop's colour (a window or a bar beside it)."""
        self.display = display
        self.prefix = prefix
        self.shots = os.environ.get("ISLAND_DESKTOP_SHOTS")
        self.count = 0
        self.find = capsule

    def grab(self, name=None):
        image = self.display.screenshot()
        if self.shots and name:
            os.makedirs(self.shots, exist_ok=True)
            self.count += 1
            image.save_png(os.path.join(self.shots, "%s-%02d-%s.png" % (self.prefix, self.count, name)))
        return image

    def top(self, image):
        """The region where the island lives: the upper half of the screen."""
        return (0, 0, image.width, image.height // 2)

    def capsule(self, image):
        """The bounding box of everything drawn over the desktop in the top half (the island, its
        keyline, a detached bubble), or what the screen was made to look for instead."""
        if self.find:
            return self.find(image)
        return image.box_not(self.display.background, region=self.top(image))

    def shapes(self, image, box, tolerance=12):
        """The column runs of separate shapes over the desktop within `box`."""
        background = self.display.background
        low = tuple(max(0, c - tolerance) for c in background)
        high = tuple(min(255, c + tolerance) for c in background)
        return image.column_runs(low, high, box, invert=True)

    # Shots looked at before Screen.settled gives up, however long they took: on a busy machine
    # a screenshot of a large output and the check on it can take seconds each, and a verdict
    # from a bound of time alone would then say how busy the machine was.
    FEWEST_SHOTS = 5

    def settled(self, check, timeout=LIVENESS, name=None, what="the island"):
        """Screenshots until `check(image, box)` holds with the same capsule box on every shot
        for at least 0.3 s (the morph has ended: the spring's overshoot turns at its peak for
        about 0.1 s, and two shots there alone would look still); returns (image, box). Gives
        up after `timeout` and at least FEWEST_SHOTS shots."""
        deadline = time.monotonic() + timeout
        previous = "unsettled"
        since = None
        last = None
        shots = 0
        while time.monotonic() < deadline or shots < self.FEWEST_SHOTS:
            shots += 1
            taken = time.monotonic()
            image = self.display.screenshot()
            box = self.capsule(image)
            ok = check(image, box)
            if not ok or previous != box:
                since = taken
            elif taken - since >= 0.3:
                if self.shots and name:
                    self.grab(name)
                return image, box
            previous = box if ok else "unsettled"
            last = (box, ok)
            time.sleep(0.1)
        if self.shots:
            self.grab("timeout-" + (name or "settle"))
        raise AssertionError("%s did not settle within %ss and %d shots (last capsule box %s, check %s)"
                             % (what, timeout, shots, last[0] if last else None, last[1] if last else None))


def log_lines(overlay, since=0):
    """The overlay's stderr lines from line `since` on."""
    return overlay.log().splitlines()[since:]


def actionable(overlay, target, since=0):
    """Waits until the overlay, run with ISLAND_OVERLAY_FRAME_LOG=1, says `target` ("tap ID",
    "button ID ACTION", "dismiss ID") may be clicked, in a line after line `since`: a target acts
    only once it has stood still on screen for the settle time, and the overlay says when, so a test
    clicks then rather than after a guessed delay."""

    pattern = re.compile(r"^island-overlay: actionable: (.*; )?%s( [^;]*)?(;|$)" % re.escape(target))
    desktop.wait_until(lambda: any(pattern.search(line) for line in log_lines(overlay, since)), LIVENESS,
                       "the overlay saying %s may be clicked" % target)


def mark(overlay):
    """Where the overlay's log is now: the `since` of a wait for what a step does next."""
    return len(log_lines(overlay))


FRAME = re.compile(r"^island-overlay: frame \d+ us (animating|settled) (\w+)$")


def at_rest(overlay, form, since=0):
    """Waits until the overlay, run with ISLAND_OVERLAY_FRAME_LOG=1, has painted `form`
    ("compact", "minimal", "expanded", "alert", "hidden") at rest: the last frame it logged after
    line `since` says "settled FORM" (a frame painted, and another asked, on every step of a
    morph; the spring's end is painted last). A screenshot's stillness alone cannot say so: an
    overlay starved of CPU mid-morph leaves a frame of the morph on screen, unchanged for as
    long as it waits. Call it before the screenshots of a scene, with `since` taken before the
    step that made it (`mark`)."""

    def rested():
        frames = [FRAME.match(line) for line in log_lines(overlay, since)]
        frames = [frame for frame in frames if frame]
        return frames and frames[-1].groups() == ("settled", form)
    desktop.wait_until(rested, LIVENESS, "the overlay painting the %s island at rest" % form)


def redrawn(screen, producer, activity, image, box, minutes=7):
    """A marker through the overlay's own loop: an update of `activity` (its minutes) reaches
    the screen, inside `box` of `image`, which showed it before. Whatever the overlay had due
    before the update (a timer, a pointer event) has run by then. The image after it."""
    producer.update(activity, state(minutes=minutes))

    def changed():
        later = screen.grab()
        return later if later.crop(box).pixels != image.crop(box).pixels else None
    return desktop.wait_until(changed, LIVENESS, "the update drawn")


def size(box):
    return (box[2] - box[0], box[3] - box[1]) if box else (0, 0)


def centre(box):
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


class SwayWorld:
    """The overlay in headless sway with its own daemon, a virtual pointer and the stub opener:
    what a module of Wayland tests shares."""

    def __init__(self, session, sway, overlay, opener, name):
        self.session, self.sway, self.overlay, self.opener = session, sway, overlay, opener
        self.screen = Screen(sway, name)

    def opened(self):
        """The URLs the opener was asked to open, in order."""
        try:
            with open(os.path.join(self.session.home, "opened")) as f:
                return f.read().split()
        except OSError:
            return []

    def opener_sockets(self):
        """How many sockets the opener held as it started, each time it ran, in order."""
        try:
            with open(os.path.join(self.session.home, "opener-sockets")) as f:
                return [int(n) for n in f.read().split()]
        except OSError:
            return []


@contextlib.contextmanager
def sway_world(name, daemon_config=DAEMON_CONFIG, **overlay_env):
    """A SwayWorld whose overlay logs its frames (so tests see when what is on screen may be
    clicked, `actionable`), with `overlay_env` added to its environment; its logs are printed
    if setting it up fails."""
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        sway.start_pointer()
        opener = prepare(session)
        session.start_islandd(daemon_config)
        overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1", **overlay_env),
                                  config=overlay_config(opener))
        yield SwayWorld(session, sway, overlay, opener, name)
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


@contextlib.contextmanager
def producing(world):
    """A Producer for one test; afterwards its activities end and the test after it starts
    from an empty screen, with the overlay still running."""
    producer = Producer(world.session)
    yield producer
    producer.end_all()
    world.sway.park()
    world.screen.settled(lambda image, box: box is None, what="the island hiding")
    world.overlay.alive()
