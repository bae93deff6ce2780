"""harness/tmux.py's `Pane.frame()`: a capture of a frame half drawn is no frame. A program in
the pane draws frames as the terminal UI does (each row addressed, the status row last), and
stops half-way through one, as tmux's reading of a pane in pieces can stop a capture there."""

import shutil
import sys

import pytest

from harness.tmux import Pane

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WIDTH, HEIGHT = 40, 6

# Draws the frame "old", then, after each line on stdin (not echoed), the top half of the frame
# "new" and then its bottom half.
DRAWER = r"""
import sys, termios
width, height = %d, %d
attributes = termios.tcgetattr(0)
attributes[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, attributes)

def rows(tag, first, last):
    out = ""
    for row in range(first, last):
        text = "%%s status" %% tag if row == height - 1 else "%%s row %%d" %% (tag, row)
        out += "\x1b[%%d;1H" %% (row + 1) + text.ljust(width) + "\x1b[K"
    sys.stdout.write(out)
    sys.stdout.flush()

sys.stdout.write("\x1b[2J")
rows("old", 0, height)
sys.stdin.readline()
rows("new", 0, height // 2)
sys.stdin.readline()
rows("new", height // 2, height)
sys.stdin.readline()
""" % (WIDTH, HEIGHT)


def test_a_frame_half_drawn_is_not_taken_for_one():
    pane = Pane("%s -c '%s'" % (sys.executable, DRAWER.replace("'", "'\\''")), WIDTH, HEIGHT)
    try:
        old = pane.until(lambda s: "old status" in s, "the first frame")
        assert "new" not in old, old
        pane.keys("Enter")
        # Half of the next frame is on screen (its last row drawn so far is there, so the rest of
        # what was written is too): a capture mixes the two frames, and is no frame.
        half = pane.until(lambda s: "new row %d" % (HEIGHT // 2 - 1) in s, "half of the second frame", whole_frames=False)
        assert "new row 0" in half and "old status" in half, half
        assert pane.frame() is None, pane.capture()
        pane.keys("Enter")
        new = pane.until(lambda s: "new status" in s, "the second frame")
        assert "old" not in new, new
        assert [line.rstrip() for line in new.splitlines()] == \
            ["new row %d" % row for row in range(HEIGHT - 1)] + ["new status"], new
    finally:
        pane.close()
