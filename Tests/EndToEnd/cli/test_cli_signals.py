"""`island run` passes SIGTERM on to its command, and scripts/demo.sh plays its story."""

import os
import shlex
import signal
import subprocess

from harness.cli import activities
from harness.paths import ISLAND, LIVENESS, REPO
from harness.processes import children_of, wait_for


def test_sigterm_reaches_the_command_and_the_activity_ends_failed(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    run = subprocess.Popen([ISLAND, "run", "--title", "long", "--", "sleep", "30"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: any(a["state"] == "active" for a in activities(cli_daemon)))
        wait_for(lambda: children_of(run.pid))
        sleeper = children_of(run.pid)[0]
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=LIVENESS) == 128 + signal.SIGTERM
        assert not os.path.exists("/proc/%d" % sleeper) or open("/proc/%d/stat" % sleeper).read().split()[2] == "Z"
        ended = [a for a in activities(cli_daemon, "--state", "ended") if a["type"] == "Command"]
        assert ended and ended[0]["content"]["state"]["status"] == "failed"
        assert ended[0]["content"]["state"]["exitStatus"] == 128 + signal.SIGTERM
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


def test_sigterm_reaches_the_command_island_progress_runs(cli_daemon):
    """`island progress -- CMD` passes SIGTERM on as `island run` does, and says so."""
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    progress = subprocess.Popen([ISLAND, "progress", "--title", "long", "--", "sh", "-c", "echo 10%; exec sleep 30"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # The command has started: the 10% is its own.
        wait_for(lambda: any(a["content"]["state"]["value"] == 10 for a in activities(cli_daemon)), message="10%")
        progress.send_signal(signal.SIGTERM)
        assert progress.wait(timeout=LIVENESS) == 128 + signal.SIGTERM
        [ended] = activities(cli_daemon, "--state", "ended")
        assert ended["content"]["state"] == {"value": 10, "total": 100, "status": "failed", "outcome": "Killed by SIGTERM"}
    finally:
        if progress.poll() is None:
            progress.kill()
            progress.wait()


def test_the_demo_script_plays_its_story(unstarted_daemon):
    daemon = unstarted_daemon()
    daemon.start()
    env = dict(os.environ, XDG_DATA_HOME=daemon.share, XDG_DATA_DIRS=os.path.join(daemon.root, "none"))
    result = subprocess.run(["bash", os.path.join(REPO, "scripts", "demo.sh"), "--socket", daemon.socket, "--step", "0"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with daemon.connect("org.island.Producer") as p:
        flights = p.List(app="org.island.example.Flights")["activities"]
    assert flights and flights[0]["content"]["state"]["status"] == "inFlight"
    with daemon.connect("org.island.Producer") as p:
        coffee = p.List(app="org.island.example.Coffee")["activities"]
    assert coffee[0]["state"] == "ended" and coffee[0]["content"]["state"]["stage"] == "delivered"
    # The example layouts were installed with the manifests and serve the activities.
    from harness.varlink import subscribe_presenter
    stream, snapshot = subscribe_presenter(daemon)
    stream.close()
    items = snapshot["items"]
    assert {item["app"] for item in items if not item["defaultLayout"]} >= {
        "org.island.example.Coffee", "org.island.example.Flights", "org.island.example.Pomodoro"}
    # The five example apps and nothing else: a user's copy of the CLI's, the bridge's or the
    # overlay's packaged entry, or of the bridge's layouts, would hide the package's own.
    examples = {"org.island.example.%s" % name for name in ("Coffee", "Fasting", "Flights", "FoodDelivery", "Pomodoro")}
    assert set(os.listdir(os.path.join(daemon.share, "island", "layouts"))) == examples
    installed = {name[:-len(".desktop")] for name in os.listdir(os.path.join(daemon.share, "applications"))}
    assert examples <= installed, installed
    assert not installed & {"org.island.cli", "org.island.bridge", "org.island.overlay"}, installed
    # The commands it prints to end what keeps running work as printed: each names its app
    # (`island end ID` alone acts for org.island.cli and was refused with NoSuchActivity).
    commands = [shlex.split(line) for line in result.stderr.splitlines() if line.startswith("  island end ")]
    assert len(commands) == 3, result.stderr
    for command in commands:
        ended = subprocess.run([ISLAND, *command[1:]], capture_output=True, text=True, timeout=60)
        assert ended.returncode == 0, (command, ended.stderr)
    for app in ("Flights", "Fasting", "Pomodoro"):
        with daemon.connect("org.island.Producer") as p:
            [activity] = p.List(app="org.island.example." + app)["activities"]
        assert activity["state"] == "ended", activity


def test_run_help_is_help_not_a_command():
    result = subprocess.run([ISLAND, "run", "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "USAGE: island run" in result.stdout, result
