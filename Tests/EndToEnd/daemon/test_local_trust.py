"""Where the daemon serves and keeps its state, and how the CLI stops (and so how robust the suite
is): a socket directory another user controls is refused, daemon and clients agree on the default
socket, the database is private, and long-running commands stop on SIGINT and SIGTERM even when they
inherited SIGINT ignored."""

import grp
import itertools
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile

import pytest

from harness import host_accounts
from harness.cli import activities, ok
from harness.paths import CLI_MANIFEST, ISLAND, ISLANDD, LIVENESS
from harness.processes import accepting, stop_process, wait_for


def daemon_env(root, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_RUNTIME_DIR", "ISLAND_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM")}
    share = os.path.join(root, "share")
    os.makedirs(os.path.join(share, "applications"), exist_ok=True)
    shutil.copy(CLI_MANIFEST, os.path.join(share, "applications", "org.island.cli.desktop"))
    env.update({"XDG_DATA_HOME": share, "XDG_DATA_DIRS": os.path.join(root, "none"),
                "XDG_STATE_HOME": os.path.join(root, "state"), "XDG_CONFIG_HOME": os.path.join(root, "config")})
    env.update(extra)
    return env


def start_islandd(env, *args):
    return subprocess.Popen([ISLANDD, *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def refusal(env, *args):
    """What islandd says as it refuses to start (it must exit 1 by itself)."""
    daemon = start_islandd(env, *args)
    try:
        output, _ = daemon.communicate(timeout=LIVENESS)
    finally:
        stop_process(daemon)
    assert daemon.returncode == 1, output
    return output


@pytest.fixture
def root():
    path = tempfile.mkdtemp(prefix="island-trust-", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


# --- the socket's directory -----------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o755, 0o711, 0o770])
def test_a_runtime_directory_others_can_enter_is_refused(root, mode):
    runtime = os.path.join(root, "run")
    os.mkdir(runtime)
    os.chmod(runtime, mode)
    output = refusal(daemon_env(root, XDG_RUNTIME_DIR=runtime))
    assert runtime in output and "0700" in output, output
    assert not os.path.exists(os.path.join(runtime, "island", "islandd.sock"))


def test_daemon_and_clients_agree_on_the_default_socket(root):
    runtime = os.path.join(root, "run")
    os.mkdir(runtime, 0o700)
    env = daemon_env(root, XDG_RUNTIME_DIR=runtime)
    daemon = start_islandd(env)
    try:
        socket = os.path.join(runtime, "island", "islandd.sock")
        # The socket appears at bind, before its mode is set: wait for the mode, bounded.
        wait_for(lambda: (os.path.exists(socket) and stat.S_IMODE(os.stat(socket).st_mode) == 0o600)
                 or daemon.poll() is not None, message="the socket, mode 0600")
        assert daemon.poll() is None
        assert stat.S_IMODE(os.stat(os.path.dirname(socket)).st_mode) == 0o700
        # The CLI finds it from the same environment, without --socket or ISLAND_SOCKET.
        started = subprocess.run([ISLAND, "start", "T"], env=env, capture_output=True, text=True, timeout=30)
        assert started.returncode == 0, started.stderr
        listed = subprocess.run([ISLAND, "list", "--json"], env=env, capture_output=True, text=True, timeout=30)
        assert [a["id"] for a in json.loads(listed.stdout)] == [started.stdout.strip()]
    finally:
        stop_process(daemon)


def test_without_a_runtime_directory_there_is_no_shared_fallback(root):
    # No XDG_RUNTIME_DIR: the daemon must use /run/user/UID as clients do, never a directory
    # in /tmp that anyone could have made first. Where /run/user/UID is missing it says so.
    run_user = "/run/user/%d" % os.getuid()
    if os.path.exists(run_user):
        pytest.skip("%s exists here: starting the default instance would use the real runtime directory" % run_user)
    output = refusal(daemon_env(root))
    assert run_user in output and "--socket" in output, output


def test_a_runtime_directory_named_but_not_there_is_said_so(root):
    """$XDG_RUNTIME_DIR naming a directory that is not there was told as "$XDG_RUNTIME_DIR is
    unset and pam_systemd made no /run/user/UID": neither was so."""
    runtime = os.path.join(root, "run")
    output = refusal(daemon_env(root, XDG_RUNTIME_DIR=runtime))
    assert "%s: the runtime directory $XDG_RUNTIME_DIR names does not exist" % runtime in output, output
    assert "unset" not in output and "/run/user" not in output, output
    assert not os.path.exists(runtime), "nothing made in its place"


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a directory owned by another user")
def test_a_socket_directory_another_user_made_is_refused(root):
    # The attack: another user creates the directory first, then swaps the socket for theirs.
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chmod(root, 0o755)
    hijacked = os.path.join(root, "island")
    os.mkdir(hijacked, 0o700)
    os.chown(hijacked, nobody, -1)
    for socket in (os.path.join(hijacked, "islandd.sock"), os.path.join(hijacked, "deeper", "islandd.sock")):
        output = refusal(daemon_env(root), "--socket", socket)
        assert hijacked in output and "owned by uid %d" % nobody in output, output
        assert not os.path.exists(socket)


@pytest.mark.skipif(os.getuid() != 0, reason="the system scope's socket group needs root")
def test_the_system_socket_belongs_to_the_island_group(root):
    with host_accounts.changing():
        made_group = False
        try:
            group = grp.getgrnam("island")
        except KeyError:
            subprocess.run(["groupadd", "--system", "island"], check=True)
            made_group = True
            group = grp.getgrnam("island")
        socket = os.path.join(root, "sys", "islandd.sock")
        daemon = start_islandd(daemon_env(root), "--system", "--socket", socket, "--state-dir", os.path.join(root, "state"))
        try:
            def owner():
                info = os.stat(socket) if os.path.exists(socket) else None
                return info and (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
            # Bound, then given its mode and group: wait for the final state, bounded.
            wait_for(lambda: owner() == (0, group.gr_gid, 0o660) or daemon.poll() is not None,
                     message="the socket as root:island 0660")
            assert daemon.poll() is None
        finally:
            stop_process(daemon)
            if made_group:
                subprocess.run(["groupdel", "island"], check=False)


def regular_file(path):
    with open(path, "w") as f:
        f.write("x")


@pytest.mark.parametrize("kind,make", [
    ("a FIFO", os.mkfifo),
    ("a regular file", regular_file),
    ("a directory", os.mkdir),
    ("a symbolic link", lambda path: os.symlink("/dev/zero", path)),
    ("a symbolic link", lambda path: os.symlink(path, path)),
], ids=["fifo", "file", "folder", "link-to-zero", "link-loop"])
def test_what_is_no_socket_where_the_socket_goes_is_named_with_what_to_do(root, kind, make):
    """Any program of the user's can put something in the runtime directory where the socket
    goes. The daemon replaces only a socket; anything else it names, with what to do (it said
    `UnixDomainSocketPathWrongType()`, or a failed stat of a link loop), and leaves alone."""
    runtime = os.path.join(root, "run")
    os.makedirs(os.path.join(runtime, "island"), 0o700)
    os.chmod(runtime, 0o700)
    socket = os.path.join(runtime, "island", "islandd.sock")
    make(socket)
    output = refusal(daemon_env(root, XDG_RUNTIME_DIR=runtime))
    assert "%s: %s is there, not a socket; islandd replaces only a socket: remove it, or pass --socket" % (
        socket, kind) in output, output
    assert os.path.lexists(socket) and not stat.S_ISSOCK(os.lstat(socket).st_mode)


@pytest.mark.parametrize("kind,make", [("a FIFO", os.mkfifo), ("a regular file", regular_file), ("a directory", os.mkdir)],
                         ids=["fifo", "file", "folder"])
def test_a_client_says_what_is_there_when_it_is_no_socket(root, kind, make):
    """connect(2) answers ECONNREFUSED for a FIFO, a file or a folder at the socket's path, and
    the CLI said "connection refused (nothing listens on the socket)", which sends the user
    looking for a daemon rather than at the file in the way."""
    socket = os.path.join(root, "islandd.sock")
    make(socket)
    result = subprocess.run([ISLAND, "admin", "status", "--socket", socket], capture_output=True, text=True,
                            timeout=LIVENESS)
    assert result.returncode == 69, result.stderr
    assert "not reachable at %s: %s is there, not a socket" % (socket, kind) in result.stderr, result.stderr


# --- the database ---------------------------------------------------------------------------


def test_the_database_is_private_in_a_readable_state_directory(root):
    state = os.path.join(root, "state")
    os.mkdir(state, 0o755)
    env = daemon_env(root)
    socket = os.path.join(root, "islandd.sock")
    daemon = start_islandd(env, "--socket", socket, "--state-dir", state)
    try:
        wait_for(lambda: accepting(socket) or daemon.poll() is not None, message="the socket")
        ok(subprocess.run([ISLAND, "start", "T"], env=dict(env, ISLAND_SOCKET=socket), capture_output=True, text=True, timeout=30))
        for name in os.listdir(state):
            assert stat.S_IMODE(os.stat(os.path.join(state, name)).st_mode) == 0o600, name
        assert "islandd.sqlite3" in os.listdir(state)
    finally:
        stop_process(daemon)


def test_an_empty_database_file_is_reported(root):
    state = os.path.join(root, "state")
    os.mkdir(state, 0o700)
    open(os.path.join(state, "islandd.sqlite3"), "w").close()
    socket = os.path.join(root, "islandd.sock")
    daemon = start_islandd(daemon_env(root), "--socket", socket, "--state-dir", state)
    try:
        wait_for(lambda: accepting(socket) or daemon.poll() is not None, message="the socket")
        assert daemon.poll() is None
    finally:
        stop_process(daemon)
    output = daemon.stdout.read()
    assert "empty file" in output and "islandd.sqlite3" in output, output


# --- long-running commands stop on their signals --------------------------------------------


def ignoring_sigint():
    # What a non-interactive shell does to its background jobs.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_watch_stops_on_its_signal_even_when_sigint_was_ignored(cli_daemon, sig):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    with tempfile.TemporaryFile(mode="w+") as out:
        watcher = subprocess.Popen([ISLAND, "watch", "--json"], env=env, preexec_fn=ignoring_sigint,
                                   stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            # The watch is up once an update of ours has been printed.
            id = ok(subprocess.run([ISLAND, "start", "T"], env=env, capture_output=True, text=True, timeout=30)).stdout.strip()
            attempts = itertools.count()

            def printed():
                # A new state each time: watchers hear of content only when it changes, so a
                # watch registered after `start` would never print a repeat of the same state.
                state = json.dumps({"attempt": next(attempts)})
                ok(subprocess.run([ISLAND, "update", id, "--state", state], env=env, capture_output=True, text=True, timeout=30))
                out.seek(0)
                return id in out.read()
            wait_for(printed, interval=0.3, message="an event of the watch")
            watcher.send_signal(sig)
            assert watcher.wait(timeout=LIVENESS) == 128 + sig
        finally:
            stop_process(watcher, signal.SIGKILL)


def test_progress_ends_its_activity_on_sigint_even_when_it_was_ignored(cli_daemon):
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket)
    progress = subprocess.Popen([ISLAND, "progress", "--title", "Copy"], env=env, preexec_fn=ignoring_sigint,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        progress.stdin.write("40%\n")
        progress.stdin.flush()
        assert progress.stdout.readline() == "40%\n"
        wait_for(lambda: any(a["type"] == "Progress" and a["content"]["state"].get("value") == 40
                             for a in activities(cli_daemon)), message="the progress update")
        progress.send_signal(signal.SIGINT)
        assert progress.wait(timeout=LIVENESS) == 128 + signal.SIGINT
        ended = [a for a in activities(cli_daemon, "--state", "ended") if a["type"] == "Progress"]
        assert ended and ended[0]["content"]["state"]["status"] == "failed"
    finally:
        stop_process(progress, signal.SIGKILL)
