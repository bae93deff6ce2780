"""island-presenter shows what matters (docs/design.md §10) against the real daemon: alerts in the
bars, the live compact text, bar clicks (`island-presenter click`), bounded lines, the terminal UI
acting right after a daemon restart, and stopping on SIGINT/SIGTERM when SIGINT was inherited
ignored."""

import json
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from harness.paths import LIVENESS, PRESENTER
from harness.presenters import COFFEE, register_layout, request, wait_until_clickable, waybar_json
from harness.processes import stop_process, wait_for
from harness.tmux import Pane

LAYOUT = {
    "url": "https://example.org/order",
    "chip": "Coffee",
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.stage}}"},
    "lockScreen": {"type": "text", "template": "Order: {{state.stage}}"},
}


@pytest.fixture
def presenter_processes():
    started = []
    yield started
    for process in started:
        stop_process(process, signal.SIGKILL)


def test_waybar_shows_the_live_compact_text_and_the_alert(daemon, presenters):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    bar = presenters(daemon, "waybar")
    bar.next_line()
    with daemon.connect("org.island.Producer") as coffee:
        c = request(coffee, COFFEE, {"stage": "ordered"})
        first = waybar_json(bar.next_line(lambda l: "compact" in waybar_json(l)["class"]))
        assert first["text"] == "☕ ordered"
        assert first["alt"] == "Coffee"  # the chip, where space is short
        coffee.Update(app=COFFEE, id=c["id"], content={"state": {"stage": "brewing"}})
        assert waybar_json(bar.next_line(lambda l: "brewing" in waybar_json(l)["text"]))["text"] == "☕ brewing"
        coffee.Update(app=COFFEE, id=c["id"], content={"state": {"stage": "ready"}},
                      alert={"title": "Order <up>", "body": "Your flat white & a cookie"})
        alert = waybar_json(bar.next_line(lambda l: "alert" in waybar_json(l)["class"]))
        assert alert["text"] == "Order &lt;up&gt;: Your flat white &amp; a cookie"
        assert alert["tooltip"].split("\n")[0] == alert["text"]


@pytest.mark.parametrize("mode", ["i3blocks", "eww", "polybar"])
def test_other_bars_show_the_alert_and_cap_their_lines(daemon, presenters, mode):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    bar = presenters(daemon, mode, "--max-length", "24")
    bar.next_line()
    text = (lambda l: json.loads(l)["full_text"]) if mode == "i3blocks" else (lambda l: l)
    with daemon.connect("org.island.Producer") as coffee:
        c = request(coffee, COFFEE, {"stage": "on its way to your door, hot"})
        long_line = text(bar.next_line(lambda l: text(l) != ""))
        assert long_line == "☕ on its way to your d…"  # 24 cells: the emoji takes two
        coffee.Update(app=COFFEE, id=c["id"], content={"state": {"stage": "ready"}}, alert={"title": "Ready", "body": "Pick up"})
        assert text(bar.next_line(lambda l: "Ready" in text(l))) == "Ready: Pick up"
        if mode == "i3blocks":
            assert json.loads(bar.seen[-1])["short_text"] == "Ready"


def island_mode(daemon):
    """The island's mode, from the first snapshot of a subscription."""
    with daemon.connect("org.island.Presenter") as presenter:
        for reply in presenter.Subscribe(_more=True):
            return reply["update"]["island"]["mode"]


def test_click_expands_collapses_and_taps(daemon, tmp_path):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    opened = tmp_path / "opened"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xdg-open").write_text('#!/bin/sh\necho "$1" >> %s\n' % opened)
    (bin_dir / "xdg-open").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "")))

    def click(action):
        return subprocess.run([PRESENTER, "click", action, "--socket", daemon.socket], env=env,
                              capture_output=True, text=True, timeout=30)

    def mode():
        return island_mode(daemon)

    nothing = click("expand")
    assert nothing.returncode == 1 and "nothing" in nothing.stderr
    with daemon.connect("org.island.Producer") as coffee:
        c = request(coffee, COFFEE, {"stage": "brewing"})
        wait_for(lambda: mode() == "compact", message="compact")
        assert click("toggle").returncode == 0
        wait_for(lambda: mode() == "expanded", message="expanded by a click")
        assert click("toggle").returncode == 0
        wait_for(lambda: mode() == "compact", message="collapsed by a second click")
        tap = click("tap")
        assert tap.returncode == 0, tap.stderr
        assert tap.stdout == "https://example.org/order\n"
        wait_for(lambda: opened.exists() and opened.read_text() == "https://example.org/order\n", message="xdg-open ran")
        assert click("dismiss").returncode == 0
        wait_for(lambda: coffee.List(app=COFFEE)["activities"] == [], message="dismissed")
        assert c["id"]


def test_i3blocks_acts_on_the_clicks_written_to_its_stdin(daemon, tmp_path):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    block = subprocess.Popen([PRESENTER, "i3blocks", "--socket", daemon.socket], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    try:
        with daemon.connect("org.island.Producer") as coffee:
            request(coffee, COFFEE, {"stage": "brewing"})
            line = block.stdout.readline()
            while json.loads(line)["full_text"] == "":
                line = block.stdout.readline()
            assert island_mode(daemon) == "compact"
            # A click acts once what it acts on has stood still on the bar: observed
            # in the block's record of what it shows.
            wait_until_clickable(daemon.socket, str(runtime))
            # What i3blocks writes for a left click on a persistent block with format=json.
            block.stdin.write(b'{"":"","name":"island","full_text":"x","button":1,"x":5,"y":5}\n')
            block.stdin.flush()
            wait_for(lambda: island_mode(daemon) == "expanded", timeout=LIVENESS, message="expanded by the click")
    finally:
        stop_process(block, signal.SIGKILL)


def test_click_list_opens_the_tui_in_a_terminal(daemon, tmp_path):
    record = tmp_path / "terminal"
    fake = tmp_path / "fake-terminal"
    fake.write_text('#!/bin/sh\nprintf "%%s\\n" "$@" > %s\n' % record)
    fake.chmod(0o755)
    env = dict(os.environ, TERMINAL=str(fake), WAYLAND_DISPLAY="wayland-test")
    env.pop("DISPLAY", None)
    result = subprocess.run([PRESENTER, "click", "list", "--socket", daemon.socket], env=env,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    wait_for(lambda: record.exists() and record.read_text() != "", message="the terminal started")
    assert record.read_text().split("\n")[:5] == ["-e", PRESENTER, "tui", "--socket", daemon.socket]


def test_click_list_without_a_display_says_so_and_starts_no_terminal(daemon, tmp_path):
    """A terminal started without a display exited at once, unseen, and the click exited 0."""
    record = tmp_path / "terminal"
    fake = tmp_path / "fake-terminal"
    fake.write_text('#!/bin/sh\necho started > %s\n' % record)
    fake.chmod(0o755)
    env = dict(os.environ, TERMINAL=str(fake))
    env.pop("WAYLAND_DISPLAY", None)
    env.pop("DISPLAY", None)
    result = subprocess.run([PRESENTER, "click", "list", "--socket", daemon.socket], env=env,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1, result.stderr
    assert "no display to open a terminal on" in result.stderr and "island-presenter tui" in result.stderr
    assert not record.exists()


def ignoring_sigint():
    # What a non-interactive shell does to its background jobs.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("mode", ["waybar", "i3blocks", "eww", "polybar"])
def test_bar_modes_stop_on_their_signal_even_when_sigint_was_ignored(daemon, presenter_processes, mode, sig):
    with tempfile.TemporaryFile() as out:
        bar = subprocess.Popen([PRESENTER, mode, "--socket", daemon.socket], preexec_fn=ignoring_sigint,
                               stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        presenter_processes.append(bar)

        def wrote():
            out.seek(0)
            return out.read().endswith(b"\n")
        wait_for(wrote, timeout=LIVENESS, message="the first line")
        bar.send_signal(sig)
        assert bar.wait(timeout=LIVENESS) == 128 + sig


def tui_pid(pane):
    children = subprocess.run(["pgrep", "-P", str(pane.shell_pid())], capture_output=True, text=True,
                              timeout=LIVENESS).stdout.split()
    assert len(children) == 1, children
    return int(children[0])


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_tui_stops_on_its_signal_even_when_sigint_was_ignored(daemon, sig):
    # The shell's `trap '' INT` is inherited as ignored by the TUI it starts.
    pane = Pane("trap '' INT; %s tui --socket %s; echo tui-exited-$?; sleep 30" % (PRESENTER, daemon.socket), 100, 30)
    try:
        pane.until(lambda s: "none │" in s, "the empty island")
        os.kill(tui_pid(pane), sig)
        pane.until(lambda s: "tui-exited-" in s, "the TUI exited", whole_frames=False)
    finally:
        pane.close()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_acts_at_once_after_a_daemon_restart(daemon):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    pane = Pane("%s tui --socket %s; sleep 30" % (PRESENTER, daemon.socket), 100, 30)

    def screen_with(predicate, message):
        return pane.until(predicate, message)

    def act(key, done, message):
        """Presses `key` (an idempotent one: e, c) until its effect shows: a key right after what
        it acts on appeared or moved sends nothing and says so, and is pressed again."""
        def pressed():
            pane.keys(key)
            s = screen_with(lambda s: done(s) or "failed" in s or "changed just now" in s, message)
            return s if done(s) or "failed" in s else None
        return wait_for(pressed, timeout=LIVENESS, message=message)
    try:
        screen_with(lambda s: "none │" in s, "the empty island")
        with daemon.connect("org.island.Producer") as coffee:
            request(coffee, COFFEE, {"stage": "before"})
            screen_with(lambda s: "compact │" in s, "compact")
            # An action before the restart opens the TUI's interaction connection.
            s = act("e", lambda s: "expanded │" in s, "expanded")
            assert "failed" not in s, s
            s = act("c", lambda s: "compact │" in s, "collapsed")
            assert "failed" not in s, s
        daemon.stop()
        screen_with(lambda s: "reconnecting" in s, "the lost connection shown")
        daemon.start()
        with daemon.connect("org.island.Producer") as coffee:
            request(coffee, COFFEE, {"stage": "after"})
            screen_with(lambda s: "compact │" in s and "after" in s, "compact after the restart")
            # The first action after the restart works: no "the connection closed".
            s = act("e", lambda s: "expanded │" in s, "the expansion")
            assert "failed" not in s and "connection closed" not in s, s
    finally:
        pane.close()
