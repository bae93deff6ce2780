"""Identities a peer can forge, and sandboxed peers asking for privileged roles, against the real
islandd.

In the system scope: a user who runs `unshare -Ur` and `chroot`s into a directory holding a
`.flatpak-info` is not the Flatpak it names; a copy of python3 named like a desktop entry's
bare `Exec=`, or placed where an absolute `Exec=` points but outside root's control, is not
that app. In the user scope: a peer in a sandbox does not become a presenter or an admin
unless the configuration allows its app.

The peers are /usr/bin/python3 scripts that connect first and then (for the forgeries) leave
for a user namespace and a root of their own, as the attack did. The system-scope tests need
root (to run the daemon and to run the peer as another user); every test needs user
namespaces for the sandbox."""

import json
import os
import shutil
import subprocess
import tempfile

import pytest

from harness.daemon import write_manifests
from harness.paths import ISLANDD
from harness.processes import read_log, stop_process, wait_for

PYTHON = "/usr/bin/python3"
NOBODY = 65534


def user_namespaces_work():
    unshare = shutil.which("unshare")
    return bool(unshare) and subprocess.run([unshare, "-Ur", "true"], capture_output=True).returncode == 0


needs_python = pytest.mark.skipif(not os.access(PYTHON, os.X_OK), reason="needs %s for the peers" % PYTHON)
needs_userns = pytest.mark.skipif(not user_namespaces_work(), reason="user namespaces are not available here")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a system-scope islandd and peers as another user")

# Connects as `uid` (unless 0), then optionally unshares a user namespace and chroots into
# `root`, then makes each call on the one connection and prints the replies as JSON.
PEER = r"""
import ctypes, json, os, socket, sys
path, root, uid, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
if uid:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
s = socket.socket(socket.AF_UNIX)
s.connect(path)
if root:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
        sys.exit("unshare(CLONE_NEWUSER): " + os.strerror(ctypes.get_errno()))
    os.chroot(root)
    os.chdir("/")
replies, buffer = [], b""
for call in calls:
    s.sendall(json.dumps(call).encode() + b"\0")
    while b"\0" not in buffer:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed")
        buffer += chunk
    frame, buffer = buffer.split(b"\0", 1)
    replies.append(json.loads(frame))
print(json.dumps(replies))
"""


def peer(socket, calls, sandbox_root="", uid=0, python=PYTHON):
    """The replies to `calls`, made by a fresh peer process on one connection."""
    result = subprocess.run([python, "-c", PEER, socket, sandbox_root, str(uid), json.dumps(calls)],
                            capture_output=True, text=True, timeout=30, cwd="/")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def call(method, more=False, **parameters):
    message = {"method": method, "parameters": parameters}
    if more:
        message["more"] = True
    return message


def sandbox_root(parent, flatpak_app=None):
    """A directory for a peer to chroot into, with a `.flatpak-info` naming `flatpak_app`."""
    root = os.path.join(parent, "sandbox-%s" % (flatpak_app or "plain"))
    os.makedirs(root, 0o755)
    os.chmod(root, 0o755)
    if flatpak_app:
        with open(os.path.join(root, ".flatpak-info"), "w") as f:
            f.write("[Application]\nname=%s\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n\n"
                    "[Instance]\ninstance-id=1\n" % flatpak_app)
    return root


@pytest.fixture(params=[False, True], ids=["", "with-python-entry"])
def system_daemon(request):
    """A system-scope islandd under a root-owned directory of /opt that no one else may
    write to, with the test apps' manifests and two more: org.test.Mine (`Exec=myapp`) and
    org.test.Tool (an absolute `Exec=` outside root's control); with the parameter set, also
    org.test.Python (the real python3 the peers run, the control). Its socket is open to
    every user, so the daemon's answer is what is tested."""
    root = tempfile.mkdtemp(prefix="island-identity-", dir="/opt")
    process = None
    try:
        os.chmod(root, 0o755)
        share = os.path.join(root, "share")
        write_manifests(share)
        untrusted = os.path.join(root, "home")
        os.mkdir(untrusted, 0o755)
        os.chown(untrusted, NOBODY, NOBODY)
        tool = os.path.join(untrusted, "tool")
        entries = [("org.test.Mine", "myapp"), ("org.test.Tool", tool)]
        if request.param:
            entries.append(("org.test.Python", os.path.realpath(PYTHON)))
        for app, exec_ in entries:
            with open(os.path.join(share, "applications", app + ".desktop"), "w") as f:
                f.write("[Desktop Entry]\nType=Application\nName=%s\nExec=%s\nX-Island-LiveActivities=true\n" % (app, exec_))
        config = os.path.join(root, "islandd.conf")
        open(config, "w").close()
        socket = os.path.join(root, "run", "islandd.sock")
        env = {k: v for k, v in os.environ.items()
               if k not in ("XDG_RUNTIME_DIR", "ISLAND_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM")}
        env["XDG_DATA_DIRS"] = share
        log_path = os.path.join(root, "islandd.log")
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [ISLANDD, "--system", "--socket", socket, "--state-dir", os.path.join(root, "state"), "--config", config],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        # The daemon sets the socket's mode (0660) after it listens: only then may the test
        # open it to everyone without the daemon's chmod undoing that.
        wait_for(lambda: is_the_daemons(socket) or process.poll() is not None, message="the socket")
        assert process.poll() is None, read_log(log_path)
        os.chmod(socket, 0o666)
        yield {"root": root, "socket": socket, "untrusted": untrusted, "tool": tool, "log": log_path,
               "python_entry": request.param}
    finally:
        stop_process(process)
        shutil.rmtree(root, ignore_errors=True)


def is_the_daemons(path):
    try:
        return os.stat(path).st_mode & 0o777 == 0o660
    except OSError:
        return False


def request(app=None):
    parameters = {"type": "Backup", "attributes": {}, "content": {"state": {"step": 1}}}
    if app:
        parameters["app"] = app
    return call("org.island.Producer.Request", **parameters)


@needs_root
@needs_python
@needs_userns
def test_a_forged_flatpak_is_not_that_app_in_the_system_scope(system_daemon):
    sandbox = sandbox_root(system_daemon["root"], "org.example.Coffee")
    for claim in [None, "org.example.Coffee"]:
        [reply] = peer(system_daemon["socket"], [request(claim)], sandbox_root=sandbox, uid=NOBODY)
        if system_daemon["python_entry"]:
            # The peer really runs root's python3, which an entry names: that it is, and no more.
            if claim:
                assert reply.get("error") == "org.island.PermissionDenied", reply
                assert "org.test.Python" in reply["parameters"]["reason"], reply
            else:
                assert reply["parameters"]["activity"]["app"] == "org.test.Python", reply
        else:
            assert reply.get("error") == "org.island.Unentitled", reply
            assert "user namespace" in reply["parameters"]["reason"], reply


@needs_root
@needs_python
@pytest.mark.parametrize("system_daemon", [True], indirect=True, ids=["with-python-entry"])
def test_a_program_named_like_an_exec_is_not_that_app_in_the_system_scope(system_daemon):
    real_python = os.path.realpath(PYTHON)
    # u2 copies python3 to a file of theirs named as the bare Exec= says, and to the path an
    # absolute Exec= names in a directory they own; a copy in /tmp is no better.
    scratch = tempfile.mkdtemp(prefix="island-copies-", dir="/tmp")
    try:
        os.chmod(scratch, 0o755)
        copies = [os.path.join(system_daemon["untrusted"], "myapp"), system_daemon["tool"], os.path.join(scratch, "myapp")]
        for copy in copies:
            shutil.copy(real_python, copy)
            os.chown(copy, NOBODY, NOBODY)
            os.chmod(copy, 0o755)
        for copy in copies:
            [reply] = peer(system_daemon["socket"], [request()], uid=NOBODY, python=copy)
            assert reply.get("error") == "org.island.Unentitled", (copy, reply)
        # The control: the real python3, root's file that org.test.Python names, is that app.
        [reply] = peer(system_daemon["socket"], [request()], uid=NOBODY, python=real_python)
        assert "error" not in reply, reply
        assert reply["parameters"]["activity"]["app"] == "org.test.Python", reply
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


PRESENT = call("org.island.Presenter.Subscribe", more=True)
ADMIN = call("org.island.Admin.Status")


@needs_python
@needs_userns
def test_a_sandboxed_peer_is_neither_presenter_nor_admin(make_daemon):
    daemon = make_daemon()
    with daemon.connect("org.island.Producer") as coffee:
        activity = coffee.Request(app="org.example.Coffee", type="Transfer", attributes={"account": "private"},
                                  content={"state": {"amount": 100}})["activity"]
    # What a sandboxed peer once did: read, press another app's button, dismiss.
    interactions = [call("org.island.Presenter.Interact", action="button", id=activity["id"], button="confirm-transfer"),
                    call("org.island.Presenter.Interact", action="dismiss", id=activity["id"])]
    root = tempfile.mkdtemp(prefix="island-sandbox-", dir="/tmp")
    try:
        os.chmod(root, 0o755)
        for sandbox, key in [(sandbox_root(root, "org.example.Timer"), "SandboxedPresenters=org.example.Timer"),
                             (sandbox_root(root), None)]:
            for message, role in [(PRESENT, "presenter"), (ADMIN, "admin")] + [(m, "presenter") for m in interactions]:
                [reply] = peer(daemon.socket, [message], sandbox_root=sandbox)
                assert reply.get("error") == "org.island.PermissionDenied", reply
                assert reply["parameters"]["role"] == role
                assert "sandbox" in reply["parameters"]["reason"], reply
                if key and role == "presenter":
                    assert key in reply["parameters"]["reason"], reply
        # Coffee's activity is untouched; the same peer outside the sandbox is the user's presenter.
        [snapshot] = peer(daemon.socket, [PRESENT])
        assert snapshot["parameters"]["update"]["kind"] == "snapshot", snapshot
        with daemon.connect("org.island.Producer") as coffee:
            assert [a["state"] for a in coffee.List(app="org.example.Coffee")["activities"]] == ["active"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


@needs_python
@needs_userns
def test_the_user_can_allow_a_sandboxed_presenter(make_daemon):
    daemon = make_daemon("[Daemon]\nSandboxedPresenters=org.example.Timer\n")
    root = tempfile.mkdtemp(prefix="island-sandbox-", dir="/tmp")
    try:
        os.chmod(root, 0o755)
        timer = sandbox_root(root, "org.example.Timer")
        [snapshot] = peer(daemon.socket, [PRESENT], sandbox_root=timer)
        assert snapshot["parameters"]["update"]["kind"] == "snapshot", snapshot
        [admin] = peer(daemon.socket, [ADMIN], sandbox_root=timer)
        assert admin.get("error") == "org.island.PermissionDenied", "the presenter allowance is not the admin one"
        [other] = peer(daemon.socket, [PRESENT], sandbox_root=sandbox_root(root, "org.example.Flights"))
        assert other.get("error") == "org.island.PermissionDenied", other
    finally:
        shutil.rmtree(root, ignore_errors=True)


PICTURE_LAYOUT = {"compactLeading": {"type": "image", "source": "{{state.art}}",
                                     "fallback": {"type": "symbol", "name": "music"}}}


def has_picture(value):
    if isinstance(value, dict):
        return value.get("type") == "image" or any(has_picture(v) for v in value.values())
    if isinstance(value, list):
        return any(has_picture(v) for v in value)
    return False


@needs_python
@needs_userns
def test_a_sandboxed_producer_has_no_picture_read_for_it(make_daemon):
    """A Flatpak naming the user's 0600 picture in its state: presenters read pictures as the
    user, so the daemon sends its activities' layouts without `image` views; an unsandboxed
    producer's picture is drawn as before."""
    daemon = make_daemon()
    for app in ("org.example.Coffee", "org.example.Timer"):
        folder = os.path.join(daemon.share, "island", "layouts", app)
        os.makedirs(folder)
        with open(os.path.join(folder, "Song.json"), "w") as f:
            json.dump(PICTURE_LAYOUT, f)
    root = tempfile.mkdtemp(prefix="island-sandbox-", dir="/tmp")
    try:
        os.chmod(root, 0o755)
        secret = os.path.join(root, "secret.png")
        with open(secret, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
        os.chmod(secret, 0o600)
        with daemon.connect("org.island.Admin") as admin:
            admin.Reload()
        song = {"type": "Song", "attributes": {}, "content": {"state": {"art": secret}}}
        [reply] = peer(daemon.socket, [call("org.island.Producer.Request", **song)],
                       sandbox_root=sandbox_root(root, "org.example.Coffee"))
        assert "error" not in reply, reply
        with daemon.connect("org.island.Producer") as timer:
            timer.Request(app="org.example.Timer", **song)
        [snapshot] = peer(daemon.socket, [PRESENT])
        layouts = {item["app"]: item["layout"] for item in snapshot["parameters"]["update"]["items"]}
        assert not has_picture(layouts["org.example.Coffee"]), layouts["org.example.Coffee"]
        assert layouts["org.example.Coffee"]["compactLeading"] == {"type": "symbol", "name": "music"}
        assert has_picture(layouts["org.example.Timer"]), "an unsandboxed producer's picture is still drawn"
    finally:
        shutil.rmtree(root, ignore_errors=True)
