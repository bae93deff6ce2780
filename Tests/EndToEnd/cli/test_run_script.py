"""scripts/run.sh, the README's main command, gives a working CLI and presenter from a source
checkout: the CLI's desktop entry is installed for the user when no data directory has one."""

import json
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from harness.paths import BIN_DIR, REPO
from harness.processes import accepting, stop_process, wait_for

RUN = os.path.join(REPO, "scripts", "run.sh")
BIN = os.path.abspath(BIN_DIR)


@pytest.fixture
def fresh_user():
    """A user who never ran Island: an empty home, no desktop entry in any data directory
    (XDG_DATA_DIRS points at an empty one), and a private runtime directory."""
    root = tempfile.mkdtemp(prefix="island-run-", dir="/tmp")
    home = os.path.join(root, "home")
    runtime = os.path.join(root, "runtime")
    os.makedirs(home)
    os.mkdir(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k not in (
        "ISLAND_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM")}
    env.update(HOME=home, XDG_RUNTIME_DIR=runtime, XDG_DATA_DIRS=os.path.join(root, "no-data"),
               ISLAND_BIN_DIR=BIN)
    yield env
    shutil.rmtree(root, ignore_errors=True)


def start(env, log):
    process = subprocess.Popen(["bash", RUN], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    socket = os.path.join(env["XDG_RUNTIME_DIR"], "island", "islandd.sock")
    wait_for(lambda: accepting(socket) or process.poll() is not None, message="the daemon's socket")
    assert process.poll() is None, open(log.name).read()
    return process


def run(env, *args):
    return subprocess.run([os.path.join(BIN, args[0]), *args[1:]], env=env, capture_output=True, text=True,
                          timeout=30)


def test_run_sh_gives_a_working_cli_and_presenter(fresh_user, tmp_path):
    env = fresh_user
    entry = os.path.join(env["HOME"], ".local", "share", "applications", "org.island.cli.desktop")
    with open(tmp_path / "run.log", "w") as log:
        daemon = start(env, log)
    try:
        output = (tmp_path / "run.log").read_text()
        assert "installed the island CLI's desktop entry" in output
        with open(entry) as f, open(os.path.join(REPO, "packaging", "applications", "org.island.cli.desktop")) as g:
            assert f.read() == g.read()

        started = run(env, "island", "start", "Build", "--state", '{"step":1}')
        assert started.returncode == 0, started.stderr
        activity = started.stdout.strip()
        listed = run(env, "island", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert activity in [a["id"] for a in json.loads(listed.stdout)]
        drawn = run(env, "island-presenter", "snapshot", "--svg", "-")
        assert drawn.returncode == 0 and "<svg" in drawn.stdout, drawn.stderr
    finally:
        # run.sh execs islandd: the process started is the daemon.
        assert stop_process(daemon, signal.SIGTERM) == 0

    # Once there, the entry is left alone (a user's edits to it survive).
    with open(entry, "a") as f:
        f.write("# edited\n")
    with open(tmp_path / "again.log", "w") as log:
        daemon = start(env, log)
    try:
        assert "installed the island CLI's desktop entry" not in (tmp_path / "again.log").read_text()
        assert open(entry).read().endswith("# edited\n")
    finally:
        stop_process(daemon, signal.SIGTERM)


def test_run_sh_installs_only_what_the_build_needs(tmp_path):
    """From a checkout without ISLAND_BIN_DIR, run.sh installs the build's dependencies and
    builds: never the tests' part of install-deps.sh (a system user made with sudo, Python
    packages through pip, which Debian 12's python3 refuses as externally managed — run.sh
    stopped there, before building anything). Run on a copy of the scripts, with a stand-in
    install-deps.sh and `swift` that record how they were called, and an islandd that exits."""
    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.join(REPO, "scripts"), checkout / "scripts")
    shutil.copytree(os.path.join(REPO, "packaging", "applications"), checkout / "packaging" / "applications")
    calls = tmp_path / "calls"
    (checkout / "scripts" / "install-deps.sh").write_text('echo "install-deps $*" >> %s\n' % calls)
    tools = tmp_path / "tools"
    products = tmp_path / "products"
    tools.mkdir()
    products.mkdir()
    (tools / "swift").write_text('#!/bin/sh\necho "swift $*" >> %s\n[ "$2" = --show-bin-path ] && echo %s\nexit 0\n'
                                 % (calls, products))
    (products / "islandd").write_text("#!/bin/sh\nexit 0\n")
    for program in (tools / "swift", products / "islandd"):
        program.chmod(0o755)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != "ISLAND_BIN_DIR"}
    env.update(HOME=str(tmp_path / "home"), XDG_RUNTIME_DIR=str(runtime), PATH="%s:%s" % (tools, env["PATH"]))
    done = subprocess.run(["bash", str(checkout / "scripts" / "run.sh")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    recorded = calls.read_text().splitlines()
    assert recorded[0] == "install-deps --build", recorded
    assert [line for line in recorded if line.startswith("install-deps")] == ["install-deps --build"], recorded
    assert "swift build --product islandd" in recorded, recorded
