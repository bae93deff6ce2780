"""End-to-end tests of the `island` CLI against the real islandd: the producer's commands, their
exit statuses and --json output, refusals in words, `watch`, extensions and `admin`, and
`island preview`'s text and SVG."""

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import pytest

from harness.cli import activities, activity, island, ok
from harness.paths import ISLAND, LIVENESS
from harness.processes import wait_for, without_installed

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

# --- producer commands --------------------------------------------------------------------


def test_start_update_list_end(cli_daemon):
    id = ok(island(cli_daemon, "start", "Delivery", "--attributes", '{"title":"Pizza"}', "--state", '{"stage":"baking"}',
                   "--relevance", "3")).stdout.strip()
    assert len(id) == 36
    ok(island(cli_daemon, "update", id, "--state", '{"stage":"on the way"}', "--relevance", "3"))
    table = ok(island(cli_daemon, "list")).stdout
    assert id in table and "Delivery" in table and "active" in table
    listed = activities(cli_daemon, "--type", "Delivery")
    assert [a["id"] for a in listed] == [id]
    assert listed[0]["attributes"] == {"title": "Pizza"}
    assert listed[0]["content"]["state"] == {"stage": "on the way"}
    assert listed[0]["content"]["relevanceScore"] == 3
    assert activities(cli_daemon, "--type", "Other") == []

    ended = json.loads(ok(island(cli_daemon, "end", id, "--state", '{"stage":"delivered"}', "--json")).stdout)
    assert ended["state"] == "ended" and ended["endReason"] == "app"
    assert [a["id"] for a in activities(cli_daemon, "--state", "ended")] == [id]
    assert activities(cli_daemon, "--state", "active") == []


def test_start_json_key_and_stale_after(cli_daemon):
    first = json.loads(ok(island(cli_daemon, "start", "T", "--key", "k1", "--stale-after", "600", "--json")).stdout)
    again = json.loads(ok(island(cli_daemon, "start", "T", "--key", "k1", "--json")).stdout)
    assert first["id"] == again["id"]
    assert first["content"]["staleDate"] > time.time() + 500


def test_update_reports_throttling_and_alerts(cli_daemon):
    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    replies = [json.loads(ok(island(cli_daemon, "update", id, "--state", '{"n":%d}' % n, "--json")).stdout) for n in range(3)]
    for reply in replies:
        assert set(reply["delivery"]) == {"throttled", "deliverAt", "alerted", "alertSuppressed"}
        assert reply["activity"]["id"] == id
    alerted = json.loads(ok(island(cli_daemon, "update", id, "--state", "{}", "--alert-title", "Hi", "--alert-body", "There",
                                   "--json")).stdout)
    assert alerted["delivery"]["alerted"] or alerted["delivery"]["alertSuppressed"]
    # An older timestamp is refused, by name.
    ok(island(cli_daemon, "update", id, "--state", "{}", "--timestamp", str(time.time() + 100)))
    stale = island(cli_daemon, "update", id, "--state", "{}", "--timestamp", "1")
    assert stale.returncode == 1 and "org.island.StaleTimestamp" in stale.stderr


def test_end_dismiss_policies(cli_daemon):
    a = ok(island(cli_daemon, "start", "T")).stdout.strip()
    b = ok(island(cli_daemon, "start", "T")).stdout.strip()
    ok(island(cli_daemon, "end", a, "--dismiss", "immediate"))
    ended = json.loads(ok(island(cli_daemon, "end", b, "--dismiss", "3600", "--json")).stdout)
    assert ended["dismissAt"] == pytest.approx(time.time() + 3600, abs=60)
    assert island(cli_daemon, "end", b, "--dismiss", "sometime").returncode == 2
    gone = island(cli_daemon, "update", a, "--state", "{}")
    assert gone.returncode == 1 and "org.island." in gone.stderr


def test_refused_call_exits_1_with_the_name_and_a_hint(cli_daemon):
    big = json.dumps({"blob": "x" * 5000})
    result = island(cli_daemon, "start", "T", "--attributes", big)
    assert result.returncode == 1
    assert "org.island.AttributesTooLarge" in result.stderr
    assert "hint:" in result.stderr
    result = island(cli_daemon, "start", "T", "--attributes", big, "--json")
    error = json.loads(result.stdout)
    assert error["error"] == "org.island.AttributesTooLarge"
    assert error["parameters"]["limit"] == 4096 and error["parameters"]["size"] > 5000
    # An app without a manifest is unentitled.
    result = island(cli_daemon, "list", "--app", "org.example.Nobody")
    assert result.returncode == 1 and "org.island.Unentitled" in result.stderr


def test_a_refusal_names_the_app_and_its_hints_repeat_the_app(cli_daemon):
    """Started with --app, updated without it: the refusal says which app was asked, and the
    hints carry the --app to give, so `island list` does not list another app's."""
    id = ok(island(cli_daemon, "start", "Order", "--app", "org.example.Coffee")).stdout.strip()
    result = island(cli_daemon, "update", id, "--state", "{}")
    assert result.returncode == 1
    assert "no activity %s of org.island.cli" % id in result.stderr, result.stderr
    assert "same --app" in result.stderr, result.stderr
    result = island(cli_daemon, "update", "not-an-id", "--state", "{}", "--app", "org.example.Coffee")
    assert "no activity not-an-id of org.example.Coffee" in result.stderr, result.stderr
    assert "`island list --app org.example.Coffee`" in result.stderr, result.stderr
    ok(island(cli_daemon, "update", id, "--state", "{}", "--app", "org.example.Coffee"))


def test_refusals_are_sentences_not_json(cli_daemon):
    """NestingTooDeep, AlertTooLarge, ImplausibleTimestamp and PushUnavailable printed their
    parameters as JSON and sent the user to the daemon's log, which records no refusal."""
    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    deep = "[" * 40 + "]" * 40
    refusals = [
        (island(cli_daemon, "update", id, "--state", '{"a":%s}' % deep), "org.island.NestingTooDeep", "deep, over the limit of 32"),
        (island(cli_daemon, "update", id, "--state", "{}", "--alert-title", "x" * 2000), "org.island.AlertTooLarge",
         "bytes together, over the limit of 1024"),
        (island(cli_daemon, "update", id, "--state", "{}", "--timestamp", str(time.time() * 1000)),
         "org.island.ImplausibleTimestamp", "looks like milliseconds"),
        (island(cli_daemon, "push-token", id), "org.island.PushUnavailable", "push is not available"),
    ]
    for result, name, sentence in refusals:
        assert result.returncode == 1, result
        assert name in result.stderr and sentence in result.stderr, result.stderr
        assert "{" not in result.stderr and "log" not in result.stderr, result.stderr
        assert "hint:" in result.stderr


def test_a_desktop_entry_saying_yes_is_told_to_say_true(make_daemon):
    daemon = make_daemon(start=False)
    entry = os.path.join(daemon.share, "applications", "org.example.Yes.desktop")
    with open(entry, "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Yes\nExec=/usr/bin/false\nX-Island-LiveActivities=yes\n")
    daemon.start()
    result = island(daemon, "start", "T", "--app", "org.example.Yes")
    assert result.returncode == 1 and "org.island.Unentitled" in result.stderr
    assert "it says X-Island-LiveActivities=yes, and a desktop entry's booleans are true or false; write true" in result.stderr, \
        result.stderr


def test_auth(cli_daemon):
    info = json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)
    assert info["app"] == "org.island.cli"
    assert info["enabled"] is True
    assert info["frequentUpdates"] is True  # the CLI's manifest allows them
    assert info["limits"]["maxPayloadBytes"] == 4096
    assert "enabled:" in ok(island(cli_daemon, "auth")).stdout


class Captured:
    """A child's stdout in a file: the child appends through its own descriptor and the test
    reads through another, so reading never moves the child's write position."""

    def __init__(self):
        fd, self.path = tempfile.mkstemp(prefix="island-out-")
        os.close(fd)
        self.sink = open(self.path, "a")

    def read(self):
        with open(self.path) as f:
            return f.read()


def test_watch_prints_one_line_per_event(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    out = Captured()
    watcher = subprocess.Popen([ISLAND, "watch", "--json"], stdout=out.sink, stderr=subprocess.PIPE, env=env, text=True)
    try:
        def lines():
            # The watcher may be mid-line while we read: parse only the lines it has finished.
            complete = out.read().rpartition("\n")[0]
            return [json.loads(line) for line in complete.splitlines() if line.strip()]

        # The watch is up once the process has connected: update until an update shows.
        id = ok(island(cli_daemon, "start", "Watched", "--state", '{"n":0}')).stdout.strip()
        sent = [0]

        def seen_update():
            sent[0] += 1
            ok(island(cli_daemon, "update", id, "--state", '{"n":%d}' % sent[0]))
            return any(e.get("activity", {}).get("id") == id and e["kind"] == "content"
                       and e["activity"]["deliveredContent"]["state"].get("n", 0) >= 1 for e in lines())
        wait_for(seen_update, interval=0.3, message="a content event")
        assert all(e["kind"] in ("state", "content", "tap", "button", "authorization", "resync") for e in lines())
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=LIVENESS)


def test_watch_says_when_do_not_disturb_changes(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    out = Captured()
    watcher = subprocess.Popen([ISLAND, "watch"], stdout=out.sink, stderr=subprocess.PIPE, env=env, text=True)
    try:
        # The watch is up once the process has connected: switch until a change shows.
        def seen_focus():
            ok(island(cli_daemon, "admin", "focus", "off"))
            ok(island(cli_daemon, "admin", "focus", "on"))
            return re.search(r" focus on since \d{4}-", out.read()) is not None
        wait_for(seen_focus, interval=0.3, message="a focus line")
        ok(island(cli_daemon, "admin", "focus", "off"))
        wait_for(lambda: out.read().rstrip().endswith(" focus off"), interval=0.1, message="focus off")
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=LIVENESS)


def test_watch_text_filters_by_id(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    keep = ok(island(cli_daemon, "start", "T")).stdout.strip()
    other = ok(island(cli_daemon, "start", "T")).stdout.strip()
    out = Captured()
    watcher = subprocess.Popen([ISLAND, "watch", keep], stdout=out.sink, stderr=subprocess.PIPE, env=env, text=True)
    try:
        # A new state each round: an update that changes nothing is no content event, so a
        # watcher that subscribed after the first round would have had nothing more to see.
        rounds = itertools.count()

        def seen():
            n = next(rounds)
            ok(island(cli_daemon, "update", other, "--state", '{"o":%d}' % n))
            ok(island(cli_daemon, "update", keep, "--state", '{"k":%d}' % n))
            return "content " + keep in out.read()
        wait_for(seen, interval=0.3, message="a content line")
        assert other not in out.read()
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=LIVENESS)


# --- extension and admin ------------------------------------------------------------------

VALID_LAYOUT = {
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.eta}} min"},
    "minimal": {"type": "progress", "value": "{{state.done}}", "total": 10},
    "lockScreen": {"type": "vstack", "children": [
        {"type": "text", "template": "{{attributes.shop}} <order> & co"},
        {"type": "progress", "value": "{{state.done}}", "total": 10}]},
    "expanded": {
        "leading": {"type": "symbol", "name": "☕", "priority": 1},
        "center": {"type": "text", "template": "Brewing", "priority": 2},
        "trailing": {"type": "timer", "to": "{{state.endsAt}}", "priority": 1},
        "bottom": {"type": "hstack", "priority": 0, "children": [
            {"type": "button", "action": "cancel", "label": "Cancel"}, {"type": "spacer"},
            {"type": "text", "template": "{{state.eta}} min"}]},
    },
    "keylineTint": "#6F4E37",
    "chip": "Coffee",
}
INVALID_LAYOUT = {"compactLeading": {"type": "bogus"}}


def write(tmp_path, name, value):
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return str(path)


def test_extension_register_list_remove(cli_daemon, tmp_path):
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    ok(island(cli_daemon, "extension", "register", layout, "--type", "Coffee"))
    assert "Coffee" in ok(island(cli_daemon, "extension", "list")).stdout
    listed = json.loads(ok(island(cli_daemon, "extension", "list", "--json")).stdout)
    assert listed[0]["type"] == "Coffee" and listed[0]["layout"]["chip"] == "Coffee"
    bad = island(cli_daemon, "extension", "register", write(tmp_path, "bad.json", INVALID_LAYOUT), "--type", "Bad")
    assert bad.returncode == 1
    assert "org.island.InvalidLayout" in bad.stderr and "compactLeading.type" in bad.stderr
    ok(island(cli_daemon, "extension", "remove", "--type", "Coffee"))
    assert json.loads(ok(island(cli_daemon, "extension", "list", "--json")).stdout) == []


def test_a_file_named_on_the_command_line_may_be_a_pipe_and_is_bounded(cli_daemon, tmp_path):
    """A layout or a password file the user names is theirs to give as they like: a pipe
    (`/dev/stdin`, `<(...)`) is read as the file it stands for. Foundation refused every pipe
    and device as "You don't have permission"; /dev/zero is refused by size now, not read."""
    registered = island(cli_daemon, "extension", "register", "/dev/stdin", "--type", "Coffee", stdin=json.dumps(VALID_LAYOUT))
    ok(registered)
    assert json.loads(ok(island(cli_daemon, "extension", "list", "--json")).stdout)[0]["type"] == "Coffee"
    preview = ok(island(None, "preview", "/dev/stdin", "--mode", "compact", stdin=json.dumps(VALID_LAYOUT)))
    assert preview.stdout.startswith("compact\n"), preview.stdout
    for command in (("preview", "/dev/zero"), ("extension", "register", "/dev/zero", "--type", "Zero")):
        refused = island(cli_daemon, *command)
        assert refused.returncode == 2, refused.stderr
        assert "cannot read the layout /dev/zero: larger than 1048576 bytes" in refused.stderr, refused.stderr


@pytest.mark.slow  # `island channel` retries a refused broker for 10 s
def test_a_password_file_named_on_the_command_line_may_be_a_pipe():
    """As a layout (above): a password file given as `/dev/stdin` is read as the file it stands
    for. The password file is read before the broker is asked: here, none listens."""
    pushed = island(None, "channel", "list", "--app", "org.example.Scores", "--password-file", "/dev/stdin",
                    "--broker", "mqtt://127.0.0.1:1", stdin="secret\n")
    assert pushed.returncode == 69 and "BrokerUnavailable" in pushed.stderr, pushed.stderr


def test_admin_commands(cli_daemon):
    status = json.loads(ok(island(cli_daemon, "admin", "status", "--json")).stdout)
    assert status["scope"] == "user" and "limits" in status
    assert "version:" in ok(island(cli_daemon, "admin", "status")).stdout
    apps = json.loads(ok(island(cli_daemon, "admin", "apps", "--json")).stdout)
    assert "org.island.cli" in [a["id"] for a in apps["apps"]]
    assert "org.island.cli" in ok(island(cli_daemon, "admin", "apps")).stdout

    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    ok(island(cli_daemon, "admin", "disable", "org.island.cli"))
    denied = island(cli_daemon, "start", "T")
    assert denied.returncode == 1 and "org.island.Denied" in denied.stderr and "island admin enable" in denied.stderr
    assert json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)["enabled"] is False
    assert activity(cli_daemon, id)["state"] in ("ended", "dismissed")
    ok(island(cli_daemon, "admin", "enable", "org.island.cli"))
    ok(island(cli_daemon, "start", "T"))

    ok(island(cli_daemon, "admin", "frequent-updates", "org.island.cli", "off"))
    assert json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)["frequentUpdates"] is False
    ok(island(cli_daemon, "admin", "frequent-updates", "org.island.cli", "on"))
    assert island(cli_daemon, "admin", "frequent-updates", "org.island.cli", "maybe").returncode == 2
    refused = island(cli_daemon, "admin", "frequent-updates", "org.example.Coffee", "on")
    assert refused.returncode == 1 and "org.island.Unentitled" in refused.stderr

    ok(island(cli_daemon, "admin", "disable"))
    assert json.loads(ok(island(cli_daemon, "admin", "apps", "--json")).stdout)["enabled"] is False
    ok(island(cli_daemon, "admin", "enable"))
    ok(island(cli_daemon, "admin", "reload"))


def test_admin_focus_silences_alerts_and_the_update_says_so(cli_daemon):
    assert "Do Not Disturb" in ok(island(None, "admin", "focus", "--help")).stdout
    assert island(cli_daemon, "admin", "focus", "maybe").returncode == 2
    assert ok(island(cli_daemon, "admin", "focus", "status")).stdout == "Do Not Disturb: off\n"
    assert json.loads(ok(island(cli_daemon, "admin", "focus", "status", "--json")).stdout) == {"on": False}

    assert ok(island(cli_daemon, "admin", "focus", "on")).stdout.startswith("Do Not Disturb: on since ")
    focus = json.loads(ok(island(cli_daemon, "admin", "focus", "status", "--json")).stdout)
    assert focus["on"] is True and focus["since"] == pytest.approx(time.time(), abs=60)

    id = ok(island(cli_daemon, "start", "T")).stdout.strip()
    reply = json.loads(ok(island(cli_daemon, "update", id, "--state", '{"n":1}', "--alert-title", "Hi", "--json")).stdout)
    assert reply["delivery"]["alerted"] is False
    assert reply["delivery"]["alertSuppressed"] is True and reply["delivery"]["alertSuppressedReason"] == "focus"
    assert reply["activity"]["content"]["state"] == {"n": 1}
    text = ok(island(cli_daemon, "update", id, "--state", '{"n":2}', "--alert-title", "Hi")).stdout
    assert "alert suppressed: Do Not Disturb is on" in text
    assert json.loads(ok(island(cli_daemon, "auth", "--json")).stdout)["remainingAlerts"] == 6

    assert ok(island(cli_daemon, "admin", "focus", "off")).stdout == "Do Not Disturb: off\n"
    reply = json.loads(ok(island(cli_daemon, "update", id, "--state", '{"n":3}', "--alert-title", "Hi", "--json")).stdout)
    assert reply["delivery"]["alerted"] is True and "alertSuppressedReason" not in reply["delivery"]


# --- preview --------------------------------------------------------------------------------

MODES = ("compact", "minimal", "expanded", "lockscreen")
SAMPLE_STATE = json.dumps({"eta": 7, "done": 4, "endsAt": 1_700_000_300})


def test_preview_renders_every_mode_as_text(tmp_path):
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    compact = ok(island(None, "preview", layout, "--attributes", '{"shop":"Blue"}', "--state", SAMPLE_STATE,
                        "--mode", "compact")).stdout
    assert "leading:" in compact and "☕" in compact and "7 min" in compact
    expanded = json.loads(ok(island(None, "preview", layout, "--state", SAMPLE_STATE, "--mode", "expanded",
                                    "--now", "1700000000", "--json")).stdout)
    assert expanded["regions"]["trailing"] == "5:00"
    assert expanded["regions"]["center"] == "Brewing"
    minimal = json.loads(ok(island(None, "preview", layout, "--state", SAMPLE_STATE, "--mode", "minimal", "--json")).stdout)
    assert minimal["regions"]["minimal"] == "40%"
    lock = ok(island(None, "preview", layout, "--attributes", '{"shop":"Blue"}', "--state", SAMPLE_STATE,
                     "--mode", "lockscreen")).stdout
    assert "Blue <order> & co" in lock
    assert island(None, "preview", layout, "--mode", "sideways").returncode == 2


def test_preview_of_an_invalid_layout_prints_path_and_reason(tmp_path):
    result = island(None, "preview", write(tmp_path, "bad.json", INVALID_LAYOUT), "--mode", "compact")
    assert result.returncode == 1
    assert "compactLeading.type:" in result.stderr
    (tmp_path / "broken.json").write_text("{")
    assert island(None, "preview", str(tmp_path / "broken.json")).returncode == 1


@pytest.mark.parametrize("mode", MODES)
def test_preview_svg_is_well_formed_and_renders(tmp_path, mode):
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    svg = tmp_path / ("%s.svg" % mode)
    ok(island(None, "preview", layout, "--attributes", '{"shop":"Blue"}', "--state", SAMPLE_STATE,
              "--mode", mode, "--svg", str(svg)))
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.find("{http://www.w3.org/2000/svg}title").text == "Island: " + {"lockscreen": "none"}.get(mode, mode)
    # The keyline, as cairo writes a stroke's colour (percentages): the overlay's quiet line,
    # mostly white with 10 % of the layout's tint #6f4e37 (OverlayStyle.keyline); not on the
    # lock screen, whose card has none.
    strokes = [tuple(float(p) * 255 / 100 for p in colour)
               for colour in re.findall(r"stroke:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", svg.read_text())]
    keyline = tuple(255 * 0.9 + 0.1 * c for c in (0x6f, 0x4e, 0x37))
    if mode != "lockscreen":
        assert any(max(abs(a - b) for a, b in zip(c, keyline)) < 0.5 for c in strokes), strokes
    assert root.find(".//{http://www.w3.org/2000/svg}text") is None  # glyph outlines, not text
    lines = (root.find("{http://www.w3.org/2000/svg}desc").text or "").split("\n")
    if mode == "lockscreen":
        assert "Blue <order> & co" in lines
    if shutil.which("rsvg-convert"):
        png = tmp_path / ("%s.png" % mode)
        subprocess.run(["rsvg-convert", str(svg), "-o", str(png)], check=True, timeout=30)
        assert png.stat().st_size > 0


def test_preview_svg_without_the_overlay_package_names_it(tmp_path):
    """`island` draws no SVG itself: without island-overlay (its package) beside it, in /usr/bin
    or on PATH, --svg says which package to install and exits with status 69, and writes
    nothing."""
    alone = tmp_path / "bin"
    alone.mkdir()
    shutil.copy(ISLAND, alone / "island")
    layout = write(tmp_path, "layout.json", VALID_LAYOUT)
    result = subprocess.run(without_installed(["/usr/bin/island-overlay"],
                                              [str(alone / "island"), "preview", layout, "--svg", str(tmp_path / "x.svg")]),
                            capture_output=True, text=True, timeout=30, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert result.returncode == 69, result.stderr
    assert "apt install island-overlay" in result.stderr
    assert not (tmp_path / "x.svg").exists()


def test_a_reader_that_is_gone_ends_island_by_sigpipe_and_a_full_disk_is_said(cli_daemon):
    """`island admin status | head -2` crashed with a Swift backtrace once head had gone:
    Foundation's write of standard output traps on EPIPE. A reader that is gone ends island as
    it ends any tool, by SIGPIPE; a standard output that cannot be written otherwise is said,
    exit status 74."""
    ok(island(cli_daemon, "start", "Piped"))
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    reader, writer = os.pipe()
    os.close(reader)
    try:
        gone = subprocess.run([ISLAND, "list"], stdout=writer, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=LIVENESS)
    finally:
        os.close(writer)
    assert gone.returncode == -signal.SIGPIPE and gone.stderr == "", (gone.returncode, gone.stderr)
    with open("/dev/full", "w") as full:
        failed = subprocess.run([ISLAND, "list"], stdout=full, stderr=subprocess.PIPE, text=True, env=env,
                                timeout=LIVENESS)
    assert failed.returncode == 74, (failed.returncode, failed.stderr)
    assert failed.stderr == "island: cannot write standard output: No space left on device\n", failed.stderr


def test_watch_ends_once_its_reader_is_gone_without_waiting_for_an_event(cli_daemon):
    """`island watch | grep -m1 ended` left watch running, connected, until the next event's
    write failed, which may come hours later: it ends by SIGPIPE once its reader is gone. No
    event comes here at all, so only the reader's going can end it."""
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    reader, writer = os.pipe()
    watch = subprocess.Popen([ISLAND, "watch"], stdout=writer, stderr=subprocess.PIPE, env=env)
    os.close(writer)
    os.close(reader)
    try:
        assert watch.wait(timeout=LIVENESS) == -signal.SIGPIPE
        assert watch.stderr.read() == b""
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
