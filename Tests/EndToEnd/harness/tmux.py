"""A program in a tmux pane, as a user's terminal shows it, for the terminal UI's tests.

Each pane has a tmux server of its own (`tmux -L NAME`), never the default one: tests run in
parallel, and a server shared with them is ended by whichever kills the last session, under the
feet of a test whose `new-session` or `capture-pane` had just reached it; its global environment
and options are also whoever started it first.

The terminal UI draws each frame top to bottom in one write, ending with the status line at the
bottom, but tmux reads a pane in pieces and answers a `capture-pane` between two of them: a
capture can hold a frame's top over the last frame's bottom. `frame()` is a capture taken with
the cursor where a whole frame leaves it (the status line's end, the last row's last column),
read in the same tmux command as the screen, so nothing of the pane is read between the two."""

import os
import subprocess
import uuid

import pytest

from harness.paths import LIVENESS
from harness.processes import wait_for

# What `frame()` asks tmux for after the screen: where the cursor is and how big the pane is.
_CURSOR = "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height}"


class Pane:
    """`command` run by a shell in a detached tmux session of `width` x `height` cells."""

    def __init__(self, command, width, height, config=None):
        self.server = "island-" + uuid.uuid4().hex[:12]
        self.tmux = ["tmux", "-L", self.server, "-f", config or "/dev/null"]
        self.tmux_command("new-session", "-d", "-s", "pane", "-x", str(width), "-y", str(height), command)
        # tmux leaves its socket behind when its server ends: removed in close().
        self.socket = self.tmux_command("display-message", "-p", "#{socket_path}").strip()

    def tmux_command(self, *args, check=True):
        """`tmux ARGS...` on this pane's server; its standard output."""
        done = subprocess.run([*self.tmux, *args], capture_output=True, text=True, timeout=LIVENESS)
        if check and done.returncode != 0:
            pytest.fail("tmux %s failed (%d): %s" % (" ".join(args), done.returncode, done.stderr))
        return done.stdout

    def capture(self):
        """The screen as it is now, whatever is being drawn on it."""
        return self.tmux_command("capture-pane", "-p", "-t", "pane")

    def frame(self):
        """The screen if the terminal UI's last frame is whole on it, else None."""
        out = self.tmux_command("capture-pane", "-p", "-t", "pane", ";", "display-message", "-p", "-t", "pane", _CURSOR)
        screen, _, cursor = out.rstrip("\n").rpartition("\n")
        x, y, width, height = (int(n) for n in cursor.split())
        # After the last cell of a row, tmux puts the cursor on that cell or just past it.
        if y == height - 1 and x >= width - 1:
            return screen + "\n"
        return None

    def until(self, predicate, message, whole_frames=True, timeout=LIVENESS):
        """The first screen (a whole frame of the terminal UI's, unless `whole_frames` is
        false: a shell's output after it) that satisfies `predicate`; fails the test with the
        last screen seen at the deadline."""
        last = [""]

        def satisfied():
            screen = self.frame() if whole_frames else self.capture()
            if screen is None:
                return None
            last[0] = screen
            return screen if predicate(screen) else None
        try:
            return wait_for(satisfied, timeout=timeout, message=message)
        except pytest.fail.Exception as failure:
            pytest.fail("%s; the last screen:\n%s" % (failure, last[0]))

    def keys(self, *names):
        self.tmux_command("send-keys", "-t", "pane", *names)

    def shell_pid(self):
        """The pane's shell, whose child the program is."""
        return int(self.tmux_command("list-panes", "-t", "pane", "-F", "#{pane_pid}").split()[0])

    def resize(self, width, height):
        self.tmux_command("resize-window", "-t", "pane", "-x", str(width), "-y", str(height))

    def gone(self):
        """Whether the session ended (its command exited)."""
        return subprocess.run([*self.tmux, "has-session", "-t", "pane"], capture_output=True, timeout=LIVENESS).returncode != 0

    def set_option(self, *args):
        self.tmux_command("set-option", *args)

    def close(self):
        subprocess.run([*self.tmux, "kill-server"], capture_output=True, timeout=LIVENESS)
        try:
            os.unlink(self.socket)
        except OSError:
            pass
