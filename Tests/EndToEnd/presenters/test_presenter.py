"""island-presenter against the real daemon: the bar modules read exactly as Waybar, i3blocks,
eww and polybar read them, the SVG snapshot, the terminal UI in tmux, and a daemon restart."""

import json
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from harness.paths import BIN_DIR, LIVENESS, PRESENTER, SANITIZER_ENV
from harness.presenters import COFFEE, let_the_screen_settle, register_layout, request, waybar_json
from harness.processes import wait_for, without_installed
from harness.tmux import Pane
from harness.varlink import Connection

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

TIMER = "org.example.Timer"
SVG_NS = "{http://www.w3.org/2000/svg}"
# What draws the SVG: the build's island-overlay, and where its package installs it.
OVERLAY = os.path.join(BIN_DIR, "island-overlay")
INSTALLED_OVERLAY = "/usr/bin/island-overlay"


def end_now(producer, app, activity):
    producer.End(app=app, id=activity["id"], dismissalPolicy={"kind": "immediate"})


def test_waybar_follows_the_island(daemon, presenters):
    bar = presenters(daemon, "waybar")
    first = waybar_json(bar.next_line())
    assert first["text"] == "" and first["alt"] == "" and "none" in first["class"]
    with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
        c = request(coffee, COFFEE, {"stage": "ordered"})
        compact = waybar_json(bar.next_line(lambda l: "compact" in waybar_json(l)["class"]))
        # The default layout: the title (no symbol fits a bare status), then the status in words.
        assert compact["text"] == "Order Ordered"
        assert compact["class"] == ["compact"]
        assert compact["tooltip"] == "Order · Ordered"

        t = request(timer, TIMER, {"progress": 0.25}, relevance=10, type="Tea")
        minimal = waybar_json(bar.next_line(lambda l: "minimal" in waybar_json(l)["class"]))
        # Each minimal view: the progress of one, the status of the other.
        assert minimal["text"] == "25% · Ordered"
        assert minimal["percentage"] == 25
        assert minimal["tooltip"].split("\n") == ["Tea · 25%", "Order · Ordered"]

        end_now(timer, TIMER, t)
        back = waybar_json(bar.next_line(lambda l: "compact" in waybar_json(l)["class"]))
        assert back["text"] == "Order Ordered"
        assert "percentage" not in back

        end_now(coffee, COFFEE, c)
        empty = waybar_json(bar.next_line(lambda l: "none" in waybar_json(l)["class"]))
        assert empty["text"] == "" and empty["tooltip"] == ""


def test_waybar_timers_tick_locally(daemon, presenters):
    bar = presenters(daemon, "waybar")
    bar.next_line()
    with daemon.connect("org.island.Producer") as coffee:
        request(coffee, COFFEE, {"endsAt": time.time() + 600})
        first = waybar_json(bar.next_line(lambda l: "compact" in waybar_json(l)["class"]))["text"]
        # No update is sent; the presenter re-renders the countdown by itself.
        later = waybar_json(bar.next_line(lambda l: waybar_json(l)["text"] != first))["text"]
        assert later.startswith("⏰ ") and later != first


def test_i3blocks_full_text(daemon, presenters):
    block = presenters(daemon, "i3blocks")
    assert json.loads(block.next_line()) == {"full_text": "", "short_text": "", "markup": "none"}
    with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
        c = request(coffee, COFFEE, {"stage": "ordered"})
        line = json.loads(block.next_line(lambda l: json.loads(l)["full_text"] != ""))
        assert line["full_text"] == "Order Ordered"
        assert "short_text" in line
        request(timer, TIMER, {"progress": 0.5}, relevance=10, type="Tea")
        line = json.loads(block.next_line(lambda l: " · " in json.loads(l)["full_text"]))
        assert line["full_text"] == "50% · Ordered"
        end_now(coffee, COFFEE, c)
        assert json.loads(block.next_line(lambda l: " · " not in json.loads(l)["full_text"]))["full_text"] == "50% Tea"


@pytest.mark.parametrize("mode", ["eww", "polybar"])
def test_plain_bars_print_an_empty_line_for_an_empty_island(daemon, presenters, mode):
    bar = presenters(daemon, mode)
    assert bar.next_line() == ""
    with daemon.connect("org.island.Producer") as coffee:
        c = request(coffee, COFFEE, {"stage": "ordered"})
        assert bar.next_line(lambda l: l != "") == "Order Ordered"
        end_now(coffee, COFFEE, c)
        assert bar.next_line() == ""


def test_waybar_survives_a_daemon_restart(daemon, presenters):
    bar = presenters(daemon, "waybar")
    bar.next_line()
    with daemon.connect("org.island.Producer") as coffee:
        request(coffee, COFFEE, {"stage": "before"})
        bar.next_line(lambda l: waybar_json(l)["text"] == "Order Before")
    daemon.stop()
    # The daemon is gone: nothing is known to be live.
    bar.next_line(lambda l: "none" in waybar_json(l)["class"])
    daemon.start()
    with daemon.connect("org.island.Producer") as timer:
        request(timer, TIMER, {"stage": "after"}, relevance=10, type="Tea")
        # The restored activity and the new one: a fresh snapshot, then deltas.
        line = waybar_json(bar.next_line(lambda l: "minimal" in waybar_json(l)["class"]))
        assert line["text"] == "After · Before"
        assert line["tooltip"].split("\n") == ["Tea · After", "Order · Before"]
    assert bar.process.poll() is None


ORDER_LAYOUT = {
    "url": "https://example.org/order",
    "keylineTint": "#ff9500",
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.stage}}"},
    "minimal": {"type": "text", "template": "{{state.stage}}"},
    "lockScreen": {"type": "vstack", "children": [
        {"type": "text", "template": "Order for {{attributes.name}}: {{state.stage}}"},
        {"type": "progress", "value": "{{state.done}}", "total": 4},
    ]},
    "expanded": {
        "center": {"type": "text", "template": "Order of {{attributes.name}}", "priority": 1},
        "bottom": {"type": "hstack", "priority": 0, "children": [
            {"type": "button", "action": "pause", "label": "Pause"},
            {"type": "button", "action": "cancel", "label": "Cancel"},
        ]},
    },
}


def svg_description(path):
    """The SVG's root, title and description lines: the drawing is cairo's shapes and glyph
    outlines (island-overlay's painter), and says what it shows only in <title> (the form) and
    <desc> (the text drawn, a region a line)."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG_NS + "svg"
    for element in root.iter():
        if element.tag not in (SVG_NS + "title", SVG_NS + "desc"):
            assert not (element.text or "").strip(), element.tag
        assert not (element.tail or "").strip(), element.tag
    assert root.find(SVG_NS + "text") is None and not list(root.iter(SVG_NS + "text"))
    desc = root.find(SVG_NS + "desc")
    return root, root.find(SVG_NS + "title").text, (desc.text or "").split("\n")


def test_snapshot_svg(daemon, tmp_path):
    register_layout(daemon, COFFEE, "Order", ORDER_LAYOUT)
    with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
        coffee.Request(app=COFFEE, type="Order", attributes={"name": "Ada & <Bob>"},
                       content={"state": {"stage": "brewing", "done": 1}})
        request(timer, TIMER, {"endsAt": time.time() + 3600}, relevance=10, type="Tea")
        out = tmp_path / "island.svg"
        result = subprocess.run([PRESENTER, "snapshot", "--svg", str(out), "--socket", daemon.socket],
                                capture_output=True, timeout=30)
        assert result.returncode == 0, result.stderr.decode()
    root, title, lines = svg_description(out)
    assert title == "Island: minimal"
    # The timer, attached, with its countdown (h:mm:ss at `now`); the coffee in the round
    # bubble, as its symbol (its word does not fit a circle); the list open under the island
    # with both cards.
    assert any(re.fullmatch(r"\d:\d\d:\d\d", line) for line in lines), lines
    assert "☕" in lines and "brewing" not in lines, lines
    assert "Order for Ada & <Bob>: brewing" in lines  # escaped in the file, intact once parsed
    assert any(line.startswith("⏰") for line in lines), lines
    # Drawn: the shapes and the glyphs of the text.
    assert len(root.findall(".//" + SVG_NS + "path")) >= 5
    assert len(list(root.iter(SVG_NS + "use"))) > 20
    if shutil.which("rsvg-convert"):
        png = tmp_path / "island.png"
        subprocess.run(["rsvg-convert", "-o", str(png), str(out)], check=True, timeout=30)
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])
        assert width > 0 and height > 0 and len(data) > 1000


def test_an_ended_cards_clock_stands_at_its_end(daemon, tmp_path):
    """A presenter is told when an activity ended (Item.endedAt, as the producer's End reply
    says it) and draws its time-driven views as they stood then: the card's count-up reads the
    same in two snapshots a second and more apart, and is the time from its start to its end."""
    layout = {"lockScreen": {"type": "hstack", "children": [
        {"type": "text", "template": "Fast"}, {"type": "timer", "from": "{{state.startedAt}}", "countsDown": False}]}}
    register_layout(daemon, TIMER, "Fast", layout)
    with daemon.connect("org.island.Producer") as timer:
        fast = request(timer, TIMER, {"startedAt": time.time() - 3600}, type="Fast")
        ended = timer.End(app=TIMER, id=fast["id"])["activity"]
    with daemon.connect("org.island.Presenter") as presenter:
        for reply in presenter.Subscribe(_more=True):
            [item] = reply["update"]["items"]
            break
    assert item["state"] == "ended" and item["endedAt"] == ended["endedAt"]

    def clock():
        out = tmp_path / "island.svg"
        subprocess.run([PRESENTER, "snapshot", "--svg", str(out), "--socket", daemon.socket], check=True, timeout=30)
        _, _, lines = svg_description(out)
        return [line for line in lines if re.fullmatch(r"\d+:\d\d:\d\d", line)]

    first = clock()
    # Real time must pass for a live clock to move: a second and a little, whatever the load.
    time.sleep(1.2)
    assert clock() == first
    elapsed = int(ended["endedAt"] - (ended["content"]["state"]["startedAt"]))
    assert first == ["%d:%02d:%02d" % (elapsed // 3600, elapsed // 60 % 60, elapsed % 60)], first


def test_snapshot_of_an_empty_island_and_without_a_daemon(daemon, tmp_path):
    out = tmp_path / "empty.svg"
    subprocess.run([PRESENTER, "snapshot", "--svg", str(out), "--socket", daemon.socket], check=True, timeout=30)
    root, title, lines = svg_description(out)
    assert title == "Island: none"
    # No island; the list says it is empty.
    assert lines == ["No Live Activities"]
    missing = subprocess.run([PRESENTER, "snapshot", "--svg", str(out), "--socket", str(tmp_path / "nothing.sock")],
                             capture_output=True, timeout=30)
    assert missing.returncode != 0
    assert b"nothing.sock" in missing.stderr


def test_snapshot_without_the_overlay_package_names_it(daemon, tmp_path):
    """The core package draws no SVG itself: without island-overlay (its package) beside the
    program, in /usr/bin or on PATH, the command says which package to install, and exits with
    status 69."""
    alone = tmp_path / "bin"
    alone.mkdir()
    presenter = alone / "island-presenter"
    shutil.copy(PRESENTER, presenter)
    result = subprocess.run(without_installed([INSTALLED_OVERLAY], [str(presenter), "snapshot", "--svg", str(tmp_path / "x.svg"),
                                                                     "--socket", daemon.socket]),
                            capture_output=True, text=True, timeout=30, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert result.returncode == 69, result.stderr
    assert "apt install island-overlay" in result.stderr
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.skipif(not os.path.exists(OVERLAY), reason="island-overlay is not built")
def test_snapshot_finds_the_overlay_on_path(daemon, tmp_path):
    """With island-overlay neither beside the program nor in /usr/bin, the one on PATH draws."""
    alone = tmp_path / "bin"
    alone.mkdir()
    presenter = alone / "island-presenter"
    shutil.copy(PRESENTER, presenter)
    out = tmp_path / "found.svg"
    # The package's /usr/bin/island-overlay, which comes before PATH, hidden where installed.
    subprocess.run(without_installed([INSTALLED_OVERLAY], [str(presenter), "snapshot", "--svg", str(out), "--socket", daemon.socket]),
                   check=True, timeout=30,
                   env=dict(os.environ, PATH=os.path.dirname(OVERLAY) + ":/usr/bin:/bin"))
    _, title, lines = svg_description(out)
    assert title == "Island: none" and lines == ["No Live Activities"]


@pytest.mark.skipif(not os.path.exists(OVERLAY), reason="island-overlay is not built")
def test_the_overlay_draws_svg_without_a_display(tmp_path):
    """island-overlay --draw-svg, what the core binaries start, is off-screen: it opens no display
    (none is set), reads the request on standard input and writes the document where asked; a
    request that is not one is refused with status 65 and nothing written."""
    headless = {key: value for key, value in os.environ.items()
                if key not in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "GDK_BACKEND")}
    snapshot = {"kind": "snapshot", "sequence": 0, "island": {"mode": "none", "lockScreen": []}, "items": [],
                "removed": []}
    request = json.dumps({"now": 0, "updates": [snapshot]})
    drawn = subprocess.run([OVERLAY, "--draw-svg", "-"], input=request, capture_output=True, text=True, timeout=30,
                           env=headless)
    assert drawn.returncode == 0, drawn.stderr
    root = ET.fromstring(drawn.stdout)
    assert root.find(SVG_NS + "title").text == "Island: none"
    # A path that starts with "-" is a file, given as --draw-svg=PATH (as the core binaries do).
    subprocess.run([OVERLAY, "--draw-svg=-dash.svg"], input=request, text=True, timeout=30, env=headless,
                   cwd=tmp_path, check=True)
    assert ET.parse(tmp_path / "-dash.svg").getroot().find(SVG_NS + "title").text == "Island: none"
    for bad in ("", "{", json.dumps({"now": 0, "updates": []}), json.dumps({"now": "soon", "updates": [snapshot]}),
                json.dumps({"now": 0, "updates": [{"kind": "delta"}]})):
        refused = subprocess.run([OVERLAY, "--draw-svg", str(tmp_path / "bad.svg")], input=bad, capture_output=True,
                                 text=True, timeout=30, env=headless)
        assert refused.returncode == 65, (bad, refused.stderr)
        assert not (tmp_path / "bad.svg").exists()


def test_help_explains_the_modes_and_contracts():
    result = subprocess.run([PRESENTER, "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    for word in ("tui", "waybar", "i3blocks", "eww", "polybar", "snapshot", "return-type: json",
                 "full_text", "percentage", "--socket", "ISLAND_SOCKET"):
        assert word in result.stdout, word


# The terminal UI, in a tmux pane


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_in_tmux(daemon, tmp_path):
    register_layout(daemon, COFFEE, "Order", ORDER_LAYOUT)
    # A stand-in xdg-open first on PATH records what a tap opens.
    opened = tmp_path / "opened"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xdg-open").write_text('#!/bin/sh\necho "$1" >> %s\n' % opened)
    (bin_dir / "xdg-open").chmod(0o755)

    def event(watch, predicate):
        return watch.read_until(lambda m: predicate(m["parameters"]["event"]), LIVENESS)["parameters"]["event"]

    # The sanitizer options (under scripts/sanitize.sh) are passed explicitly, as they are to
    # every process the suite starts with an environment of its own.
    sanitizer = "".join("%s=%s " % (k, shlex.quote(v)) for k, v in sorted(SANITIZER_ENV.items()))
    command = "env PATH=%s:$PATH %s%s tui --socket %s" % (bin_dir, sanitizer, PRESENTER, daemon.socket)
    pane = Pane(command, 100, 30)
    screen_with, keys = pane.until, pane.keys
    watch = Connection(daemon.socket)
    try:
        screen_with(lambda s: "none │" in s, "the empty island")
        with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
            c = coffee.Request(app=COFFEE, type="Order", attributes={"name": "Ada"},
                               content={"state": {"stage": "brewing", "done": 2}})["activity"]
            s = screen_with(lambda s: "compact │" in s, "compact")
            pill = [line for line in s.splitlines() if "☕" in line]
            assert pill and "brewing" in pill[0], s
            assert "Order for Ada: brewing" in s and "50%" in s

            watch.call("org.island.Producer.Watch", {"app": COFFEE, "ids": [c["id"]]}, more=True)
            # Registered once it says so: the call is handled in a task, and a tap on another
            # connection could overtake it.
            event(watch, lambda e: e["kind"] == "watching")
            with daemon.connect("org.island.Presenter") as presenter:
                presenter.Interact(action="tap", id=c["id"])
            event(watch, lambda e: e["kind"] == "tap")

            t = request(timer, TIMER, {"stage": "steeping"}, relevance=10, type="Tea")
            s = screen_with(lambda s: "minimal │" in s, "minimal")
            assert "│ ☕ brewing │" in s  # the detached bubble
            assert "org.example.Timer" in s and "org.example.Coffee" in s

            # Select the coffee card (the attached tea is first), then expand it.
            keys("Tab")
            screen_with(lambda s: "▶ ╭─ org.example.Coffee" in s, "the coffee card selected")
            # A key acts once what it acts on has stood still on screen.
            let_the_screen_settle()
            keys("e")
            s = screen_with(lambda s: "expanded │" in s, "expanded")
            assert "Order of Ada" in s and "[1 Pause] [2 Cancel]" in s

            let_the_screen_settle()
            keys("2")
            assert event(watch, lambda e: e["kind"] == "button")["action"] == "cancel"
            keys("Enter")
            assert event(watch, lambda e: e["kind"] == "tap")["url"] == "https://example.org/order"
            screen_with(lambda s: "opened https://example.org/order" in s, "the tap's URL opened")
            wait_for(lambda: opened.exists() and opened.read_text() == "https://example.org/order\n", message="xdg-open ran")

            keys("c")
            screen_with(lambda s: "minimal │" in s, "collapsed")

            let_the_screen_settle()
            keys("d")
            screen_with(lambda s: "compact │" in s and "org.example.Coffee" not in s, "the coffee dismissed")
            activity = event(watch, lambda e: e.get("activity", {}).get("state") == "dismissed")["activity"]
            assert activity["id"] == c["id"] and activity["endReason"] == "user"
            assert coffee.List(app=COFFEE)["activities"] == []
            assert [a["id"] for a in timer.List(app=TIMER)["activities"]] == [t["id"]]

            keys("q")
            wait_for(pane.gone, timeout=LIVENESS, message="the TUI quit")
    finally:
        watch.close()
        pane.close()


@pytest.mark.parametrize("mode", [("click", "toggle"), ("snapshot", "--svg", "-")], ids=["click", "snapshot"])
def test_click_and_snapshot_say_plainly_why_they_cannot_connect(tmp_path, mode):
    """As the CLI says it, not `connect(descriptor:addr:size:): No such file or directory)
    (errno: 2)`: a bar's on-click or a script meets it whenever the daemon is not running."""
    socket = str(tmp_path / "none.sock")
    result = subprocess.run([PRESENTER, *mode, "--socket", socket], capture_output=True, text=True, timeout=LIVENESS)
    assert result.returncode != 0
    assert "no snapshot from %s: no socket there" % socket in result.stderr, result.stderr
    assert "errno" not in result.stderr, result.stderr


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_says_plainly_why_it_cannot_connect(tmp_path):
    """With no daemon at the socket, the status line says so as the CLI does ("no socket
    there"), not in SwiftNIO's words (`connect(descriptor:addr:size:): No such file or
    directory) (errno: 2)`), which name a syscall's parameters."""
    socket = str(tmp_path / "none.sock")
    pane = Pane("%s tui --socket %s; sleep 30" % (PRESENTER, socket), 200, 20)
    try:
        # A whole frame: a capture between two of tmux's reads of one could cut the line short.
        screen = pane.until(lambda s: "reconnecting" in s, "the lost connection shown")
        assert "reconnecting… cannot connect to %s: no socket there" % socket in screen, screen
        assert "errno" not in screen and "descriptor:" not in screen, screen
    finally:
        pane.close()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_survives_a_daemon_restart_and_restores_the_terminal_on_sigterm(daemon):
    # What the shell prints after the TUI, to its last line (`terminal checked`): a look at the
    # screen once the TUI's status is there could come before stty's answer.
    command = ("%s tui --socket %s; echo tui-exited-$?; stty -a | grep -o -- '-icanon'; echo terminal checked; sleep 30"
               % (PRESENTER, daemon.socket))
    pane = Pane(command, 100, 30)
    screen_with = pane.until
    try:
        s = screen_with(lambda s: "none │" in s, "the empty island")
        assert s.splitlines()[1].index("╭") == (100 - 16) // 2  # the empty pill, centred
        # SIGWINCH: redrawn for the new size.
        pane.resize(60, 20)
        screen_with(lambda s: len(s.splitlines()) > 1 and s.splitlines()[1].find("╭") == (60 - 16) // 2, "the pill centred in 60 columns")
        daemon.stop()
        screen_with(lambda s: "reconnecting" in s, "the lost connection shown")
        daemon.start()
        with daemon.connect("org.island.Producer") as coffee:
            request(coffee, COFFEE, {"stage": "back"})
            s = screen_with(lambda s: "compact │" in s, "compact after the restart")
            assert "Back" in s and "reconnecting" not in s
        # The pane runs a shell; the TUI is its child.
        children = subprocess.run(["pgrep", "-P", str(pane.shell_pid())], capture_output=True, text=True,
                                  timeout=LIVENESS).stdout.split()
        assert len(children) == 1, children
        os.kill(int(children[0]), signal.SIGTERM)
        # The shell's lines after the TUI: no frame of the TUI's.
        s = screen_with(lambda s: "terminal checked" in s, "the TUI exited", whole_frames=False)
        assert "tui-exited-0" in s
        # Out of the alternate screen, and the terminal back in canonical mode.
        assert "-icanon" not in s and "Lock Screen" not in s
    finally:
        pane.close()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_list_scrolls_to_keep_the_selected_card_on_screen(daemon):
    """Eight orders in a pane with room for four cards: Tab after Tab, the selected card (its
    name) is on screen, down to the last one; the heading says how many are above."""
    # Four each of two apps: an app may have five live activities.
    for app in (COFFEE, TIMER):
        register_layout(daemon, app, "Order", ORDER_LAYOUT)
    names = ["Guest%d" % n for n in range(1, 9)]

    def selected(screen):
        """The name in the selected card (the rows after its ▶ title, to its bottom)."""
        lines = screen.splitlines()
        start = next((i for i, line in enumerate(lines) if line.startswith("▶ ╭")), None)
        if start is None:
            return None
        for line in lines[start + 1:]:
            if line.startswith("  ╰"):
                return None
            found = re.search(r"Order for (Guest[0-9]+)", line)
            if found:
                return found.group(1)
        return None

    sanitizer = "".join("%s=%s " % (k, shlex.quote(v)) for k, v in sorted(SANITIZER_ENV.items()))
    pane = Pane("env %s%s tui --socket %s" % (sanitizer, PRESENTER, daemon.socket), 100, 24)
    screen_with = pane.until
    try:
        screen_with(lambda s: "none │" in s, "the empty island")
        with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
            for n, name in enumerate(names):
                (coffee, timer)[n % 2].Request(app=(COFFEE, TIMER)[n % 2], type="Order", attributes={"name": name},
                                               content={"state": {"stage": "brewing", "done": 1}})
            # The list is longer than the pane.
            first = screen_with(lambda s: s.count("╭─ org.example.") >= 3, "the list")
            shown = set(re.findall(r"Order for (Guest[0-9]+)", first))
            assert len(shown) < len(names), first
            seen, scrolled = [], []
            for _ in names:
                before = selected(screen_with(lambda s: True, "a whole frame"))
                pane.keys("Tab")
                screen = screen_with(lambda s: selected(s) not in (None, before), "the next card selected and on screen")
                seen.append(selected(screen))
                scrolled += re.findall(r"Lock Screen  ↑ ([0-9]+) more", screen)
            # Every card was selected in turn (the last Tab wraps to the first), each on screen.
            assert sorted(seen) == sorted(names), seen
            assert scrolled, "the list never scrolled"
    finally:
        pane.close()
