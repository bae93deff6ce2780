"""The Swift example (Examples/swift) runs as a newcomer runs it: its producer starts, updates
and ends an activity on a real islandd, which island-presenter then shows. Twice: built by the
main package as `island-example-swift` from the example's own source (quick), and copied out of
the checkout and built as the package of its own a newcomer copies, its manifest as it is but for
the path its README says to change."""

import json
import os
import shlex
import shutil
import subprocess
import time

import pytest

from harness.paths import BIN_DIR, LIVENESS, REPO
from harness.presenters import Presenter, waybar_json

EXAMPLE = os.path.join(REPO, "Examples", "swift")
APP = "org.example.Delivery"
# Where the copied example builds: in the checkout's .build, beside the main build and apart
# from it, so that only the first run compiles SwiftNIO and the rest of IslandKit's
# dependencies (22 min on 2 cores shared with seven other builds, load 30); a later run
# rebuilds what changed in IslandKit and the example (126 s after a change to IslandKit, on the
# same busy machine).
EXAMPLE_SCRATCH = os.path.join(REPO, ".build", "example-swift")
# A first build of the copied package, on a machine busy with other builds.
BUILD_BOUND = 60 * 60
# The flags the test command built the checkout with (scripts/test.sh: in CI, no DWARF and no
# LLVM verifier), so that the copy costs no more than it must: it compiles SwiftNIO and the rest
# of IslandKit's dependencies anew, a fifth of the command's CPU. No index store either: it
# serves an editor and SwiftPM's test discovery, and this package has neither. And each module
# compiled whole, still unoptimised (-wmo, one thread: SwiftPM links a debug build's object per
# file): a debug build otherwise compiles a module in several batch jobs beside a job that
# emits its interface, each parsing and type-checking the module's declarations again (the copy
# from scratch took 107.7 and 107.8 CPU s, compiled whole 93.2 and 84.8; 2026-12-07). What is
# lost is incremental compilation within a module: a later run here compiles whole again the
# modules that changed.
BUILD_FLAGS = (shlex.split(os.environ.get("ISLAND_SWIFT_BUILD_FLAGS", ""))
               + ["--disable-index-store", "-Xswiftc", "-wmo", "-Xswiftc", "-num-threads", "-Xswiftc", "1"])


def run_the_delivery(unstarted_daemon, executable):
    """Runs the example's producer on a fresh daemon with its desktop entry installed, as its
    README says, and checks what the daemon and a presenter then hold."""
    daemon = unstarted_daemon()
    os.makedirs(os.path.join(daemon.share, "applications"), exist_ok=True)
    shutil.copy(os.path.join(EXAMPLE, APP + ".desktop"), os.path.join(daemon.share, "applications"))
    daemon.start()
    env = dict(os.environ, ISLAND_SOCKET=daemon.socket, DELIVERY_PAUSE="0")
    run = subprocess.run([executable], env=env, capture_output=True, text=True, timeout=LIVENESS,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("started ") and lines[1:] == ["On its way", "At your door", "ended"], run.stdout
    id = lines[0].split()[1]

    with daemon.connect("org.island.Producer") as producer:
        [activity] = producer.List(app=APP)["activities"]
    assert activity["id"] == id
    assert activity["type"] == "Delivery"  # its activityType, not the struct's name
    assert activity["attributes"] == {"orderNumber": 42}
    assert activity["state"] == "ended"
    assert activity["content"]["state"] == {"stage": "Delivered", "progress": 1}

    # Ended with the default dismissal, it stays on the lock-screen list a presenter shows.
    bar = Presenter(daemon, "waybar")
    try:
        tooltip = waybar_json(bar.next_line())["tooltip"]
    finally:
        bar.stop()
    assert "Delivery" in tooltip and "Delivered" in tooltip, tooltip


def test_the_swift_example_starts_updates_and_ends_an_activity_a_presenter_shows(unstarted_daemon):
    run_the_delivery(unstarted_daemon, os.path.join(BIN_DIR, "island-example-swift"))


def test_the_swift_example_says_what_to_do_when_refused(unstarted_daemon):
    # No desktop entry: the refusal's sentence and its suggestion, not a crash and a backtrace.
    daemon = unstarted_daemon()
    daemon.start()
    env = dict(os.environ, ISLAND_SOCKET=daemon.socket, DELIVERY_PAUSE="0")
    run = subprocess.run([os.path.join(BIN_DIR, "island-example-swift")], env=env, capture_output=True, text=True,
                         timeout=LIVENESS, stdin=subprocess.DEVNULL)
    assert run.returncode == 1, run.stderr
    message, suggestion = run.stderr.splitlines()
    assert message.startswith("DeliveryExample: org.example.Delivery may not show Live Activities: "), run.stderr
    assert "org.example.Delivery.desktop" in suggestion and "X-Island-LiveActivities=true" in suggestion, run.stderr


@pytest.mark.skipif(shutil.which("swift") is None, reason="needs the Swift toolchain")
def test_the_example_copied_out_of_the_checkout_builds_and_runs(unstarted_daemon, tmp_path):
    # Copied as its README says: the folder, then the path in Package.swift set to the checkout.
    copy = tmp_path / "DeliveryExample"
    shutil.copytree(EXAMPLE, copy)
    manifest = copy / "Package.swift"
    text = manifest.read_text()
    assert text.count('path: "../.."') == 1, text
    manifest.write_text(text.replace('path: "../.."', "path: " + json.dumps(REPO)))
    # The checkout's own pins, when it has them: resolving then asks no server.
    pins = os.path.join(REPO, "Package.resolved")
    if os.path.exists(pins):
        shutil.copy(pins, copy / "Package.resolved")
    started = time.monotonic()
    build = subprocess.run(["swift", "build", "--scratch-path", EXAMPLE_SCRATCH, "--product", "DeliveryExample"]
                           + BUILD_FLAGS,
                           cwd=copy, capture_output=True, text=True, timeout=BUILD_BOUND, stdin=subprocess.DEVNULL)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    print("the copied example built in %.0f s" % (time.monotonic() - started))
    # A package of its own: built there, not by the checkout's manifest.
    described = json.loads(subprocess.run(
        ["swift", "package", "--scratch-path", EXAMPLE_SCRATCH, "describe", "--type", "json"],
        cwd=copy, capture_output=True, text=True, check=True, timeout=LIVENESS * 4, stdin=subprocess.DEVNULL).stdout)
    assert os.path.realpath(described["path"]) == os.path.realpath(str(copy))
    [dependency] = described["dependencies"]
    assert os.path.realpath(dependency["path"]) == os.path.realpath(REPO)

    run_the_delivery(unstarted_daemon, os.path.join(EXAMPLE_SCRATCH, "debug", "DeliveryExample"))
