"""Producer text and numbers against every sink of the real binaries (docs/design.md §6): the real
islandd, `island-presenter` in each bar mode and as SVG, and the `island` commands that print
producer text (`list`, `watch`, `preview`). A table of hostile strings goes in the type, the
attributes, the state, a registered layout's texts, button labels and chip; each output is checked
against its consumer's grammar. Numbers at the edges of JSON must crash nothing, and a bar presenter
must exit once its bar is gone."""

import base64
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import pytest

from harness import cli
from harness.cli import ok
from harness.paths import BIN_DIR, ISLAND, LIVENESS
from harness.processes import wait_for
from harness.tmux import Pane

PRESENTER = os.path.abspath(os.path.join(BIN_DIR, "island-presenter"))
BARS = ["waybar", "i3blocks", "eww", "polybar"]

HOSTILE = {
    "polybar-action": "%{A1:touch /tmp/island-pwned:}Coffee ready%{A}",
    "polybar-double-percent": "%%{A1:touch /tmp/island-pwned:}x%{A}",
    "osc0-title": "\x1b]0;pwned title\x07",
    "osc52-clipboard": "\x1b]52;c;cHduZWQ=\x07",
    "csi-sgr": "\x1b[31mred\x1b[0m\x1b[2J",
    "c1-csi": "\u009b31mC1\u009d0;osc\u009c",
    "del": "del\x7fete",
    "bare-esc": "bare \x1b escape",
    "newlines": "one\ntwo\rthree\ttab",
    "pango": "<span foreground='red'>big</span> & <b>bold</b>",
    "xml": "<script>alert(1)</script>]]><![CDATA[x",
    "json": "\"},{\"full_text\":\"forged\\",
    "bidi": "\u202edesrever\u202c",
    # Drawn as "Pay 1000$" where a sink applies the override.
    "pay-bidi": "Pay \u202e0001\u202c$ \u2067isolate\u2069 \u200f\u200e\u061c",
    # As many combining marks as a string may carry (512 scalars): no sink shows more than 12 a
    # character (DisplayText; 1,900 are bounded in the unit tests, DisplayTextSinkTests).
    "zalgo": "Z" + "\u0301" * 400 + "algo",
}
# `%` and `{` from two values that one template joins.
SPLIT_STATE = {"a": "50%", "b": "{A1:touch /tmp/island-pwned:}x"}

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# Bidi controls (DisplayText.isBidiControl), and runs of combining marks longer than a character
# keeps (DisplayText.maximumScalarsPerCluster, less its base).
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
MARKS = re.compile("[\u0300-\u036f]{12,}")


def assert_display_safe(output, where, data=False):
    """No bidi control and no overlong run of combining marks in what a person reads; JSON output
    (`data`) keeps every character, escaped, so only the first holds for it."""
    assert not BIDI.search(output), "%s: a bidi control reaches the sink: %r" % (where, output[:200])
    if not data:
        assert not MARKS.search(output), "%s: more combining marks than a character keeps: %r" % (where, output[:200])


SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
# What cairo's SVG surface writes, and the <title> and <desc> island-overlay adds: nothing else may
# be in a snapshot, so no element or attribute comes from producer text (SinkRules.SVGStructure
# says the same for the unit tests).
SVG_ELEMENTS = {"svg", "title", "desc", "defs", "g", "symbol", "path", "use", "clipPath", "rect", "image", "mask",
                "pattern", "linearGradient", "radialGradient", "stop", "filter", "feColorMatrix", "feComposite",
                "feFlood", "feImage", "feOffset"}
SVG_ATTRIBUTES = {"width", "height", "viewBox", "version", "id", "x", "y", "d", "style", "transform", "clip-path",
                  "clip-rule", "fill", "fill-rule", "fill-opacity", "stroke", "stroke-width", "opacity", "overflow",
                  XLINK + "href", "href", "mask", "filter", "patternUnits", "patternTransform", "gradientUnits",
                  "gradientTransform", "x1", "y1", "x2", "y2", "cx", "cy", "r", "fx", "fy", "fr", "spreadMethod",
                  "offset", "stop-color", "stop-opacity", "preserveAspectRatio", "color-interpolation-filters", "in",
                  "in2", "result", "type", "values", "operator", "mode", "flood-color", "flood-opacity", "dx", "dy",
                  "filterUnits", "maskUnits", "maskContentUnits", "clipPathUnits", "rx", "ry"}


def assert_svg_sink(document, where):
    """Well-formed; producer text only as the character data of the one <title> and <desc>
    (the drawing's glyphs are outlines), neutralised; every element and attribute cairo's."""
    root = ET.fromstring(document)
    assert root.tag == SVG + "svg", where
    for element in root.iter():
        name = element.tag.replace(SVG, "")
        assert name in SVG_ELEMENTS, "%s: an element %r" % (where, element.tag[:60])
        assert not set(element.attrib) - SVG_ATTRIBUTES, "%s: attributes %r" % (where, set(element.attrib) - SVG_ATTRIBUTES)
        if name not in ("title", "desc"):
            assert not (element.text or "").strip(), "%s: text in <%s>: %r" % (where, name, element.text[:80])
        assert not (element.tail or "").strip(), "%s: text after <%s>" % (where, name)
    described = [child for child in root if child.tag in (SVG + "title", SVG + "desc")]
    assert [child.tag for child in described] == [SVG + "title", SVG + "desc"], where
    assert not list(root.iter(SVG + "text")), where
    for child in described:
        assert_display_safe(child.text or "", where + " <%s>" % child.tag.replace(SVG, ""))
        assert not CONTROL.search((child.text or "").replace("\n", "")), where


def hostile_layout(text):
    t = lambda template: {"type": "text", "template": template}
    return {
        "chip": text[:7],
        "compactLeading": t("{{state.h}}"),
        "compactTrailing": t("{{state.a}}{{state.b}}"),
        "minimal": t("{{attributes.h}}"),
        "lockScreen": {"type": "vstack", "children": [
            t("{{attributes.h}} {{state.h}}"),
            {"type": "button", "action": "go", "label": "{{state.h}}"},
        ]},
        "expanded": {
            "center": dict(t("{{state.h}}"), priority=0),
            "bottom": {"type": "hstack", "priority": 0, "children": [
                t("{{state.h}}"), {"type": "button", "action": "go", "label": "{{state.h}}"}]},
        },
    }


def island(daemon, *args, timeout=60):
    """`island ARGS`, its output as bytes: the test reads exactly what a terminal gets."""
    return cli.island(daemon, *args, timeout=timeout, text=False)


def text_of(raw):
    return raw.decode("utf-8")


def assert_terminal_safe(output, where, data=False):
    """No control character but line ends, in what a command printed; DisplayText's rule."""
    assert_display_safe(output, where, data)
    for line in output.split("\n"):
        assert not CONTROL.search(line), "%s: a control character reaches the terminal: %r" % (where, line)


def assert_bar_line(mode, line):
    assert not CONTROL.search(line), "%s: a control character: %r" % (mode, line)
    assert_display_safe(line, mode)
    if mode in ("waybar", "i3blocks"):
        # Decoded, as the bar reads it: no escaped bidi control either.
        for value in json.loads(line).values():
            assert_display_safe(json.dumps(value, ensure_ascii=False), mode + " decoded")
    if mode == "waybar":
        value = json.loads(line)
        for key in ("text", "tooltip"):
            assert "<" not in value[key] and ">" not in value[key], "%s %s holds markup: %r" % (mode, key, line)
            assert not re.search(r"&(?!amp;|lt;|gt;)", value[key]), "%s %s holds a bare &: %r" % (mode, key, line)
    elif mode == "i3blocks":
        assert json.loads(line)["markup"] == "none", line
    elif mode == "polybar":
        # Whatever the module's label puts around it: `%` before, `{` after.
        assert line == "" or "%{" not in "%" + line + "{", "polybar: %%{ forms a tag: %r" % line


class Bar:
    """`island-presenter MODE` with stdout on a pipe read without blocking; every line is kept."""

    def __init__(self, daemon, mode):
        self.mode = mode
        self.process = subprocess.Popen([PRESENTER, mode, "--socket", daemon.socket],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.buffer = b""
        self.seen = []
        self.read = 0

    def _fill(self, timeout):
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if ready:
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, "%s exited (%s): %s" % (self.mode, self.process.wait(), self.process.stderr.read())
            self.buffer += chunk
            while b"\n" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\n", 1)
                self.seen.append(text_of(raw))

    def line(self, predicate, timeout=LIVENESS, what="a matching line"):
        """The next line not returned before that satisfies `predicate`."""
        deadline = time.time() + timeout
        while True:
            while self.read < len(self.seen):
                line = self.seen[self.read]
                self.read += 1
                if predicate(line):
                    return line
            remaining = deadline - time.time()
            assert remaining > 0, "%s: no line with %s (exit %s); lines: %r" % (self.mode, what, self.process.poll(),
                                                                                 self.seen)
            self._fill(remaining)

    def shown(self, line):
        """Whether the line shows an activity (not the empty island)."""
        if self.mode == "waybar":
            return "none" not in json.loads(line)["class"]
        if self.mode == "i3blocks":
            return json.loads(line)["full_text"] != ""
        return line != ""

    def text(self, line):
        """The island's text in the line, as the bar shows it (not a tooltip or a short text)."""
        if self.mode == "waybar":
            return json.loads(line)["text"]
        if self.mode == "i3blocks":
            return json.loads(line)["full_text"]
        return line

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


@pytest.fixture
def bars():
    started = []

    def start(daemon, mode):
        bar = Bar(daemon, mode)
        started.append(bar)
        return bar

    yield start
    for bar in started:
        bar.stop()


def register(daemon, layout, type="Hostile"):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(layout, f)
    try:
        ok(island(daemon, "extension", "register", f.name, "--type", type))
    finally:
        os.unlink(f.name)


def start(daemon, type, attributes, state, relevance=0):
    return text_of(ok(island(daemon, "start", type, "--attributes", json.dumps(attributes),
                             "--state", json.dumps(state), "--relevance", str(relevance))).stdout).strip()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_through_every_bar_and_cli(cli_daemon, bars, tmp_path, name):
    text = HOSTILE[name]
    register(cli_daemon, hostile_layout(text))
    register(cli_daemon, {"compactLeading": {"type": "text", "template": "{{state.a}}{{state.b}}"}}, type="Split")
    running = {mode: bars(cli_daemon, mode) for mode in BARS}
    for bar in running.values():
        bar.line(lambda line: True)
    # First alone, so the island is compact and shows it: `%` and `{` from two values meet.
    split = start(cli_daemon, "Split", {}, SPLIT_STATE)
    for bar in running.values():
        bar.line(bar.shown)
    assert any("touch /tmp/island-pwned" in line for line in running["polybar"].seen), "the text is shown"

    # Then the two with the text in the island in turn (each more relevant than the one before),
    # so that every bar's line shows it, not only Waybar's tooltip (the list); then Split on top
    # again, as a marker: its line comes after whatever the second one drew (which may be the
    # first one's line again, both cut to the same 40 cells, and then is not printed twice).
    split_text = {mode: bar.text(bar.seen[bar.read - 1]) for mode, bar in running.items()}
    state = dict(SPLIT_STATE, h=text, stage=text)
    laid_out = start(cli_daemon, "Hostile", {"h": text, "title": text}, state, relevance=1)
    for mode, bar in running.items():
        bar.line(lambda line: bar.text(line) != split_text[mode], what="the laid-out activity in the island")
    # No registered layout for this type: the default layout shows the type and the values.
    plain = start(cli_daemon, text.replace("\n", " ")[:60] or "T", {"title": text}, {"h": text}, relevance=2)
    ok(island(cli_daemon, "update", split, "--state", json.dumps(SPLIT_STATE), "--relevance", "3"))
    for mode, bar in running.items():
        bar.line(lambda line: bar.text(line) == split_text[mode], what="Split back in the island")
    for bar in running.values():
        assert bar.process.poll() is None
        for line in bar.seen:
            assert_bar_line(bar.mode, line)

    listed = ok(island(cli_daemon, "list"))
    assert_terminal_safe(text_of(listed.stdout), "island list")
    listed_json = text_of(ok(island(cli_daemon, "list", "--json")).stdout)
    assert_terminal_safe(listed_json, "island list --json", data=True)
    # Escaped, not dropped: the JSON still says exactly what the producer sent.
    by_id = {a["id"]: a for a in json.loads(listed_json)}
    assert by_id[laid_out]["deliveredContent"]["state"]["h"] == text
    assert plain in by_id and split in by_id

    # `island watch`, text and JSON, sees an update with the hostile state.
    for args in ([], ["--json"]):
        out = tmp_path / ("watch%s.out" % len(args))
        with open(out, "wb") as sink:
            watcher = subprocess.Popen([ISLAND, "watch", *args], stdout=sink, stderr=subprocess.DEVNULL,
                                       env=dict(os.environ, ISLAND_SOCKET=cli_daemon.socket))
        try:
            def seen():
                ok(island(cli_daemon, "update", laid_out, "--state", json.dumps(dict(state, n=time.time()))))
                return laid_out in out.read_bytes().decode("utf-8", "replace")
            wait_for(seen, interval=0.3, message="a watch line")
        finally:
            watcher.kill()
            watcher.wait(timeout=10)
        assert_terminal_safe(out.read_bytes().decode("utf-8"), "island watch %s" % args, data=bool(args))

    svg = text_of(ok(subprocess.run([PRESENTER, "snapshot", "--socket", cli_daemon.socket, "--svg", "-"],
                                    capture_output=True, timeout=30)).stdout)
    assert_svg_sink(svg, "island-presenter snapshot --svg -")
    assert_terminal_safe(svg, "island-presenter snapshot --svg -")

    layout_file = tmp_path / "layout.json"
    layout_file.write_text(json.dumps(hostile_layout(text)))
    for mode in ("compact", "minimal", "expanded", "lockscreen"):
        args = ["preview", str(layout_file), "--attributes", json.dumps({"h": text}), "--state", json.dumps(state),
                "--mode", mode]
        # The text and the drawing from one run: with --svg, preview prints the same text (the
        # drawing is written besides), so one process reaches both sinks.
        drawing = tmp_path / ("%s.svg" % mode)
        shown = text_of(ok(island(None, *args, "--svg", str(drawing))).stdout)
        assert shown.startswith(mode + "\n"), shown
        assert_terminal_safe(shown, "island preview %s" % mode)
        preview = text_of(ok(island(None, *args, "--json")).stdout)
        assert_terminal_safe(preview, "island preview --json %s" % mode, data=True)
        json.loads(preview)
        assert_svg_sink(drawing.read_text(), "island preview --svg %s" % mode)
        assert_display_safe(drawing.read_text(), "island preview --svg %s" % mode)
    assert not os.path.exists("/tmp/island-pwned")


# Two starts each: the daemon allows an app ten starts a minute.
NUMBERS = ["1e300", "-1.7976931348623157e308", "1e-300", "-5", "123456789012345678901234567890"]
# The compact trailing region also counts up from when the test registers the layout (`since`):
# a line that changes by itself every second, so a bar's next line with the activity shown is
# its tick's (a bar prints nothing on a tick that changes nothing).
TICKS = "ticks"


def numeric_layout(since):
    return {
        "compactLeading": {"type": "timer", "to": "{{state.v}}", "countsDown": True},
        "compactTrailing": {"type": "hstack", "children": [
            {"type": "progress", "value": "{{state.v}}", "total": "{{state.w}}"},
            {"type": "text", "template": TICKS}, {"type": "timer", "from": since, "countsDown": False}]},
        "minimal": {"type": "timer", "from": "{{state.v}}", "to": "{{state.w}}"},
        "lockScreen": {"type": "vstack", "children": [
            {"type": "progress", "from": "{{state.v}}", "to": "{{state.w}}"},
            {"type": "progress", "value": "{{state.v}}", "total": 1e-300,
             "segments": [{"length": 1.7e308}, {"length": 1.7e308}], "points": [{"position": 1.7e308}]},
        ]},
    }


def test_extreme_numbers_crash_no_presenter(cli_daemon, bars):
    """Every bar draws each number, and ticks with it: each step is waited for as the line the bar
    prints for it, so a presenter slow to get there is waited for, and one that crashed on the way
    is seen to have (a look after a pause would pass before it got there)."""
    register(cli_daemon, numeric_layout(time.time()), type="Numbers")
    running = {mode: bars(cli_daemon, mode) for mode in BARS}
    for bar in running.values():
        bar.line(lambda line: True)

    def each_bar_shows(predicate, what):
        for bar in running.values():
            bar.line(predicate(bar), what=what)

    for number in NUMBERS:
        # `{"endsAt": 1e300}` needs no layout: the default layout makes it a countdown. Numbers is
        # more relevant: in the island, its clock ticking, with Plain in the list.
        states = [("Plain", '{"endsAt": %s, "progress": %s}' % (number, number), "0"),
                  ("Numbers", '{"v": %s, "w": %s}' % (number, "0" if number == NUMBERS[0] else NUMBERS[0]), "1")]
        ids = [text_of(ok(island(cli_daemon, "start", type, "--state", state, "--relevance", relevance)).stdout).strip()
               for type, state, relevance in states]
        # Numbers' line, then the next one its clock's tick drew with both live (the presenters
        # tick every second while a clock on screen runs).
        each_bar_shows(lambda bar: lambda line: TICKS in bar.text(line), "%s's Numbers" % number)
        first = {mode: bar.text(bar.seen[bar.read - 1]) for mode, bar in running.items()}
        each_bar_shows(lambda bar: lambda line: TICKS in bar.text(line) and bar.text(line) != first[bar.mode],
                       "a tick of %s's Numbers" % number)
        svg = text_of(ok(subprocess.run([PRESENTER, "snapshot", "--socket", cli_daemon.socket, "--svg", "-"],
                                        capture_output=True, timeout=30)).stdout)
        assert_svg_sink(svg, "island-presenter snapshot --svg - of %s" % number)
        assert not re.search(r'="[^"]*\b(nan|inf)\b', svg), "a coordinate is nan or inf"
        assert_terminal_safe(text_of(ok(island(cli_daemon, "list")).stdout), "island list")
        assert {a["id"] for a in json.loads(ok(island(cli_daemon, "list", "--json")).stdout)} == set(ids)
        # Numbers gone, Plain is in the island; then the empty island, the last line this number
        # makes: every bar drew all of it.
        ok(island(cli_daemon, "end", ids[1], "--dismiss", "immediate"))
        each_bar_shows(lambda bar: lambda line: bar.shown(line) and TICKS not in bar.text(line), "%s's Plain" % number)
        ok(island(cli_daemon, "end", ids[0], "--dismiss", "immediate"))
        each_bar_shows(lambda bar: lambda line: not bar.shown(line), "the empty island after %s" % number)
        for mode, bar in running.items():
            assert bar.process.poll() is None, \
                "%s crashed on %s: %s" % (mode, number, bar.process.stderr.read().decode())
            for line in bar.seen:
                assert_bar_line(mode, line)
    for bar in running.values():
        assert any(bar.shown(line) for line in bar.seen)


@pytest.mark.parametrize("mode", BARS)
def test_a_bar_presenter_exits_when_its_bar_is_gone(daemon, mode):
    """The bar (the pipe's reader) goes away while nothing changes: the presenter must notice
    without writing, and exit with its own status."""
    process = subprocess.Popen([PRESENTER, mode, "--socket", daemon.socket], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout.readline().endswith(b"\n")
        process.stdout.close()
        assert process.wait(timeout=LIVENESS) == 74
        assert b"standard output closed" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def test_waybar_piped_into_head_ends(daemon):
    """`island-presenter waybar | head -n1` ends, whatever the presenter writes next."""
    pipeline = subprocess.Popen(
        ["sh", "-c", 'exec "$0" waybar --socket "$1" | head -n1', PRESENTER, daemon.socket],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = pipeline.communicate(timeout=LIVENESS)
        assert json.loads(out)["class"] == ["none"]
        # The shell waits for both sides of the pipe: it only ends once the presenter has.
        assert pipeline.returncode == 0
    finally:
        if pipeline.poll() is None:
            os.killpg(pipeline.pid, signal.SIGKILL)
        pipeline.wait(timeout=10)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_terminal_ui_writes_no_producer_escape_to_a_real_terminal(daemon, tmp_path):
    """`island-presenter tui` in tmux (a server of its own, which accepts OSC 52): a producer's
    OSC 2 must not retitle the pane, its OSC 52 must not fill the clipboard, in the compact
    pill, the expanded island, the buttons and the lock-screen card."""
    clip = base64.b64encode(b"island-pwned-clipboard").decode()
    evil = "\x1b]2;island-pwned-title\x07\x1b]52;c;%s\x07\x1b[31m\u009b32m" % clip
    layout = {
        "compactLeading": {"type": "text", "template": "{{state.h}}"},
        "compactTrailing": {"type": "text", "template": "{{attributes.h}}"},
        "lockScreen": {"type": "vstack", "children": [
            {"type": "text", "template": "{{state.h}}"}, {"type": "button", "action": "go", "label": "{{state.h}}"}]},
        "expanded": {"center": {"type": "text", "template": "{{state.h}}", "priority": 0},
                     "bottom": {"type": "button", "action": "go", "label": "{{state.h}}", "priority": 0}},
    }
    with daemon.connect("org.island.Extension") as ext:
        ext.RegisterLayout(app="org.example.Coffee", type="Evil", layout=layout)

    def title():
        return pane.tmux_command("display-message", "-p", "-t", "pane", "#{pane_title}")

    def buffers():
        return pane.tmux_command("list-buffers", "-F", "#{buffer_sample}", check=False)

    # The options are set before the TUI starts (its first frame could come before them): a
    # configuration file, where a server of tmux's own reads them.
    config = tmp_path / "tmux.conf"
    config.write_text("set-option -g set-clipboard on\nset-option -g allow-rename on\n")
    pane = Pane("%s tui --socket %s" % (PRESENTER, daemon.socket), 100, 30, config=str(config))
    try:
        assert pane.tmux_command("show-options", "-g", "set-clipboard").split() == ["set-clipboard", "on"]
        assert pane.tmux_command("show-options", "-g", "allow-rename").split() == ["allow-rename", "on"]
        pane.until(lambda s: "none │" in s, "the empty island")
        with daemon.connect("org.island.Producer") as producer:
            producer.Request(app="org.example.Coffee", type="Evil", attributes={"h": evil},
                             content={"state": {"h": evil}, "relevanceScore": 0})
            pane.until(lambda s: "compact │" in s, "compact")
            # A key right after the activity appeared sends nothing and says so: e
            # (idempotent) is pressed again until the island expands.
            def expanded():
                pane.keys("e")
                screen = pane.until(lambda s: "expanded │" in s or "changed just now" in s, "the key's effect")
                return screen if "expanded │" in screen else None
            screen = wait_for(expanded, message="expanded")
            # The text is shown, made harmless: what followed each ESC is plain text.
            assert "]2;island-pwned-title" in screen
            assert "island-pwned-title" not in title()
            assert "pwned" not in buffers()
    finally:
        pane.close()
