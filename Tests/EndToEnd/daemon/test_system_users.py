"""Two users running the same app against one system-scope islandd: each owns their activities by
(app, uid). As u2, `island list` must not show u1's activity, `island update` and `island end` must
not reach it, `--key` must not return it, and the app's limits are each user's own (docs/design.md
§3-4).

Needs root: it makes two throwaway users with useradd (removed afterwards whatever happens),
runs a system-scope islandd, and runs the real `island` as each user. In the system scope a
process is identified by its executable, which must be root-owned in root-owned directories
and named by a desktop entry's absolute Exec=: the test installs the CLI in such a directory
and gives the daemon that entry through XDG_DATA_DIRS."""

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import uuid

import pytest

from harness import host_accounts
from harness.paths import BIN_DIR, ISLANDD, SANITIZER_ENV
from harness.processes import read_log, stop_process, wait_for

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("userdel"),
    reason="needs root and useradd/userdel to run the CLI as two throwaway users")


def make_user():
    name = "isl-" + uuid.uuid4().hex[:10]
    # Uids of 1000 and up: below are system services, whose activities every presenter sees.
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--key", "UID_MIN=1000", name],
                   check=True, capture_output=True)
    return name


@pytest.fixture
def users():
    made = []
    with host_accounts.changing():
        try:
            made.append(make_user())
            made.append(make_user())
            yield [pwd.getpwnam(name) for name in made]
        finally:
            for name in made:
                subprocess.run(["userdel", name], check=False, capture_output=True)


@pytest.fixture
def system_daemon():
    # Everything under a root-owned directory that no one else may write to, as the system
    # scope's identity rules require of an executable and its directories.
    root = tempfile.mkdtemp(prefix="island-users-", dir="/opt")
    process = None
    try:
        os.chmod(root, 0o755)
        bin_dir = os.path.join(root, "bin")
        os.mkdir(bin_dir, 0o755)
        island = os.path.join(bin_dir, "island")
        shutil.copy(os.path.join(BIN_DIR, "island"), island)
        os.chmod(island, 0o755)
        applications = os.path.join(root, "share", "applications")
        os.makedirs(applications, 0o755)
        with open(os.path.join(applications, "org.island.cli.desktop"), "w") as f:
            f.write("[Desktop Entry]\nType=Application\nName=Island command line\nExec=%s\nNoDisplay=true\n"
                    "X-Island-LiveActivities=true\n" % island)
        config = os.path.join(root, "islandd.conf")
        open(config, "w").close()
        socket = os.path.join(root, "run", "islandd.sock")
        env = {k: v for k, v in os.environ.items()
               if k not in ("XDG_RUNTIME_DIR", "ISLAND_SOCKET", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM")}
        env["XDG_DATA_DIRS"] = os.path.join(root, "share")
        log_path = os.path.join(root, "islandd.log")
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [ISLANDD, "--system", "--socket", socket, "--state-dir", os.path.join(root, "state"), "--config", config],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        # Ready: the socket has its final mode and group.
        wait_for(lambda: "ready" in read_log(log_path) or process.poll() is not None, message="islandd ready")
        assert process.poll() is None, read_log(log_path)
        # The socket is root:island 0660 for presenters; these throwaway users are in no group
        # of the daemon's, and what is tested here is the daemon's answer once connected.
        os.chmod(socket, 0o666)
        yield {"island": island, "socket": socket, "log": log_path}
    finally:
        stop_process(process)
        shutil.rmtree(root, ignore_errors=True)


def as_user(user):
    return dict(user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd="/",
                env=dict(SANITIZER_ENV, PATH="/usr/bin:/bin", HOME="/"))


def island_as(user, daemon, *args):
    """Runs the installed `island` as `user`, with --json; its exit status and output."""
    return subprocess.run([daemon["island"], *args, "--json", "--socket", daemon["socket"]], **as_user(user),
                          capture_output=True, text=True, timeout=30)


def ok(result):
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


def error_name(result):
    assert result.returncode == 1, (result.stdout, result.stderr)
    text = result.stdout.strip() or result.stderr.strip()
    try:
        return json.loads(text.splitlines()[-1]).get("error")
    except (ValueError, IndexError):
        return text


def start(user, daemon, *args):
    return json.loads(ok(island_as(user, daemon, "start", "Delivery", *args)).stdout)


def listed(user, daemon):
    return json.loads(ok(island_as(user, daemon, "list")).stdout)


def test_two_users_of_one_app_never_touch_each_others_activities(users, system_daemon):
    u1, u2 = users
    mine = start(u1, system_daemon, "--state", '{"who": "u1"}', "--key", "order-1")
    assert mine.get("app") == "org.island.cli"

    assert listed(u2, system_daemon) == [], "u2 lists nothing of u1's"
    assert "NoSuchActivity" in str(error_name(island_as(u2, system_daemon, "update", mine["id"], "--state", '{"who": "u2"}')))
    assert "NoSuchActivity" in str(error_name(island_as(u2, system_daemon, "end", mine["id"])))
    theirs = start(u2, system_daemon, "--state", '{"who": "u2"}', "--key", "order-1")
    assert theirs["id"] != mine["id"], "u2's key does not find u1's activity"

    # u2's watch hears of u2's activity, never of u1's: events are published in the order the
    # changes are decided, so once u2's later update is heard, u1's earlier one would have been.
    with tempfile.TemporaryFile(mode="w+") as out:
        watch = subprocess.Popen([system_daemon["island"], "watch", "--json", "--socket", system_daemon["socket"]],
                                 **as_user(u2), stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            step = [0]

            def heard(marker):
                out.seek(0)
                return marker in out.read()

            def watching():
                # Updates are delivered at 2/s, coalesced: any of them heard means it is up.
                step[0] += 1
                ok(island_as(u2, system_daemon, "update", theirs["id"], "--state", '{"step": %d}' % step[0]))
                return heard('"step":')
            wait_for(watching, interval=0.3, message="u2's watch hearing u2's update")
            ok(island_as(u1, system_daemon, "update", mine["id"], "--state", '{"who": "u1", "again": true}'))
            ok(island_as(u2, system_daemon, "update", theirs["id"], "--state", '{"last": true}'))
            wait_for(lambda: heard('"last":true'), interval=0.1, message="u2's watch hearing u2's last update")
            out.seek(0)
            assert mine["id"] not in out.read(), "u2's watch heard of u1's activity"
        finally:
            stop_process(watch, signal.SIGTERM)

    [still_mine] = listed(u1, system_daemon)
    assert still_mine["id"] == mine["id"]
    assert still_mine["state"] == "active"
    assert still_mine["content"]["state"] == {"who": "u1", "again": True}
    assert [a["id"] for a in listed(u2, system_daemon)] == [theirs["id"]]

    # The app's per-app maximum (5 by default) is each user's: u1 filling theirs leaves u2's.
    for _ in range(4):
        start(u1, system_daemon)
    assert "TargetMaximumExceeded" in str(error_name(island_as(u1, system_daemon, "start", "Delivery")))
    start(u2, system_daemon)
    assert len(listed(u1, system_daemon)) == 5
    assert len(listed(u2, system_daemon)) == 2

    # u1 still owns and ends their own.
    ok(island_as(u1, system_daemon, "end", mine["id"]))
    assert [a["state"] for a in listed(u1, system_daemon) if a["id"] == mine["id"]] == ["ended"]


def test_another_user_can_neither_turn_focus_on_nor_off(users, system_daemon):
    """Do Not Disturb is the admin's (root, in the system scope), like every other setting: a
    user's `island admin focus` is refused, and what root set stays."""
    u1, _ = users

    def as_root(*args):
        return json.loads(ok(subprocess.run([system_daemon["island"], *args, "--json", "--socket", system_daemon["socket"]],
                                            capture_output=True, text=True, timeout=30)).stdout)

    assert "PermissionDenied" in str(error_name(island_as(u1, system_daemon, "admin", "focus", "on")))
    assert as_root("admin", "focus", "status") == {"on": False}
    assert as_root("admin", "focus", "on")["on"] is True
    assert "PermissionDenied" in str(error_name(island_as(u1, system_daemon, "admin", "focus", "off")))
    assert "PermissionDenied" in str(error_name(island_as(u1, system_daemon, "admin", "focus", "status")))
    assert as_root("admin", "focus", "status")["on"] is True


def test_another_user_can_neither_turn_sharing_on_nor_off(users, system_daemon):
    """Screen sharing is the admin's too: a user's `island admin sharing` is refused, and what
    root said stays."""
    u1, _ = users

    def as_root(*args):
        return json.loads(ok(subprocess.run([system_daemon["island"], *args, "--json", "--socket", system_daemon["socket"]],
                                            capture_output=True, text=True, timeout=30)).stdout)

    assert "PermissionDenied" in str(error_name(island_as(u1, system_daemon, "admin", "sharing", "on")))
    assert as_root("admin", "sharing", "status") == {"on": False, "contentHidden": False}
    assert as_root("admin", "sharing", "on")["source"] == "manual"
    assert "PermissionDenied" in str(error_name(island_as(u1, system_daemon, "admin", "sharing", "off")))
    assert as_root("admin", "sharing", "status")["on"] is True
