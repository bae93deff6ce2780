"""The producer examples of Examples/ run as a newcomer runs them: the desktop entry beside each
installed in the data directory islandd reads, the socket found from $XDG_RUNTIME_DIR alone,
and island-presenter showing the activity. Each starts an activity, updates it twice and ends
it; the shell script's trap and the raw clients' ownerGone "end" are checked by killing them.
One islandd for the module; the examples run with STEP_SECONDS=0 (no pretend work)."""

import glob
import os
import shutil
import signal
import subprocess

import pytest

from harness.daemon import Daemons
from harness.paths import BIN_DIR, LIVENESS, REPO
from harness.presenters import Presenter
from harness.processes import wait_for

EXAMPLES = os.path.join(REPO, "Examples")
FINAL = {"stage": "done", "percent": 100}


@pytest.fixture(scope="module")
def daemon():
    """islandd serving its user socket in a runtime directory of its own (as pam_systemd makes
    one, 0700), with the examples' desktop entries installed as their READMEs say."""
    daemons = Daemons()
    d = daemons.make(start=False)
    d.runtime = os.path.join(d.root, "run")
    os.makedirs(os.path.join(d.runtime, "island"), mode=0o700)
    os.chmod(d.runtime, 0o700)
    d.socket = os.path.join(d.runtime, "island", "islandd.sock")
    # A newcomer has the examples' entries and no others (not the harness's test apps).
    for entry in glob.glob(os.path.join(d.share, "applications", "*.desktop")):
        os.remove(entry)
    for entry in glob.glob(os.path.join(EXAMPLES, "*", "*.desktop")):
        shutil.copy(entry, os.path.join(d.share, "applications"))
    d.start()
    yield d
    daemons.close()


def environment(daemon, step_seconds=0):
    """A user's environment: no $ISLAND_SOCKET, the runtime directory, `island` on PATH."""
    env = {k: v for k, v in os.environ.items() if k != "ISLAND_SOCKET"}
    env.update(XDG_RUNTIME_DIR=daemon.runtime, STEP_SECONDS=str(step_seconds),
               PATH=BIN_DIR + os.pathsep + os.environ.get("PATH", ""))
    return env


def program(example, tmp_path):
    """The command that runs an example, built first where it needs building; skips, saying
    why, when its language is not installed (scripts/install-deps.sh installs each)."""
    directory = os.path.join(EXAMPLES, example)
    if example == "shell":
        return ["sh", os.path.join(directory, "download.sh")]
    if example == "python":
        return ["python3", os.path.join(directory, "download.py")]
    if example == "node":
        if not shutil.which("node"):
            pytest.skip("node is not installed")
        return ["node", os.path.join(directory, "download.mjs")]
    if example == "gjs":
        if not shutil.which("gjs"):
            pytest.skip("gjs is not installed")
        return ["gjs", "-m", os.path.join(directory, "download.js")]
    assert example == "c"
    if not shutil.which("gcc") or subprocess.run(["pkg-config", "--exists", "json-c"]).returncode != 0:
        pytest.skip("gcc or json-c (libjson-c-dev) is not installed")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "json-c"], capture_output=True, text=True,
                           check=True).stdout.split()
    binary = str(tmp_path / "download-c")
    subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-o", binary, os.path.join(directory, "download.c"), *flags],
                   check=True, timeout=LIVENESS)
    return [binary]


def app_of(example):
    entries = glob.glob(os.path.join(EXAMPLES, example, "*.desktop"))
    assert len(entries) == 1, entries
    return os.path.basename(entries[0])[:-len(".desktop")]


def activity(daemon, app, id):
    with daemon.connect("org.island.Producer") as producer:
        states = ["pending", "active", "stale", "ended", "dismissed"]
        return next(a for a in producer.List(app=app, states=states)["activities"] if a["id"] == id)


def shows_download(line):
    """A Waybar line of the island showing the example's activity in its compact form."""
    return '"compact"' in line and "Downloading" in line


@pytest.mark.parametrize("example", ["shell", "python", "c", "node", "gjs"])
def test_example_shows_updates_and_ends_its_activity(daemon, example, tmp_path):
    command = program(example, tmp_path)
    presenter = Presenter(daemon, "waybar")
    try:
        presenter.next_line()  # subscribed: the island as it is
        result = subprocess.run(command, env=environment(daemon), capture_output=True, text=True, timeout=LIVENESS)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert [line.split()[0] for line in lines] == ["started", "updated", "updated", "ended"], result.stdout
        id = lines[0].split()[1]
        presenter.next_line(shows_download)
    finally:
        presenter.stop()
    ended = activity(daemon, app_of(example), id)
    assert ended["state"] == "ended" and ended["endReason"] == "app"
    assert ended["type"] == "Download" and ended["attributes"] == {"file": "debian-12.iso"}
    assert ended["content"]["state"] == FINAL


def start_slowly(daemon, command):
    """An example whose pretend work lasts a minute, in a process group of its own (as a
    terminal runs a command), once it has started its activity: (process, activity id). It
    downloads another file than the other tests', so its key is its own."""
    process = subprocess.Popen(command + ["bookworm.iso"], env=environment(daemon, step_seconds=60), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = process.stdout.readline().split()
    assert first[:1] == ["started"], (first, process.stderr.read())
    return process, first[1]


def test_the_shell_example_ends_its_activity_when_stopped(daemon, tmp_path):
    """Ctrl-C or systemd stopping the script (SIGTERM to its process group) runs its trap."""
    process, id = start_slowly(daemon, program("shell", tmp_path))
    assert activity(daemon, "org.example.DownloadShell", id)["state"] == "active"
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(timeout=LIVENESS) == 143, process.stderr.read()
    cancelled = activity(daemon, "org.example.DownloadShell", id)
    assert cancelled["state"] == "ended" and cancelled["content"]["state"] == {"stage": "cancelled", "percent": 0}


def test_a_killed_raw_client_leaves_no_activity_behind(daemon, tmp_path):
    """The raw clients ask for ownerGone "end": killed outright, their activity ends."""
    process, id = start_slowly(daemon, program("python", tmp_path))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=LIVENESS)
    # islandd ends it once it sees the connection closed: a liveness bound, not a guess.
    wait_for(lambda: activity(daemon, "org.example.DownloadPython", id)["state"] == "ended",
             message="the killed example's activity ended")
    ended = activity(daemon, "org.example.DownloadPython", id)
    assert ended["state"] == "ended" and ended["endReason"] == "ownerGone"


def test_the_developer_guides_varlink_commands_work_as_written(daemon):
    """"Speaking Varlink yourself" runs the reference client's `info` and a `Request`, as a
    newcomer types them after the quick start (its app's entry installed, $XDG_RUNTIME_DIR
    set). The Request named org.example.Coffee, which no step had installed: Unentitled."""
    with open(os.path.join(REPO, "docs", "developer-guide.md")) as f:
        guide = f.read()
    section = guide[guide.index("## Speaking Varlink yourself"):]
    block = section[section.index("```sh\n") + len("```sh\n"):section.index("```\n", section.index("```sh\n") + 1)]
    assert "varlink.cli call" in block, block
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", block], env=environment(daemon), capture_output=True,
                            text=True, timeout=LIVENESS)
    assert result.returncode == 0, result.stderr
    assert "org.island.Producer" in result.stdout and '"created": true' in result.stdout, result.stdout
    assert "error" not in result.stdout, result.stdout
