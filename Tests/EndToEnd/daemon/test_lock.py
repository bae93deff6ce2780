"""The session lock in the real islandd, through the reference Python varlink client and the
real `island` CLI: `island admin lock on|off|status`; while locked a presenter is sent of each
activity only what its lock-screen level allows, and no tap, button or dismissal acts; the
user's `[LockScreen]` levels apply at a reload; the lock is not kept across a restart or a
crash, and only the admin role sets it."""

import json
import subprocess

import pytest

from harness.paths import ISLAND
from harness.varlink import Connection, next_update, subscribe_presenter

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"


def island(daemon, *arguments):
    done = subprocess.run([ISLAND, *arguments, "--socket", daemon.socket], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def start(daemon, type, visibility, word):
    with daemon.connect("org.island.Extension") as extension:
        extension.RegisterLayout(app=COFFEE, type=type, layout={
            "lockScreenVisibility": visibility, "url": "https://example.org/{{state.word}}",
            "lockScreen": {"type": "hstack", "children": [
                {"type": "text", "template": "{{state.word}}"}, {"type": "button", "action": "open", "label": "Open"}]},
        })
    with daemon.connect("org.island.Producer") as producer:
        return producer.Request(app=COFFEE, type=type, attributes={"title": word}, content={"state": {"word": word}})["activity"]


def test_the_cli_locks_and_a_presenter_sees_each_level_and_cannot_act(daemon):
    shown = start(daemon, "Public", "public", "OPEN-1")
    private = start(daemon, "Private", "private", "PRIVATE-2")
    secret = start(daemon, "Secret", "secret", "SECRET-3")
    presenter, snapshot = subscribe_presenter(daemon)
    try:
        assert island(daemon, "admin", "lock", "status") == "Session lock: off"
        assert snapshot["lock"] == {"on": False}
        assert island(daemon, "admin", "lock", "on").startswith("Session lock: on since")
        locked = next_update(presenter, lambda update: update.get("lock", {}).get("on") is True)
        ids = [item["id"] for item in locked["items"]]
        assert shown["id"] in ids and private["id"] in ids and secret["id"] not in ids
        assert secret["id"] not in json.dumps(locked)
        text = json.dumps(locked)
        assert "OPEN-1" in text and "PRIVATE-2" not in text and "SECRET-3" not in text
        item = next(i for i in locked["items"] if i["id"] == private["id"])
        before = next(i for i in snapshot["items"] if i["id"] == private["id"])
        assert item["appName"] == before["appName"], "which app it is stays"
        assert item["attributes"] == {} and item["content"] == {"state": {}}
        assert "button" not in json.dumps(item["layout"])

        status = json.loads(island(daemon, "admin", "lock", "status", "--json"))
        assert status["on"] is True and status["source"] == "manual"
        for action in ({"action": "tap", "id": shown["id"]}, {"action": "button", "id": shown["id"], "button": "open"},
                       {"action": "dismiss", "id": shown["id"]}):
            connection = Connection(daemon.socket)
            reply = connection.ask("org.island.Presenter.Interact", action)
            connection.close()
            assert reply.get("error") == "org.island.PermissionDenied", reply
            assert "locked" in reply["parameters"]["reason"]

        assert island(daemon, "admin", "lock", "off") == "Session lock: off"
        unlocked = next_update(presenter, lambda update: update.get("lock", {}).get("on") is False)
        assert "SECRET-3" in json.dumps(unlocked)
        with daemon.connect("org.island.Presenter") as tapper:
            assert tapper.Interact(action="tap", id=shown["id"])["url"] == "https://example.org/OPEN-1"
    finally:
        presenter.close()


def test_the_users_levels_apply_at_a_reload(make_daemon):
    daemon = make_daemon()
    activity = start(daemon, "Public", "public", "OPEN-1")
    island(daemon, "admin", "lock", "on")
    presenter, snapshot = subscribe_presenter(daemon)
    try:
        assert "OPEN-1" in json.dumps(snapshot)
        with open(daemon.config, "w") as f:
            f.write("[LockScreen]\nVisibility=private\n\n[LockScreen:org.example.Coffee]\nVisibility=secret\n")
        with daemon.connect("org.island.Admin") as admin:
            admin.Reload()
        hidden = next_update(presenter, lambda update: update["kind"] == "snapshot")
        assert activity["id"] not in json.dumps(hidden)
    finally:
        presenter.close()


def test_the_lock_is_not_kept_across_a_restart_or_a_crash(daemon):
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetLock()["lock"] == {"on": False}
        lock = admin.SetLock(on=True, source="logind")["lock"]
        assert lock["on"] is True and lock["source"] == "logind"
    assert daemon.stop() == 0
    daemon.start()
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetLock()["lock"] == {"on": False}
        admin.SetLock(on=True)
    daemon.kill()
    daemon.start()
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert snapshot["lock"] == {"on": False}


def test_only_the_admin_role_sets_the_lock(daemon):
    """A producer's or a presenter's connection does not reach the admin's methods: no
    producer unlocks the screen."""
    with daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=True, source="gnome")
    for role_call in (("org.island.Producer.List", {"app": COFFEE}), ("org.island.Presenter.Interact", {"action": "collapse"})):
        connection = Connection(daemon.socket)
        assert "error" not in connection.ask(*role_call)
        reply = connection.ask("org.island.Admin.SetLock", {"on": False})
        connection.close()
        assert reply.get("error") == "org.island.PermissionDenied", reply
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetLock()["lock"]["source"] == "gnome"


def test_the_desktops_levels_and_islandd_conf_the_stricter_wins_and_are_not_kept(make_daemon):
    """The desktop's per-app privacy (SetDesktopLockScreen, as island-bridge reads GNOME's)
    combines with islandd.conf's: each only hides more. It is held in memory only, replaced whole
    by each call, bounded, and only the admin role sets it."""
    daemon = make_daemon()
    with open(daemon.config, "w") as f:
        f.write("[LockScreen:org.example.Tea]\nVisibility=secret\n")
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()
    activity = start(daemon, "Public", "public", "OPEN-1")
    with daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=True)
        admin.SetDesktopLockScreen(everyAppSecret=False, privateApps=[COFFEE], secretApps=[])
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    item = next(i for i in snapshot["items"] if i["id"] == activity["id"])
    assert "OPEN-1" not in json.dumps(snapshot) and item["content"] == {"state": {}}, "the desktop's private is stricter than public"

    # islandd.conf's secret beats the desktop's private; a reload keeps the desktop's.
    with open(daemon.config, "w") as f:
        f.write(f"[LockScreen:{COFFEE}]\nVisibility=secret\n")
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert activity["id"] not in json.dumps(snapshot)
    with open(daemon.config, "w") as f:
        f.write("")
    with daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=False)
        admin.Reload()
        admin.SetLock(on=True)
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert "OPEN-1" not in json.dumps(snapshot) and activity["id"] in json.dumps(snapshot), "the desktop's private survives a reload"

    # Replaced whole: the desktop hides everything, then nothing.
    with daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=False)
        admin.SetDesktopLockScreen(everyAppSecret=True, privateApps=[], secretApps=[])
        admin.SetLock(on=True)
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert activity["id"] not in json.dumps(snapshot)
    with daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=False)
        admin.SetDesktopLockScreen(everyAppSecret=False, privateApps=[], secretApps=[])
        admin.SetLock(on=True)
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert "OPEN-1" in json.dumps(snapshot)

    # Bounded, and hostile names refused by where they are.
    for parameters, where in (({"secretApps": ["ok"] * 1025}, "secretApps"), ({"privateApps": ["a", "\x1b[2J"]}, "privateApps[1]"),
                              ({"secretApps": ["x" * 256]}, "secretApps[0]"), ({"secretApps": [""]}, "secretApps[0]")):
        connection = Connection(daemon.socket)
        reply = connection.ask("org.island.Admin.SetDesktopLockScreen",
                               {"everyAppSecret": False, "privateApps": [], "secretApps": [], **parameters})
        connection.close()
        assert reply.get("error") == "org.varlink.service.InvalidParameter", reply
        assert reply["parameters"]["parameter"] == where, reply

    # Only the admin role.
    for role_call in (("org.island.Producer.List", {"app": COFFEE}), ("org.island.Presenter.Interact", {"action": "collapse"})):
        connection = Connection(daemon.socket)
        assert "error" not in connection.ask(*role_call)
        reply = connection.ask("org.island.Admin.SetDesktopLockScreen", {"everyAppSecret": True, "privateApps": [], "secretApps": []})
        connection.close()
        assert reply.get("error") == "org.island.PermissionDenied", reply
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert "OPEN-1" in json.dumps(snapshot)

    # Not kept across a restart.
    with daemon.connect("org.island.Admin") as admin:
        admin.SetDesktopLockScreen(everyAppSecret=True, privateApps=[], secretApps=[])
    assert daemon.stop() == 0
    daemon.start()
    with daemon.connect("org.island.Admin") as admin:
        admin.SetLock(on=True)
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert "OPEN-1" in json.dumps(snapshot), "a restarted daemon holds no desktop levels until the bridge says them again"


def test_what_the_desktop_said_is_shown_by_get_desktop_lock_screen_and_the_cli(make_daemon):
    """An administrator sees what the desktop said (GNOME's per-app privacy, through the bridge)
    beside islandd.conf: GetDesktopLockScreen gives it back, app ids sorted, and `island admin
    lock status` says it in words and in its JSON. Admin role only, as SetDesktopLockScreen."""
    daemon = make_daemon()
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetDesktopLockScreen() == {"everyAppSecret": False, "privateApps": [], "secretApps": []}
        admin.SetDesktopLockScreen(everyAppSecret=False, privateApps=["org.example.Tea", COFFEE], secretApps=["org.example.Bank"])
        assert admin.GetDesktopLockScreen() == {"everyAppSecret": False, "privateApps": [COFFEE, "org.example.Tea"],
                                                "secretApps": ["org.example.Bank"]}
    assert island(daemon, "admin", "lock", "status").splitlines() == [
        "Session lock: off",
        "The desktop's lock-screen privacy: private: %s, org.example.Tea; secret: org.example.Bank" % COFFEE]
    assert json.loads(island(daemon, "admin", "lock", "status", "--json"))["desktop"]["secretApps"] == ["org.example.Bank"]
    with daemon.connect("org.island.Admin") as admin:
        admin.SetDesktopLockScreen(everyAppSecret=True, privateApps=[], secretApps=[])
    assert island(daemon, "admin", "lock", "status").splitlines()[1] == "The desktop's lock-screen privacy: every app hidden (secret)"

    connection = Connection(daemon.socket)
    assert "error" not in connection.ask("org.island.Producer.List", {"app": COFFEE})
    reply = connection.ask("org.island.Admin.GetDesktopLockScreen", {})
    connection.close()
    assert reply.get("error") == "org.island.PermissionDenied", reply
