"""island-presenter's bar modes in the real bars: polybar 3.6 under Xvfb and i3blocks 1.4, run as
the unprivileged test user with the user's real islandd, fed by a producer.

Parsing the presenter's lines proves only what we believe about each bar's grammar; these tests let
the bar itself judge. Polybar runs `%{A1:cmd:}` on click, so a producer's text that became a tag
would run the producer's command as the user: a click on the module must run the module's own
`click-left` (the island expands) and nothing else. i3blocks passes the block's JSON through to
i3bar and writes i3bar's clicks to a persistent block's stdin: the text must stay plain (markup
none) whatever the block's configuration says, and a click must toggle the island.

Set ISLAND_DESKTOP_SHOTS=DIR to keep polybar's screenshots."""

import json
import os
import re
import select
import subprocess
import time

import pytest

from harness import desktop
from harness.paths import LIVENESS
from harness.presenters import wait_until_clickable
from harness.processes import descendants, kill_all

APP = "org.island.test.Bar"
BAR_HEIGHT = 30


def layout(template):
    # No chip: the text shown is the compact views' (the old presenter showed a chip instead).
    return {"compactLeading": {"type": "symbol", "name": "☕"},
            "compactTrailing": {"type": "text", "template": template}}


def documented_polybar_module(presenter):
    """The [module/island] section of island-presenter(1), with this build's presenter."""
    with open(os.path.join(desktop.REPO, "packaging", "man", "island-presenter.1")) as f:
        man = f.read()
    example = man[man.index(".SS polybar"):]
    example = example[example.index(".EX") + 4:example.index(".EE")].replace("\\-", "-")
    module = example[example.index("[module/island]"):]
    module = module.replace("island-presenter", presenter)
    fonts = [line for line in example.splitlines() if line.startswith("font-")]
    assert module.count(presenter) >= 2 and any("Noto Color Emoji" in f for f in fonts), example
    return fonts, module


class Polybar:
    def __init__(self, session, xvfb):
        self.session, self.xvfb = session, xvfb
        presenter = os.path.join(desktop.bin_dir(), "island-presenter")
        fonts, module = documented_polybar_module(presenter)
        config = os.path.join(session.config, "polybar", "config.ini")
        session.write(config, "[bar/island]\nwidth = 100%%\nheight = %d\nbackground = #ffffff\n"
                              "foreground = #000000\nmodules-center = island\n%s\n\n%s"
                      % (BAR_HEIGHT, "\n".join(fonts), module))
        # At `info`, polybar logs each shell command it runs, before it forks it (`commands`).
        self.process = session.spawn("polybar", ["polybar", "--log=info", "--config=" + config, "island"])
        self.shots = 0

    def pill(self):
        """The black run of the bar's middle row, (left, right), or None."""
        self.session.alive(self.process)
        shot = self.xvfb.screenshot()
        y = BAR_HEIGHT // 2
        dark = [x for x in range(self.xvfb.width) if max(shot.pixel(x, y)) < 40]
        if len(dark) < 30:
            return None
        if os.environ.get("ISLAND_DESKTOP_SHOTS"):
            self.shots += 1
            shot.save_png(os.path.join(os.environ["ISLAND_DESKTOP_SHOTS"], "polybar-%d.png" % self.shots))
        return dark[0], dark[-1]

    def click(self, pill):
        self.xvfb.click((pill[0] + pill[1]) / 2, BAR_HEIGHT // 2)
        self.xvfb.park()

    def commands(self):
        """The shell commands polybar ran, in order."""
        return re.findall(r"Executing shell command: (.*)", self.session.log("polybar"))


def clicked(bar, pill):
    """Clicks the pill; the shell command polybar ran for it. A click is one input, and polybar
    logs the command of each input before it forks it: the click's line in the log is all it
    ran for the click, whenever the command's own effects come (a look at them after a pause
    would pass while they were still to come)."""
    before = len(bar.commands())
    bar.click(pill)
    ran = desktop.wait_until(lambda: bar.commands()[before:], LIVENESS, "the command polybar ran for the click",
                             interval=0.2)
    assert len(ran) == 1, "one click, one command: %s" % ran
    return ran[0]


def click_runs_click_left(session, bar, pill, marker, tag):
    """The click runs the module's own click-left (the island expands) and not the producer's
    command (its marker is never made)."""
    command = clicked(bar, pill)
    assert "touch" not in command and not os.path.exists(marker), \
        "polybar ran %s on a click: %s (%s)" % (tag, command, marker)
    assert command.endswith(" click toggle &"), "a click on the module did not run its click-left: %s\n%s" \
        % (command, session.logs_text())
    desktop.wait_until(lambda: desktop.island_mode(session) == "expanded", LIVENESS,
                       "the island expanded by the module's click-left")


@pytest.mark.skipif(bool(desktop.why_not("polybar", "Xvfb", "xdotool")),
                    reason=desktop.why_not("polybar", "Xvfb", "xdotool") or "")
def test_polybar_runs_its_click_left_and_never_a_producers_action_tag():
    session = desktop.UserSession()
    try:
        session.write_manifest(APP, name="Bar test")
        layouts = os.path.join(session.data, "island", "layouts", APP)
        session.write(os.path.join(layouts, "Order.json"), json.dumps(layout("{{state.stage}}")))
        # The tag only forms where one field's `%` meets the next field's `{`.
        session.write(os.path.join(layouts, "Split.json"),
                      json.dumps(layout("{{state.a}}{{state.b}}{{state.c}}")))
        session.start_bus()
        session.start_islandd()
        xvfb = desktop.Xvfb(session, width=1024, height=200)
        bar = Polybar(session, xvfb)

        # Relative to polybar's working directory, the user's home: short enough that the whole
        # tag fits in the 40 cells the presenter shows.
        marker = os.path.join(session.home, "pwned")
        with session.varlink("org.island.Producer") as producer:
            whole = producer.Request(app=APP, type="Order", attributes={}, content={
                "state": {"stage": "%{A1:touch pwned:}Coffee ready%{A}"}})["activity"]["id"]
        pill = desktop.wait_until(bar.pill, 30, "the island's pill in polybar", interval=0.5)
        assert desktop.island_mode(session) == "compact"
        # A click acts once what it acts on has stood still on the bar: observed in
        # the presenter's record of what it shows.
        wait_until_clickable(session.socket, session.runtime, activity=whole)
        click_runs_click_left(session, bar, pill, marker, "the producer's %{A1:...} tag")

        split = os.path.join(session.home, "split")
        with session.varlink("org.island.Producer") as producer:
            producer.End(app=APP, id=whole, dismissalPolicy={"kind": "immediate"})
        # Gone first, so the pill clicked next is the new line's, not the last one's.
        desktop.wait_until(lambda: bar.pill() is None, LIVENESS, "the ended activity's pill gone", interval=0.3)
        with session.varlink("org.island.Producer") as producer:
            split_id = producer.Request(app=APP, type="Split", attributes={}, content={
                "state": {"a": "%", "b": "{A1:touch split:}Coffee ready%", "c": "{A}"}})["activity"]["id"]
        desktop.wait_until(lambda: desktop.island_mode(session) == "compact", LIVENESS, "the split activity in the island")
        pill = desktop.wait_until(bar.pill, LIVENESS, "the split activity's pill", interval=0.5)
        wait_until_clickable(session.socket, session.runtime, activity=split_id)
        click_runs_click_left(session, bar, pill, split, "a tag formed across two fields")
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


class I3blocks:
    """i3blocks with its stdout and stdin on pipes: what i3bar reads and writes."""

    def __init__(self, session, config):
        path = os.path.join(session.config, "i3blocks", "config")
        session.write(path, config)
        self.session = session
        self.process = session.spawn("i3blocks", ["i3blocks", "-c", path],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.buffer = b""
        self.clicks = 0
        header = json.loads(self.line(LIVENESS))
        assert header.get("click_events") is True, header
        # i3bar opens its endless array of click events.
        self.process.stdin.write(b"[\n")
        self.process.stdin.flush()

    def line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            self.session.alive(self.process)
            left = deadline - time.monotonic()
            readable, _, _ = select.select([self.process.stdout], [], [], max(0, left))
            if not readable:
                raise TimeoutError("no line from i3blocks within %ss" % timeout)
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("i3blocks closed its stdout:\n" + self.session.log("i3blocks"))
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def block(self, predicate, timeout, what):
        """The first status line's island block that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        while True:
            # The endless array: "[[]" opens it, then ",[...]" per status line.
            line = self.line(max(0.01, deadline - time.monotonic())).strip()
            if line.startswith(",["):
                line = line[1:]
                blocks = [b for b in json.loads(line) if b.get("name") == "island"]
                if blocks and predicate(blocks[0]):
                    return blocks[0]
            if time.monotonic() >= deadline:
                raise TimeoutError(what + " not shown by i3blocks within %ss" % timeout)

    def stop_blocks(self):
        """Stops the block's command: i3blocks leaves it running when it quits, and an idle old
        presenter never learns that its stdout is gone."""
        kill_all(descendants(self.process.pid))

    def click(self, button):
        # As i3bar writes them: one object per line, each after the first led by a comma.
        self.process.stdin.write(b'%s{"name":"island","button":%d,"x":10,"y":10}\n' % (b"," if self.clicks else b"", button))
        self.clicks += 1
        self.process.stdin.flush()


def i3blocks_version():
    words = subprocess.run(["i3blocks", "-V"], capture_output=True, text=True, timeout=10).stdout.split()
    return tuple(int(n) for n in words[1].split(".")) if len(words) > 1 and re.fullmatch(r"\d+(\.\d+)*", words[1]) else None


def i3blocks_session(session):
    session.write_manifest(APP, name="Bar test")
    session.write(os.path.join(session.data, "island", "layouts", APP, "Order.json"),
                  json.dumps(layout("{{state.stage}}")))
    session.start_islandd()
    presenter = os.path.join(desktop.bin_dir(), "island-presenter")
    # markup=pango, as a user wanting colours might set: the presenter's "markup": "none" wins.
    return I3blocks(session, "[island]\ncommand=%s i3blocks\nformat=json\ninterval=persist\nmarkup=pango\n"
                    % presenter)


I3BLOCKS_MISSING = desktop.why_not("i3blocks")


@pytest.mark.skipif(bool(I3BLOCKS_MISSING), reason=I3BLOCKS_MISSING or "")
def test_i3blocks_shows_the_producers_text_as_plain_text():
    session = desktop.UserSession()
    bar = None
    try:
        bar = i3blocks_session(session)
        hostile = '<i a="b">Coffee</i> & ready\\'
        with session.varlink("org.island.Producer") as producer:
            producer.Request(app=APP, type="Order", attributes={}, content={"state": {"stage": hostile}})
        block = bar.block(lambda b: b.get("full_text"), LIVENESS, "the live compact text")
        # What i3bar reads: i3blocks 1.4 ends a string at its first (escaped) quote and doubles
        # backslashes, so the presenter sends their lookalikes (BarFormat.i3blocks) and no escape.
        assert block["full_text"] == "☕ " + hostile.replace('"', "\u2033").replace("\\", "\u2216"), block
        assert block.get("markup") == "none", block
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        if bar:
            bar.stop_blocks()
        session.close()


@pytest.mark.skipif(bool(I3BLOCKS_MISSING), reason=I3BLOCKS_MISSING or "")
def test_i3blocks_clicks_reach_the_block_and_toggle_the_island():
    if (i3blocks_version() or (0,)) < (1, 5):
        # 1.4 (Debian 12) gives a persistent block its own stdin, shared and non-blocking, and
        # drops a click on it while it runs ("process already spawned"); 1.5 writes the click
        # to the block's own stdin.
        pytest.skip("i3blocks %s drops clicks on a running persistent block (1.5 passes them on)"
                    % ".".join(map(str, i3blocks_version() or ("?",))))
    session = desktop.UserSession()
    bar = None
    try:
        bar = i3blocks_session(session)
        with session.varlink("org.island.Producer") as producer:
            producer.Request(app=APP, type="Order", attributes={}, content={"state": {"stage": "brewing"}})
        bar.block(lambda b: "brewing" in b.get("full_text", ""), LIVENESS, "the live compact text")
        assert desktop.island_mode(session) == "compact"
        # Each click once its target has stood still on the bar.
        wait_until_clickable(session.socket, session.runtime)
        bar.click(1)
        desktop.wait_until(lambda: desktop.island_mode(session) == "expanded", LIVENESS,
                           "the island expanded by a click on the i3blocks block")
        wait_until_clickable(session.socket, session.runtime, action="collapse")
        bar.click(1)
        desktop.wait_until(lambda: desktop.island_mode(session) == "compact", LIVENESS,
                           "the island collapsed by a second click")
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        if bar:
            bar.stop_blocks()
        session.close()
