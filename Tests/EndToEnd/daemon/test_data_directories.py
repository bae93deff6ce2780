"""What islandd reads from the data directories, which other programs write too (any program
of the user's, a Flatpak with `xdg-data` access): desktop entries in applications/ and layouts
in island/layouts/. Nothing put there may stall the daemon, a flood there may not keep it busy,
the watches come back when they could not be placed, and what is installed while it runs is
known at once."""

import os
import shutil
import subprocess
import threading
import time

import pytest

from harness.cli import island, ok
from harness.daemon import write_entry
from harness.paths import LIVENESS
from harness.processes import wait_for
from harness.varlink import Connection, subscribe_presenter

COFFEE = "org.example.Coffee"
LAYOUT = '{"chip": "Coffee", "compactTrailing": {"type": "text", "template": "{{state.minutes}} min"}}'


def fill_with_junk(folder, suffix):
    """Everything but a regular file of a sane size, named like one the daemon reads."""
    os.makedirs(folder, exist_ok=True)
    fifo = os.path.join(folder, "fifo" + suffix)
    os.mkfifo(fifo)
    os.symlink(fifo, os.path.join(folder, "linked-fifo" + suffix))
    # A device that never ends, and one that may block.
    os.symlink("/dev/zero", os.path.join(folder, "zero" + suffix))
    os.symlink("/dev/tty", os.path.join(folder, "tty" + suffix))
    os.mkdir(os.path.join(folder, "folder" + suffix))
    with open(os.path.join(folder, "huge" + suffix), "wb") as f:
        f.truncate(1 << 40)  # sparse: a terabyte that takes no room


def fill_data_directory(share):
    fill_with_junk(os.path.join(share, "applications"), ".desktop")
    fill_with_junk(os.path.join(share, "island", "layouts", COFFEE), ".json")
    os.mkfifo(os.path.join(share, "island", "layouts", "org.example.Fifo"))


def ask(daemon, method, parameters=None):
    """One call on a connection of its own, answered within LIVENESS (or the test fails)."""
    connection = Connection(daemon.socket)
    try:
        reply = connection.ask(method, parameters)
    finally:
        connection.close()
    assert "error" not in reply, reply
    return reply["parameters"]


def answers_every_admin_call(daemon):
    """Reload twice at once (two calls blocked in the past stopped the whole daemon), and the
    calls that queued behind them, each on its own connection."""
    replies = {}

    def call(name, method, parameters=None):
        replies[name] = ask(daemon, method, parameters)

    calls = [("reload 1", "org.island.Admin.Reload", None), ("reload 2", "org.island.Admin.Reload", None),
             ("sharing on", "org.island.Admin.SetSharing", {"on": True}),
             ("sharing", "org.island.Admin.GetSharing", None), ("focus", "org.island.Admin.SetFocus", {"on": False}),
             ("enable", "org.island.Admin.SetEnabled", {"enabled": True}), ("apps", "org.island.Admin.ListApps", None)]
    threads = [threading.Thread(target=call, args=c, daemon=True) for c in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LIVENESS)
    assert sorted(replies) == sorted(name for name, _, _ in calls), "unanswered: %s" % (
        set(name for name, _, _ in calls) - set(replies))
    assert ask(daemon, "org.island.Admin.SetSharing", {"on": False})["sharing"]["on"] is False
    return replies


def start_activity(daemon, app):
    return ask(daemon, "org.island.Producer.Request",
               {"app": app, "type": "Late", "attributes": {}, "content": {"state": {"minutes": 1}}})["activity"]


def test_what_is_no_regular_file_never_stalls_the_daemon(daemon):
    fill_data_directory(daemon.share)
    # The live pickup reads the folder (and, before, blocked in open() for ever).
    wait_for(lambda: "reloaded the manifests and layouts" in daemon.log(), message="the pickup after the junk arrived")
    replies = answers_every_admin_call(daemon)
    assert [s["path"] for s in replies["reload 1"]["skippedLayouts"]] == [
        os.path.join(daemon.share, "island", "layouts", COFFEE, name)
        for name in ("fifo.json", "folder.json", "huge.json", "linked-fifo.json", "tty.json", "zero.json")]
    assert {s["reason"] for s in replies["reload 1"]["skippedLayouts"]} == {
        "not a regular file", "larger than 262144 bytes"}

    # An app installed afterwards is entitled.
    write_entry(daemon.share, "org.example.Late")
    assert start_activity(daemon, "org.example.Late")["app"] == "org.example.Late"
    refused = island(daemon, "start", "X", "--app", "fifo")
    assert "its desktop entry %s is not a regular file" % os.path.join(daemon.share, "applications", "fifo.desktop") \
        in refused.stderr, refused.stderr


def test_a_layout_whose_name_is_not_utf8_is_skipped_as_such(daemon):
    """Its name was listed with U+FFFD in place of its bytes, so the file was skipped as
    "No such file or directory", though it is there."""
    folder = os.path.join(daemon.share, "island", "layouts", COFFEE)
    os.makedirs(folder)
    with open(os.fsencode(folder) + b"/Late\xff.json", "w") as f:
        f.write(LAYOUT)
    replies = answers_every_admin_call(daemon)
    assert replies["reload 1"]["skippedLayouts"] == [
        {"path": os.path.join(folder, "Late\ufffd.json"), "reason": "the file name is not UTF-8; rename the file"}]


def test_a_daemon_starts_beside_what_is_no_regular_file(make_daemon):
    daemon = make_daemon(start=False)
    fill_data_directory(daemon.share)
    daemon.start()
    answers_every_admin_call(daemon)
    assert start_activity(daemon, COFFEE)["app"] == COFFEE


def test_an_entry_written_just_before_the_start_is_not_refused(daemon):
    # A connection open already, the entry written, the call at once: before the watch's
    # rescan, which waits for the burst of changes to end.
    connection = Connection(daemon.socket)
    try:
        write_entry(daemon.share, "org.example.Late")
        reply = connection.ask("org.island.Producer.Request", {
            "app": "org.example.Late", "type": "Late", "attributes": {}, "content": {"state": {"minutes": 1}}})
    finally:
        connection.close()
    assert "error" not in reply, reply
    # And through the CLI, as a developer would.
    write_entry(daemon.share, "org.example.Later")
    ok(island(daemon, "start", "Later", "--app", "org.example.Later"))


def coffee_item(daemon):
    stream, snapshot = subscribe_presenter(daemon)
    stream.close()
    return next(item for item in snapshot["items"] if item["app"] == COFFEE)


def test_layouts_installed_while_the_daemon_runs_are_read_and_broken_ones_named(daemon):
    start_activity(daemon, COFFEE)
    assert coffee_item(daemon)["defaultLayout"] is True
    # The app's layout folder does not exist yet: it is waited for.
    folder = os.path.join(daemon.share, "island", "layouts", COFFEE)
    os.makedirs(folder)
    with open(os.path.join(folder, "Late.json"), "w") as f:
        f.write(LAYOUT)
    wait_for(lambda: coffee_item(daemon)["defaultLayout"] is False, message="the installed layout read without a reload")

    with open(os.path.join(folder, "Broken.json"), "w") as f:
        f.write("{not json")
    result = ok(island(daemon, "admin", "reload"))
    assert "island: warning: skipped the installed layout %s: " % os.path.join(folder, "Broken.json") in result.stderr, \
        result.stderr


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_flood_in_the_applications_folder_costs_little_and_hides_no_app(daemon):
    applications = os.path.join(daemon.share, "applications")
    stop = threading.Event()
    created = [0]

    def flood():
        entry = "[Desktop Entry]\nName=Flood\nExec=/usr/bin/false\n"
        while not stop.is_set():
            for n in range(64):
                path = os.path.join(applications, "org.example.Flood%d.desktop" % n)
                with open(path, "w") as f:
                    f.write(entry)
                os.unlink(path)
            created[0] += 64

    flooder = threading.Thread(target=flood, daemon=True)
    before, started = cpu_seconds(daemon.process.pid), time.monotonic()
    flooder.start()
    try:
        # Installed during the flood (seen under way: ten bursts), and entitled at once.
        wait_for(lambda: created[0] >= 640, message="the flood under way")
        write_entry(daemon.share, "org.example.Late")
        assert start_activity(daemon, "org.example.Late")["app"] == "org.example.Late"
        # Three seconds more of it at least (real time, what the CPU is measured over), and over
        # 1,000 files in all: waited for, as many as a loaded machine lets the flood write.
        time.sleep(3)
        wait_for(lambda: created[0] > 1000, message="1,000 files of flood")
    finally:
        stop.set()
        flooder.join(LIVENESS)
    used, elapsed = cpu_seconds(daemon.process.pid) - before, time.monotonic() - started
    # The flood is read ten times a second, its events drained unparsed once one calls for a
    # rescan, and rescanned at most once a second: about 1 % of a CPU here, whatever the
    # flood's rate (unbounded, it took 95 %; 19 % of this slower flood on a loaded machine).
    assert used < 0.05 * elapsed, "islandd used %.2f s of CPU in %.2f s of flood (%d files)" % (used, elapsed, created[0])
    # The last burst is rescanned once it is over.
    ask(daemon, "org.island.Admin.ListApps")


def user_namespaces_work():
    return shutil.which("unshare") and shutil.which("nsenter") and subprocess.run(
        ["unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not user_namespaces_work(), reason="needs unshare and nsenter, and user namespaces")
def test_watches_that_could_not_be_placed_are_placed_once_they_can(make_daemon):
    daemon = make_daemon(start=False)
    # islandd in a user namespace of its own whose inotify watches are all taken (its limit is
    # 0); everything else on the machine keeps its own.
    daemon.prefix = ["unshare", "--user", "--map-root-user", "sh", "-c",
                     'echo 0 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"']
    daemon.start()
    wait_for(lambda: "cannot watch every data directory" in daemon.log(), message="the warning")

    subprocess.run(["nsenter", "--target", str(daemon.process.pid), "--user", "sh", "-c",
                    "echo 1024 > /proc/sys/user/max_inotify_watches"], check=True, timeout=LIVENESS)
    wait_for(lambda: "watching every data directory again" in daemon.log(), message="the watches placed again")
    # What changed while nothing was watched is rescanned once the watches are back.
    wait_for(lambda: "reloaded the manifests and layouts" in daemon.log(), message="the rescan after the watches came back")
    write_entry(daemon.share, "org.example.Late")
    # Picked up by the watch, not by a refusal's second look: nobody asks.
    wait_for(lambda: daemon.log().count("reloaded the manifests and layouts") >= 2, message="the new entry picked up")
