"""A bar click acts on what the bar showed, so no app can clickjack another: with the real daemon, a
real `island-presenter waybar` and the real `island-presenter click` a bar's on-click runs, app B
raises its relevance and takes A's place at the head of the bar's line, where a click acts; a click
right after the new line (before it has stood still) acts for neither app, and once it has stood
still the click acts for B, the app shown. (B's alerting update, the other way to take the place,
expands B for only 5 s, shorter than this test's settle time: the unit tests cover it,
ClickGuardPresenterTests.)

Not timing-dependent: the click is started as soon as the presenter has printed B's line, and
the presenter runs with ISLAND_PRESENTER_CLICK_SETTLE (a test-only, longer settle time) of a
third of the liveness bound, so even a loaded machine starts the click inside it; the test
checks that it did, against the presenter's record (on CLOCK_BOOTTIME, harness boot_clock).
"Stood still" is observed the same way, never slept for."""

import json
import os
import signal
import subprocess

from harness.paths import LIVENESS, PRESENTER
from harness.presenters import (
    COFFEE,
    Presenter,
    bar_shown,
    bar_shown_paths,
    bar_shown_prefix,
    boot_clock,
    register_layout,
    request,
    wait_until_clickable,
    waybar_json,
)
from harness.processes import wait_for
from harness.varlink import Connection

TIMER = "org.example.Timer"
SETTLE = LIVENESS / 3


def layout(url, template):
    return {"url": url, "compactLeading": {"type": "symbol", "name": "☕"},
            "compactTrailing": {"type": "text", "template": template},
            "minimal": {"type": "text", "template": template}}


def stopped(pid):
    with open("/proc/%d/stat" % pid) as f:
        stat = f.read()
    return stat[stat.rindex(")") + 2:].split()[0] == "T"


def island(daemon):
    with daemon.connect("org.island.Presenter") as presenter:
        for reply in presenter.Subscribe(_more=True):
            return reply["update"]["island"]


def two_apps_and_an_opener(daemon, tmp_path):
    """A's and B's layouts (each with a URL of its own), and the environment of a bar and its
    clicks: a runtime directory for the bar's records, the test's settle time, and an
    `xdg-open` that writes each URL it is given to the file returned beside it."""
    register_layout(daemon, COFFEE, "Order", layout("https://a.example/order", "A {{state.stage}}"))
    register_layout(daemon, TIMER, "Order", layout("https://b.example/pay", "B {{state.stage}}"))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    opened = tmp_path / "opened"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xdg-open").write_text('#!/bin/sh\necho "$1" >> %s\n' % opened)
    (bin_dir / "xdg-open").chmod(0o755)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), ISLAND_PRESENTER_CLICK_SETTLE=str(SETTLE),
               PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "")))
    return env, opened


def test_a_bar_click_right_after_another_apps_update_acts_for_neither_then_for_the_app_shown(daemon, tmp_path):
    env, opened = two_apps_and_an_opener(daemon, tmp_path)

    def click(action):
        return subprocess.run([PRESENTER, "click", action, "--socket", daemon.socket], env=env,
                              capture_output=True, text=True, timeout=LIVENESS)

    bar = Presenter(daemon, "waybar", env=env)
    try:
        # One connection per app: a producer's connection acts for one app.
        with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as producer:
            a = request(coffee, COFFEE, {"stage": "latte"}, relevance=1.0)
            b = request(producer, TIMER, {"stage": "ok"}, relevance=0.0)
            # Minimal: A attached (what a click acts on), B the detached bubble.
            bar.next_line(lambda l: waybar_json(l)["text"] == "☕ A latte · ☕ B ok")
            wait_until_clickable(daemon.socket, env["XDG_RUNTIME_DIR"], activity=a["id"])
            assert island(daemon)["attached"] == a["id"]

            # B's update takes A's place (what a click acts on) 0-SETTLE s before the click.
            producer.Update(app=TIMER, id=b["id"], content={"state": {"stage": "pay now"}, "relevanceScore": 2.0})
            bar.next_line(lambda l: waybar_json(l)["text"] == "☕ B pay now · ☕ A latte")
            # The bar records what it shows once the line is out: a click in between is judged
            # by A's record (and refused as "the island changed since the bar drew it"). These
            # are judged by B's.
            record = wait_for(lambda: (lambda r: r if r and r["id"] == b["id"] else None)(bar_shown(daemon.socket, env["XDG_RUNTIME_DIR"])),
                              message="B's record")
            started = boot_clock()
            tap, toggle = click("tap"), click("toggle")
            assert started < min(record["actionableAt"].values()), \
                "the clicks started after the settle time (%ss): the machine is too slow for this test" % SETTLE
            for result in (tap, toggle):
                assert result.returncode == 1, (result.stdout, result.stderr)
                assert "changed just now" in result.stderr, result.stderr
                assert result.stdout == ""
            # Neither A's URL nor B's opened, and the island is as B's update left it.
            assert not opened.exists(), opened.read_text()
            now = island(daemon)
            assert now["mode"] == "minimal" and now["attached"] == b["id"] and now.get("expanded") is None, now

            # Once B's line has stood still, the click acts for B, the app shown.
            wait_until_clickable(daemon.socket, env["XDG_RUNTIME_DIR"], activity=b["id"])
            tap = click("tap")
            assert tap.returncode == 0, tap.stderr
            assert tap.stdout == "https://b.example/pay\n"
            wait_for(lambda: opened.exists() and opened.read_text() == "https://b.example/pay\n", message="xdg-open ran for B")
            toggle = click("toggle")
            assert toggle.returncode == 0, toggle.stderr
            wait_for(lambda: island(daemon).get("expanded") == b["id"], message="B expanded by the click")
    finally:
        bar.stop()


def test_a_click_acts_on_the_line_shown_not_on_what_the_daemon_has_now(daemon, tmp_path):
    """The record names another activity but the daemon's island has A (the bar has not drawn
    it yet): nothing happens. A record left by a bar presenter that has exited is removed."""
    register_layout(daemon, COFFEE, "Order", layout("https://a.example/order", "A {{state.stage}}"))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    bar = Presenter(daemon, "eww", env=env)
    try:
        with daemon.connect("org.island.Producer") as producer:
            a = request(producer, COFFEE, {"stage": "latte"})
            bar.next_line(lambda l: l == "☕ A latte")
            record = wait_until_clickable(daemon.socket, env["XDG_RUNTIME_DIR"], activity=a["id"])
            # What a bar that showed another activity, long settled, would have recorded.
            forged = dict(record, id="another-activity", actionableAt={k: 0.0 for k in record["actionableAt"]})
            bar.stop()  # it would rewrite its record on its next line
            [path] = bar_shown_paths(daemon.socket, env["XDG_RUNTIME_DIR"])
            # A record is named by its bar's process: the forged one stands for a bar that runs
            # (this test's process), the stopped bar's own left where it was.
            living = os.path.join(os.path.dirname(path), bar_shown_prefix(daemon.socket) + "%d.json" % os.getpid())
            with open(living, "w") as f:
                json.dump(dict(forged, pid=os.getpid()), f)
            result = subprocess.run([PRESENTER, "click", "tap", "--socket", daemon.socket], env=env,
                                    capture_output=True, text=True, timeout=LIVENESS)
            assert result.returncode == 1 and "the island changed since the bar drew it" in result.stderr, result.stderr
            assert island(daemon)["mode"] == "compact"
            # The record of a bar presenter that has exited counts for nothing, and goes: with no
            # bar running (a key binding alone), the click acts on the island as the daemon has it.
            os.remove(living)
            with open(path, "w") as f:
                json.dump(dict(forged, pid=bar.process.pid), f)
            result = subprocess.run([PRESENTER, "click", "toggle", "--socket", daemon.socket], env=env,
                                    capture_output=True, text=True, timeout=LIVENESS)
            assert result.returncode == 0, result.stderr
            assert bar_shown_paths(daemon.socket, env["XDG_RUNTIME_DIR"]) == []
            wait_for(lambda: island(daemon)["mode"] == "expanded", message="expanded by the click")
    finally:
        bar.stop()


def test_a_click_is_judged_at_its_start_not_when_a_slow_machine_gets_to_it(daemon, tmp_path):
    """The bar starts `island-presenter click` right after B took A's place, and the machine is
    slow to run it: by the time it decides, B has stood still for longer than the settle time.
    The click still acts for neither, as of when it was started. The slowness is made, not
    hoped for: the click's process is a shell that stops itself before it execs the click (the
    process keeps the shell's pid and start time), and is let go once the presenter's record
    says B has settled."""
    env, opened = two_apps_and_an_opener(daemon, tmp_path)
    bar = Presenter(daemon, "eww", env=env)
    click = None
    try:
        with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as producer:
            request(coffee, COFFEE, {"stage": "latte"}, relevance=1.0)
            b = request(producer, TIMER, {"stage": "ok"}, relevance=0.0)
            bar.next_line(lambda l: l == "☕ A latte · ☕ B ok")
            producer.Update(app=TIMER, id=b["id"], content={"state": {"stage": "pay now"}, "relevanceScore": 2.0})
            bar.next_line(lambda l: l == "☕ B pay now · ☕ A latte")
            started = boot_clock()
            click = subprocess.Popen(["/bin/sh", "-c", 'kill -STOP $$; exec "$0" click tap --socket "$1"', PRESENTER, daemon.socket],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # The record follows the line it is about.
            record = wait_for(lambda: (lambda r: r if r and r["id"] == b["id"] else None)(bar_shown(daemon.socket, env["XDG_RUNTIME_DIR"])),
                              message="B's record")
            assert started < min(record["actionableAt"].values()), \
                "the click started after the settle time (%ss): the machine is too slow for this test" % SETTLE
            wait_until_clickable(daemon.socket, env["XDG_RUNTIME_DIR"], activity=b["id"])
            wait_for(lambda: stopped(click.pid), message="the click's process stopped before its exec")
            os.kill(click.pid, signal.SIGCONT)
            out, err = click.communicate(timeout=LIVENESS)
            assert click.returncode == 1 and "changed just now" in err, (out, err)
            assert out == "" and not opened.exists()
    finally:
        if click and click.poll() is None:
            os.kill(click.pid, signal.SIGKILL)
            click.wait(timeout=10)
        bar.stop()


def test_a_bar_presenter_takes_its_record_away_when_it_stops(daemon, tmp_path):
    register_layout(daemon, COFFEE, "Order", layout("https://a.example/order", "A {{state.stage}}"))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    bar = Presenter(daemon, "polybar", env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    try:
        with daemon.connect("org.island.Producer") as coffee:
            a = request(coffee, COFFEE, {"stage": "latte"})
            bar.next_line(lambda l: l == "☕ A latte")
            wait_for(lambda: (lambda r: r and r["id"] == a["id"])(bar_shown(daemon.socket, str(runtime))), message="the record")
            bar.process.send_signal(signal.SIGTERM)
            assert bar.process.wait(timeout=LIVENESS) == 128 + signal.SIGTERM
            assert bar_shown_paths(daemon.socket, str(runtime)) == []
    finally:
        bar.stop()


def test_click_button_presses_a_button_the_island_has_and_names_the_ones_it_has(daemon, tmp_path):
    """`island-presenter click button ACTION`, as a key binding runs it (no bar presenter, so it
    acts on the island as the daemon has it): the app's Watch gets the press; an action the layout
    does not have is refused before anything is sent, naming the ones it has; and an ended
    activity's buttons are pressed no more."""
    register_layout(daemon, COFFEE, "Order", {
        "compactLeading": {"type": "symbol", "name": "☕"},
        "compactTrailing": {"type": "text", "template": "{{state.stage}}"},
        "expanded": {"center": {"type": "text", "template": "Order", "priority": 1},
                     "bottom": {"type": "hstack", "priority": 0, "children": [
                         {"type": "button", "action": "pause", "label": "Pause"},
                         {"type": "button", "action": "cancel", "label": "Cancel"}]}}})
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))

    def click(*args):
        return subprocess.run([PRESENTER, "click", *args, "--socket", daemon.socket], env=env,
                              capture_output=True, text=True, timeout=LIVENESS)

    def event(predicate):
        return watch.read_until(lambda m: predicate(m["parameters"]["event"]))["parameters"]["event"]

    assert click("button").returncode == 64  # usage: the action is needed
    watch = Connection(daemon.socket)
    try:
        with daemon.connect("org.island.Producer") as producer:
            a = request(producer, COFFEE, {"stage": "brewing"})
            watch.call("org.island.Producer.Watch", {"app": COFFEE, "ids": [a["id"]]}, more=True)
            event(lambda e: e["kind"] == "watching")
            missing = click("button", "refund")
            assert missing.returncode == 1
            assert "no button refund" in missing.stderr and "pause, cancel" in missing.stderr, missing.stderr
            pressed = click("button", "cancel")
            assert pressed.returncode == 0, pressed.stderr
            # The first button event is the press of cancel: the refused one sent nothing.
            assert event(lambda e: e["kind"] == "button")["action"] == "cancel"

            producer.End(app=COFFEE, id=a["id"])
            event(lambda e: e["kind"] == "state" and e["activity"]["state"] == "ended")
            after = click("button", "cancel")
            assert after.returncode == 1 and ("has ended" in after.stderr or "shows nothing" in after.stderr), after.stderr
    finally:
        watch.close()


def test_click_button_with_an_id_presses_that_activitys_button_only_and_refuses_by_name(daemon, tmp_path):
    """`click button ACTION --id ID`: the activity named, not the island's, gets the press; one
    that does not draw the button is refused before anything is sent, named by its app, its
    title and its id; --id goes with `button` only."""
    register_layout(daemon, COFFEE, "Order", {
        "compactLeading": {"type": "symbol", "name": "☕"},
        "lockScreen": {"type": "text", "template": "Coffee for {{state.who}}"},
        "expanded": {"center": {"type": "text", "template": "Order", "priority": 1},
                     "bottom": {"type": "button", "action": "cancel", "label": "Cancel", "priority": 0}}})
    register_layout(daemon, TIMER, "Tea", {
        "compactLeading": {"type": "symbol", "name": "🍵"},
        "lockScreen": {"type": "vstack", "children": [
            {"type": "text", "template": "Tea for {{state.who}}"},
            {"type": "button", "action": "stop", "label": "Stop"}]}})
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))

    def click(*args):
        return subprocess.run([PRESENTER, "click", *args, "--socket", daemon.socket], env=env,
                              capture_output=True, text=True, timeout=LIVENESS)

    coffee_watch, tea_watch = Connection(daemon.socket), Connection(daemon.socket)
    try:
        with daemon.connect("org.island.Producer") as coffee_producer, daemon.connect("org.island.Producer") as tea_producer:
            coffee = request(coffee_producer, COFFEE, {"who": "Ada"}, relevance=50)
            tea = request(tea_producer, TIMER, {"who": "Bob"}, type="Tea")
            for watch, app, activity in ((coffee_watch, COFFEE, coffee), (tea_watch, TIMER, tea)):
                watch.call("org.island.Producer.Watch", {"app": app, "ids": [activity["id"]]}, more=True)
                watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "watching")
            assert click("tap", "--id", tea["id"]).returncode == 64  # usage: --id goes with button

            # The island shows the coffee, which has cancel; the tea named has not.
            refused = click("button", "cancel", "--id", tea["id"])
            assert refused.returncode == 1, refused.stderr
            assert 'org.example.Timer\'s "Tea for Bob" (id %s) has no button cancel; its buttons: stop' % tea["id"] \
                in refused.stderr, refused.stderr
            unknown = click("button", "stop", "--id", "f00f")
            assert unknown.returncode == 1 and "no activity f00f" in unknown.stderr, unknown.stderr
            # Without --id a refusal names the island's activity the same way.
            island = click("button", "stop")
            assert island.returncode == 1, island.stderr
            assert 'org.example.Coffee\'s "Coffee for Ada" (id %s) has no button stop' % coffee["id"] in island.stderr, island.stderr

            pressed = click("button", "stop", "--id", tea["id"])
            assert pressed.returncode == 0, pressed.stderr
            event = tea_watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "button")["parameters"]["event"]
            assert event["action"] == "stop" and event["activity"]["id"] == tea["id"]
            # The refused cancel sent nothing: the coffee's first button event is this press.
            assert click("button", "cancel", "--id", coffee["id"]).returncode == 0
            event = coffee_watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "button")["parameters"]["event"]
            assert event["action"] == "cancel" and event["activity"]["id"] == coffee["id"]
    finally:
        coffee_watch.close()
        tea_watch.close()


def test_a_click_reads_no_record_that_is_no_small_regular_file(daemon, tmp_path):
    """Any program of the user's can write the runtime directory, and can name a file as a bar's
    record is named: a file of gigabytes (read whole before: 4 GiB resident for one click), a
    FIFO, a link to /dev/zero, a link loop, a folder. The click reads none of them and acts on
    the island as the daemon has it, within LIVENESS, holding what a small process holds."""
    register_layout(daemon, COFFEE, "Order", layout("https://a.example/order", "A {{state.stage}}"))
    runtime = tmp_path / "run"
    records = runtime / "island-presenter"
    records.mkdir(mode=0o700, parents=True)
    prefix = str(records / bar_shown_prefix(daemon.socket))
    # pid 1 runs: a record of a running bar, were it one.
    with open(prefix + "1.json", "wb") as f:
        f.truncate(2 << 30)
    os.mkfifo(prefix + "2.json")
    os.symlink("/dev/zero", prefix + "3.json")
    os.symlink(prefix + "4.json", prefix + "4.json")
    os.mkdir(prefix + "5.json")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    with daemon.connect("org.island.Producer") as producer:
        request(producer, COFFEE, {"stage": "latte"})
        click = subprocess.Popen([PRESENTER, "click", "toggle", "--socket", daemon.socket], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # Reaped here, not by Popen, for its resource usage.
            _, status, usage = wait_for(lambda: [r for r in [os.wait4(click.pid, os.WNOHANG)] if r[0]],
                                        message="the click's end")[0]
        finally:
            if click.returncode is None and os.path.exists("/proc/%d" % click.pid):
                os.kill(click.pid, signal.SIGKILL)
        assert os.waitstatus_to_exitcode(status) == 0
        assert usage.ru_maxrss < 512 * 1024, "the click held %d MiB" % (usage.ru_maxrss // 1024)
        wait_for(lambda: island(daemon)["mode"] == "expanded", message="expanded by the click")


def test_records_named_by_processes_that_are_gone_are_removed_unread(daemon, tmp_path):
    """A record is named by its bar's process. A flood of files named like records, by processes
    that cannot run (past pid_max) and holding anything, is removed at the first click without
    being read: before, each was read at every click (100,000 of them: 5 s a click) and, not
    being a record, stayed. The click still acts on the island."""
    register_layout(daemon, COFFEE, "Order", layout("https://a.example/order", "A {{state.stage}}"))
    runtime = tmp_path / "run"
    records = runtime / "island-presenter"
    records.mkdir(mode=0o700, parents=True)
    prefix = str(records / bar_shown_prefix(daemon.socket))
    with open("/proc/sys/kernel/pid_max") as f:
        gone = int(f.read()) + 1
    forged = [prefix + "%d.json" % (gone + index) for index in range(2000)]
    for path in forged:
        with open(path, "w") as f:
            f.write("not a record")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    with daemon.connect("org.island.Producer") as producer:
        request(producer, COFFEE, {"stage": "latte"})
        subprocess.run([PRESENTER, "click", "toggle", "--socket", daemon.socket], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=LIVENESS)
        wait_for(lambda: island(daemon)["mode"] == "expanded", message="expanded by the click")
    assert [path for path in forged if os.path.exists(path)] == []


def test_a_refused_click_says_the_daemons_reason_in_words(daemon, tmp_path):
    """While the session is locked nothing acts: `click dismiss` and `click tap` exit 1 saying
    why as a sentence (the refusal's name and reason), not the refusal's JSON."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    with daemon.connect("org.island.Producer") as coffee:
        request(coffee, COFFEE, {"stage": "latte"}, relevance=1.0)
        with daemon.connect("org.island.Admin") as admin:
            admin.SetLock(on=True)
        for action in ("dismiss", "tap"):
            result = subprocess.run([PRESENTER, "click", action, "--socket", daemon.socket], env=env,
                                    capture_output=True, text=True, timeout=LIVENESS)
            assert result.returncode == 1, (action, result.stderr)
            assert "%s failed: PermissionDenied: the session is locked" % action in result.stderr, result.stderr
            assert "{" not in result.stderr, result.stderr
