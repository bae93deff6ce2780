"""The island in motion on a real compositor: bursts of `grim` frames of the top of a headless
sway's output while the overlay morphs, each with the time it was taken, and what lies outside the
capsule in each frame.

A burst takes frames as fast as grim delivers them (one every 15-40 ms here) in a thread, from
just before a change is asked for until the motion is over; a busy machine gives fewer frames,
never different ones. Used by Tests/EndToEnd/overlay/test_overlay_motion.py and by
scripts/frame-strips.sh.

Only the standard library (and desktop.Image for the pixels).
"""

import threading
import time

from harness.desktop import DARK, Image
from harness.paths import LIVENESS


def grab(session, region):
    """One grim frame of `region` (x0, y0, x1, y1) of the output, as an Image."""
    x0, y0, x1, y1 = region
    geometry = "%d,%d %dx%d" % (x0, y0, x1 - x0, y1 - y0)
    return Image(session.run(["grim", "-t", "ppm", "-g", geometry, "-"], timeout=LIVENESS).stdout)


class Burst:
    """Frames of `region` taken one after another while the `with` block runs and for `after`
    seconds once it has ended: `frames` is a list of (seconds, Image), the seconds on the
    monotonic clock halfway through each capture. `mark()` notes when the change was asked
    for, in the same clock."""

    def __init__(self, session, region, after=0.9, limit=200):
        self.session, self.region, self.after, self.limit = session, region, after, limit
        self.frames = []
        self.asked = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._error = None

    def _run(self):
        try:
            while not self._stop.is_set() and len(self.frames) < self.limit:
                start = time.monotonic()
                image = grab(self.session, self.region)
                self.frames.append(((start + time.monotonic()) / 2, image))
        except Exception as error:  # reported by __exit__, in the test's thread
            self._error = error

    def mark(self):
        self.asked = time.monotonic()

    def take_one_more(self, timeout=30):
        """Waits until the burst holds a frame whose capture began after this call: the state
        the screen is in now, whatever the machine's speed (the frame being taken meanwhile began
        before, and may show an earlier one). For a burst that ends once the overlay says the
        motion is over, rather than a time after the change."""
        wanted = len(self.frames) + 2
        deadline = time.monotonic() + timeout
        while len(self.frames) < min(wanted, self.limit) and self._thread.is_alive():
            if time.monotonic() >= deadline:
                raise TimeoutError("no frame taken within %ss" % timeout)
            time.sleep(0.005)

    def __enter__(self):
        self._thread.start()
        # One frame of the state before the change, whatever the machine's speed.
        deadline = time.monotonic() + 20
        while not self.frames and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        return self

    def __exit__(self, kind, value, traceback):
        time.sleep(self.after if kind is None else 0)
        self._stop.set()
        self._thread.join(30)
        if self._error and kind is None:
            raise self._error
        return False

    def changed(self, tolerance=0):
        """The frames from the first that differs from the first frame of the burst on: the
        motion as the eye sees it start, with the seconds since that frame."""
        if not self.frames:
            return []
        first = self.frames[0][1].pixels
        for index, (_, image) in enumerate(self.frames):
            if image.pixels != first:
                start = self.frames[index][0]
                return [(t - start, image) for t, image in self.frames[index:]]
        return []


def strays(image, background, dark=(DARK,), margin=3, tolerance=12):
    """The pixels of `image` that are not the background (within `tolerance` per channel) and
    lie outside the capsule: outside the extent of the capsule's own pixels (those within any
    of the (low, high) colour ranges of `dark`) on their row and on their column, each widened
    by `margin` px and taken over the `margin` rows or columns around, for antialiased edges.
    A list of (x, y)."""
    width, height = image.width, image.height
    low = tuple(max(0, c - tolerance) for c in background)
    high = tuple(min(255, c + tolerance) for c in background)
    near_background = image.mask(low, high)
    masks = [image.mask(*colours) for colours in dark]
    is_dark = masks[0]
    for other in masks[1:]:
        is_dark = bytes(a | b for a, b in zip(is_dark, other))
    rows = [None] * height
    columns = [None] * width
    for y in range(height):
        row = is_dark[y * width:(y + 1) * width]
        first = row.find(1)
        if first >= 0:
            last = row.rfind(1)
            rows[y] = (first, last)
            for x in range(first, last + 1):
                if row[x]:
                    top, bottom = columns[x] or (y, y)
                    columns[x] = (min(top, y), max(bottom, y))

    def widened(extents, count):
        result = []
        for i in range(count):
            near = [e for e in extents[max(0, i - margin):i + margin + 1] if e]
            result.append((min(e[0] for e in near) - margin, max(e[1] for e in near) + margin) if near else None)
        return result
    row_extent = widened(rows, height)
    column_extent = widened(columns, width)
    found = []
    for y in range(height):
        line = near_background[y * width:(y + 1) * width]
        x = line.find(0)
        while x >= 0:
            across, down = row_extent[y], column_extent[x]
            if not (across and across[0] <= x <= across[1] and down and down[0] <= y <= down[1]):
                found.append((x, y))
            x = line.find(0, x + 1)
    return found
