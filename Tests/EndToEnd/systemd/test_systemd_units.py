"""The systemd units, sysusers.d and tmpfiles.d files in packaging/: systemd itself checks them.

`systemd-analyze verify` exits 0 even on unknown keys, so what counts is an empty stderr. It
also insists that ExecStart='s binary exists, so the units are verified as copies whose
/usr/bin/islandd is the built binary; and that every man: page of Documentation= exists, so
MANPATH points at packaging/man's pages (laid out in manN/ directories)."""

import os
import re
import shutil
import subprocess
import tempfile

import pytest

from harness.paths import ISLANDD
from harness.paths import REPO as ROOT

PACKAGING = os.path.join(ROOT, "packaging")
SYSTEM_UNITS = os.path.join(PACKAGING, "systemd")
USER_UNITS = os.path.join(PACKAGING, "systemd", "user")
ANALYZE = shutil.which("systemd-analyze")

needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def unit_lines(path):
    """(section, key, value) for every assignment of a unit file."""
    section = None
    lines = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, _, value = line.partition("=")
            lines.append((section, key, value))
    return lines


def settings(path):
    """{key: [values]} of a unit file, all sections together."""
    result = {}
    for _, key, value in unit_lines(path):
        result.setdefault(key, []).append(value)
    return result


@pytest.fixture
def verify_copies():
    """Copies a unit directory's islandd.* files with ExecStart= on the built binary, next to
    a man/ tree of packaging/man's pages."""
    made = []

    def copy(directory):
        target = tempfile.mkdtemp(prefix="island-units-", dir="/tmp")
        made.append(target)
        for name in ("islandd.socket", "islandd.service"):
            with open(os.path.join(directory, name)) as f:
                text = f.read()
            with open(os.path.join(target, name), "w") as f:
                f.write(text.replace("/usr/bin/islandd", ISLANDD))
        pages = os.path.join(PACKAGING, "man")
        for page in os.listdir(pages) if os.path.isdir(pages) else []:
            section = page.rsplit(".", 1)[-1]
            if section.isdigit():
                os.makedirs(os.path.join(target, "man", "man" + section), exist_ok=True)
                shutil.copy(os.path.join(pages, page), os.path.join(target, "man", "man" + section, page))
        return target

    yield copy
    for m in made:
        shutil.rmtree(m, ignore_errors=True)


def analyze(args, cwd, env=None):
    env = dict(env or os.environ, MANPATH=os.path.join(cwd, "man"))
    if shutil.which("man") is None:
        args = args[:1] + ["--man=no"] + args[1:]
    return subprocess.run([ANALYZE] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@needs_analyze
def test_system_units_verify_cleanly(verify_copies):
    assert os.access(ISLANDD, os.X_OK), "build islandd first"
    directory = verify_copies(SYSTEM_UNITS)
    result = analyze(["verify", "./islandd.socket", "./islandd.service"], cwd=directory)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr


@needs_analyze
def test_user_units_verify_cleanly(verify_copies):
    assert os.access(ISLANDD, os.X_OK), "build islandd first"
    directory = verify_copies(USER_UNITS)
    runtime = tempfile.mkdtemp(prefix="island-xrt-", dir="/tmp")
    try:
        os.chmod(runtime, 0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        result = analyze(["verify", "--user", "./islandd.socket", "./islandd.service"], cwd=directory, env=env)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr


@needs_analyze
def test_verify_would_catch_an_unknown_key(verify_copies):
    """The check above is not vacuous: a misspelt key shows up on stderr."""
    directory = verify_copies(SYSTEM_UNITS)
    with open(os.path.join(directory, "islandd.service"), "a") as f:
        f.write("\n[Service]\nProtectSystm=strict\n")
    result = analyze(["verify", "./islandd.socket", "./islandd.service"], cwd=directory)
    assert "Unknown key 'ProtectSystm'" in result.stderr, result.stderr


def exposure(unit, user=False):
    runtime = tempfile.mkdtemp(prefix="island-xrt-", dir="/tmp")
    try:
        os.chmod(runtime, 0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        args = ["security", "--offline=true"] + (["--user"] if user else []) + [unit]
        result = analyze(args, cwd=os.path.dirname(unit), env=env)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    match = re.search(r"Overall exposure level for islandd\.service: ([0-9.]+)", result.stdout)
    assert match, result.stdout + result.stderr
    return float(match.group(1)), result.stdout


@needs_analyze
def test_system_service_exposure_is_at_most_1_5():
    score, report = exposure(os.path.join(SYSTEM_UNITS, "islandd.service"))
    print("system islandd.service exposure: %.1f" % score)
    assert score <= 1.5, report


@needs_analyze
def test_user_service_exposure_is_reported():
    """User managers cannot drop capabilities or set up namespaces without user namespaces, so
    most of the checks do not apply; the score is printed, not held to the system target."""
    score, _ = exposure(os.path.join(USER_UNITS, "islandd.service"), user=True)
    print("user islandd.service exposure: %.1f" % score)
    assert 0 <= score <= 10


def test_units_keep_what_the_daemon_relies_on():
    system = settings(os.path.join(SYSTEM_UNITS, "islandd.service"))
    user = settings(os.path.join(USER_UNITS, "islandd.service"))
    for service, scope in ((system, "--system"), (user, "--user")):
        assert service["Type"] == ["notify"]
        assert service["ExecStart"] == ["/usr/bin/islandd " + scope]
        assert service["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
        assert service["WatchdogSec"] == ["30s"]
        assert service["Restart"] == ["on-failure"]
        # 78 is an invalid configuration: restarting cannot fix it.
        assert service["RestartPreventExitStatus"] == ["78"]
    # Clients only over AF_UNIX; the user daemon's push link reaches its broker over TCP (the
    # system daemon has no network unless a drop-in gives it one for push).
    assert system["RestrictAddressFamilies"] == ["AF_UNIX"] and system["PrivateNetwork"] == ["yes"]
    assert user["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"]
    # Identification of callers reads other processes' /proc/PID and needs their real uids.
    assert "ProtectProc" not in system and "ProcSubset" not in system
    assert "PrivateUsers" not in system
    assert system["User"] == ["island"] and system["CapabilityBoundingSet"] == [""]
    assert system["StateDirectory"] == ["island"] and system["StateDirectoryMode"] == ["0700"]
    # Room for MaxConnections=4096 and more (the daemon raises the soft limit to the hard one).
    assert system["LimitNOFILE"] == ["8192:524288"]

    system_socket = settings(os.path.join(SYSTEM_UNITS, "islandd.socket"))
    assert system_socket["ListenStream"] == ["/run/island/islandd.sock"]
    assert (system_socket["SocketMode"], system_socket["SocketGroup"]) == (["0660"], ["island"])
    user_socket = settings(os.path.join(USER_UNITS, "islandd.socket"))
    assert user_socket["ListenStream"] == ["%t/island/islandd.sock"]
    assert user_socket["SocketMode"] == ["0600"]
    for sock in (system_socket, user_socket):
        assert sock["FileDescriptorName"] == ["varlink"] and sock["RemoveOnStop"] == ["yes"]


def test_no_trailing_comments_on_unit_lines():
    """systemd takes "value # comment" as the value, comment included."""
    for directory in (SYSTEM_UNITS, USER_UNITS):
        for name in ("islandd.socket", "islandd.service"):
            for section, key, value in unit_lines(os.path.join(directory, name)):
                assert "#" not in value, "%s/%s [%s] %s=%s" % (directory, name, section, key, value)


def run_tool(tool, args):
    path = shutil.which(tool)
    if path is None:
        pytest.skip("%s is not installed" % tool)
    return subprocess.run([path] + args, capture_output=True, text=True, timeout=60)


def test_sysusers_creates_the_island_user_and_group(tmp_path):
    (tmp_path / "etc").mkdir()
    result = run_tool("systemd-sysusers", ["--root=%s" % tmp_path, os.path.join(PACKAGING, "sysusers.d", "island.conf")])
    assert result.returncode == 0, result.stderr
    passwd = {line.split(":")[0]: line.split(":") for line in (tmp_path / "etc" / "passwd").read_text().splitlines()}
    groups = {line.split(":")[0]: line.split(":") for line in (tmp_path / "etc" / "group").read_text().splitlines()}
    assert "island" in passwd and "island" in groups
    user = passwd["island"]
    assert 0 < int(user[2]) < 1000, user  # a system user
    assert user[3] == groups["island"][2]
    assert user[6].endswith("nologin"), user


@pytest.mark.skipif(os.geteuid() != 0, reason="systemd-tmpfiles needs root to chown in a temporary root")
def test_tmpfiles_creates_the_private_state_directory(tmp_path):
    (tmp_path / "etc").mkdir()
    assert run_tool("systemd-sysusers", ["--root=%s" % tmp_path, os.path.join(PACKAGING, "sysusers.d", "island.conf")]).returncode == 0
    result = run_tool("systemd-tmpfiles", ["--root=%s" % tmp_path, "--create", os.path.join(PACKAGING, "tmpfiles.d", "island.conf")])
    assert result.returncode == 0, result.stderr
    info = os.stat(tmp_path / "var" / "lib" / "island")
    uid = int([line for line in (tmp_path / "etc" / "passwd").read_text().splitlines() if line.startswith("island:")][0].split(":")[2])
    assert (info.st_mode & 0o7777, info.st_uid) == (0o700, uid)
