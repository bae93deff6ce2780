"""The Swift example (Examples/swift) runs as a newcomer runs it: its producer, built by the main
package as `island-example-swift` from the example's own source, starts, updates and ends an
activity on a real islandd, which island-presenter then shows; and the example's own manifest, the
one a newcomer copies, resolves its IslandKit dependency."""

import json
import os
import shutil
import subprocess

import pytest

from harness.paths import BIN_DIR, LIVENESS, REPO
from harness.presenters import Presenter, waybar_json

EXAMPLE = os.path.join(REPO, "Examples", "swift")
APP = "org.example.Delivery"


def test_the_swift_example_starts_updates_and_ends_an_activity_a_presenter_shows(unstarted_daemon):
    daemon = unstarted_daemon()
    # The example's own desktop entry, as its README says to install it.
    os.makedirs(os.path.join(daemon.share, "applications"), exist_ok=True)
    shutil.copy(os.path.join(EXAMPLE, APP + ".desktop"), os.path.join(daemon.share, "applications"))
    daemon.start()
    env = dict(os.environ, ISLAND_SOCKET=daemon.socket, DELIVERY_PAUSE="0")
    run = subprocess.run([os.path.join(BIN_DIR, "island-example-swift")], env=env, capture_output=True, text=True,
                         timeout=LIVENESS, stdin=subprocess.DEVNULL)
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


@pytest.mark.skipif(shutil.which("swift") is None, reason="needs the Swift toolchain")
def test_the_example_manifest_a_newcomer_copies_parses(tmp_path):
    # `describe` evaluates the example's manifest and names its product dependency, in about a
    # second and without building; its scratch files go to a temporary directory.
    result = subprocess.run(["swift", "package", "--scratch-path", str(tmp_path), "describe", "--type", "json"],
                            cwd=EXAMPLE, capture_output=True, text=True, timeout=LIVENESS * 4, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    described = json.loads(result.stdout)
    [dependency] = described["dependencies"]
    assert os.path.realpath(dependency["path"]) == os.path.realpath(REPO)
    # The trap the DocC article tells of: a path dependency is known by its folder's name...
    assert dependency["identity"] == os.path.basename(os.path.realpath(REPO)).lower()
    [target] = described["targets"]
    assert target["name"] == "DeliveryExample" and target["type"] == "executable"
    # ...which the example never has to spell: it names the product alone.
    assert target["product_dependencies"] == ["IslandKit"]
