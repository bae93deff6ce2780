"""An app's activity from start to dismissal, through the reference Python client."""

import json
import os
import shutil
import subprocess
import time

import pytest

from harness.cli import activity, island, ok
from harness.paths import CLI_MANIFEST, ISLAND, REPO
from harness.processes import wait_for
from harness.varlink import Connection, error_of, frame

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"


def content(stage, **extra):
    c = {"state": {"stage": stage}}
    c.update(extra)
    return c


def test_request_update_end_and_list(daemon):
    with daemon.connect("org.island.Producer") as producer:
        started = producer.Request(app=COFFEE, type="Coffee", attributes={"drink": "flat white"},
                                   content=content("ordered"))
        activity = started["activity"]
        assert started["created"] is True
        assert activity["app"] == COFFEE and activity["state"] == "active"
        assert activity["content"]["state"] == {"stage": "ordered"}

        updated = producer.Update(app=COFFEE, id=activity["id"], content=content("brewing"))
        assert updated["activity"]["content"]["state"] == {"stage": "brewing"}
        # Standard apps get 2 deliveries/s; the start was one, so an update within half a
        # second of it (in the daemon's own clock: a slow machine may take longer) waits its
        # turn, and a later one is delivered at once.
        since_start = updated["activity"]["updatedAt"] - activity["createdAt"]
        if since_start < 0.5 - 1e-3:
            assert updated["delivery"]["throttled"] is True, (since_start, updated)
            assert abs(updated["delivery"]["deliverAt"] - (activity["createdAt"] + 0.5)) < 1e-3
        elif since_start > 0.5 + 1e-3:
            assert updated["delivery"]["throttled"] is False, (since_start, updated)

        ended = producer.End(app=COFFEE, id=activity["id"], content=content("ready"),
                             dismissalPolicy={"kind": "default"})
        assert ended["activity"]["state"] == "ended"
        assert ended["activity"]["endReason"] == "app"
        # The default dismissal: MaxDismissalDelaySec=, 4 h after it ended (the daemon's clock).
        assert abs(ended["activity"]["dismissAt"] - (ended["activity"]["endedAt"] + 4 * 3600)) < 1e-3, ended

        listed = producer.List(app=COFFEE)["activities"]
        assert [a["id"] for a in listed] == [activity["id"]]
        assert listed[0]["content"]["state"] == {"stage": "ready"}
        assert producer.List(app=COFFEE, states=["active"])["activities"] == []


def test_idempotent_key_returns_the_same_activity(daemon):
    with daemon.connect("org.island.Producer") as producer:
        first = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("a"), key="order-17")
        again = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("a"), key="order-17")
        assert again["created"] is False
        assert again["activity"]["id"] == first["activity"]["id"]
        assert len(producer.List(app=COFFEE)["activities"]) == 1


def test_a_key_is_free_once_its_activity_has_ended(cli_daemon):
    """As a shell line runs it: a nightly job's stable key starts a new activity once the last one
    ended (while that one is still listed), the same one while it is live, also across a restart,
    and a new one after an immediate dismissal."""
    env = dict(os.environ, ISLAND_SOCKET=cli_daemon.socket, PATH=os.path.dirname(ISLAND) + ":" + os.environ["PATH"])
    line = ('a=$(island start Backup --key nightly) && island end "$a" && b=$(island start Backup --key nightly) '
            '&& island update "$b" --state \'{"n":1}\' >/dev/null && echo "$a $b"')
    result = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result
    a, b = result.stdout.split()
    assert a != b
    cli_daemon.stop()
    cli_daemon.start()
    assert ok(island(cli_daemon, "start", "Backup", "--key", "nightly")).stdout.strip() == b
    ok(island(cli_daemon, "end", b, "--dismiss", "immediate"))
    c = ok(island(cli_daemon, "start", "Backup", "--key", "nightly")).stdout.strip()
    assert c not in (a, b)


def test_a_desktop_entry_installed_while_the_daemon_runs_is_read(daemon):
    """No `island admin reload` needed, also in a data directory that did not exist when the daemon
    started; a refusal before says where the daemon looked."""
    missing = os.path.join(daemon.root, "none")  # on XDG_DATA_DIRS, not yet there
    refused = island(daemon, "start", "Backup")
    assert refused.returncode != 0
    assert "no desktop entry org.island.cli.desktop in %s/applications, %s/applications" % (daemon.share, missing) \
        in refused.stderr, refused.stderr

    # The reload comes a moment after the files change (a burst of changes is one reload):
    # each step waits for its outcome.
    os.makedirs(os.path.join(missing, "applications"))
    shutil.copy(CLI_MANIFEST, os.path.join(missing, "applications", "org.island.cli.desktop"))
    wait_for(lambda: island(daemon, "start", "Backup").returncode == 0, message="the new entry read")
    # The start may have found the entry by looking for it before refusing; the watch reads it
    # as well, by itself.
    wait_for(lambda: "reloaded the manifests" in daemon.log(), message="the watch's rescan")

    # A user's own entry without the key hides the one installed: the refusal names it.
    with open(CLI_MANIFEST) as f:
        without_key = f.read().replace("X-Island-LiveActivities=true", "X-Island-LiveActivities=false")
    entry = os.path.join(daemon.share, "applications", "org.island.cli.desktop")
    with open(entry, "w") as f:
        f.write(without_key)
    reason = "its desktop entry %s does not declare X-Island-LiveActivities=true" % entry
    wait_for(lambda: reason in island(daemon, "start", "Backup").stderr, message="the changed entry read")


def test_immediate_dismissal_removes_the_activity(daemon):
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("x"))["activity"]
        producer.End(app=COFFEE, id=a["id"], dismissalPolicy={"kind": "immediate"})
        assert producer.List(app=COFFEE)["activities"] == []
        name, params = error_of(producer.Update, app=COFFEE, id=a["id"], content=content("y"))
        assert name == "org.island.NoSuchActivity" and params["id"] == a["id"]


def test_an_ended_activity_can_be_ended_again_with_a_dismissal_policy(cli_daemon):
    """As ActivityKit's end(_:dismissalPolicy:) on an ended activity: a second end sets the
    dismissal (and final content), kept across a restart; it counts from the first end, and
    `immediate` dismisses the activity, which is then gone."""
    a = ok(island(cli_daemon, "start", "Backup", "--state", '{"n":1}')).stdout.strip()
    first = json.loads(ok(island(cli_daemon, "end", a, "--json")).stdout)
    assert first["dismissAt"] == pytest.approx(first["endedAt"] + 4 * 3600, abs=1e-3)
    again = json.loads(ok(island(cli_daemon, "end", a, "--dismiss", "10m", "--state", '{"n":2}', "--json")).stdout)
    assert again["state"] == "ended" and again["endReason"] == "app" and again["endedAt"] == first["endedAt"]
    assert again["dismissAt"] == pytest.approx(time.time() + 600, abs=60)
    assert again["content"]["state"] == {"n": 2}

    cli_daemon.stop()
    cli_daemon.start()
    [listed] = json.loads(ok(island(cli_daemon, "list", "--json", "--state", "ended")).stdout)
    assert listed["id"] == a and listed["dismissAt"] == again["dismissAt"]
    assert listed["content"]["state"] == {"n": 2}
    wait_for(lambda: activity(cli_daemon, a)["deliveredContent"]["state"] == {"n": 2}, message="the final content delivered")

    gone = json.loads(ok(island(cli_daemon, "end", a, "--dismiss", "immediate", "--json")).stdout)
    assert gone["state"] == "dismissed"
    refused = island(cli_daemon, "end", a)
    assert refused.returncode == 1 and "org.island.NoSuchActivity" in refused.stderr


def test_fast_updates_are_coalesced_and_say_so(daemon):
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("0"))["activity"]
    # The standard rate is 2/s. Eight updates written at once are taken back to back, so some
    # come within half a second of a delivery (the start's, or one of theirs): those are
    # accepted, coalesced and say when they will be delivered, a moment of the daemon's clock
    # after their update and at most half a second later; the others are delivered at once.
    raw = Connection(daemon.socket)
    raw.send(b"".join(frame({"method": "org.island.Producer.Update", "parameters": {
        "app": COFFEE, "id": a["id"], "content": content(str(n))}}) for n in range(1, 9)))
    replies = [raw.read() for _ in range(8)]
    raw.close()
    for n, reply in enumerate(replies, 1):
        assert "error" not in reply, reply
        updated, delivery = reply["parameters"]["activity"], reply["parameters"]["delivery"]
        assert updated["content"]["state"] == {"stage": str(n)}, reply
        if delivery["throttled"]:
            assert updated["updatedAt"] < delivery["deliverAt"] <= updated["updatedAt"] + 0.5 + 1e-3, reply
        else:
            assert abs(delivery["deliverAt"] - updated["updatedAt"]) < 0.1, reply
    assert any(r["parameters"]["delivery"]["throttled"] for r in replies), replies


def test_watch_streams_state_and_content(daemon):
    with daemon.connect("org.island.Producer") as producer:
        watch = Connection(daemon.socket)
        watch.call("org.island.Producer.Watch", {"app": COFFEE}, more=True)
        # Registered before anything happens: the Request below cannot escape it.
        assert watch.read()["parameters"]["event"] == {"kind": "watching"}
        a = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("ordered"))["activity"]
        event = watch.read_until(lambda m: m.get("parameters", {}).get("event", {}).get("kind") == "state")
        assert event["continues"] is True
        assert event["parameters"]["event"]["activity"]["id"] == a["id"]
        # Delivered at once or at its slot: either way the watch hears it as delivered content.
        producer.Update(app=COFFEE, id=a["id"], content=content("brewing"))
        delivered = watch.read_until(
            lambda m: m["parameters"]["event"]["kind"] == "content"
            and m["parameters"]["event"]["activity"]["deliveredContent"]["state"] == {"stage": "brewing"})
        assert delivered["parameters"]["event"]["activity"]["id"] == a["id"]
        watch.close()


def test_authorization_reports_limits_and_budgets(daemon):
    with daemon.connect("org.island.Producer") as producer:
        before = producer.Authorization(app=COFFEE)["authorization"]
        assert before["enabled"] is True and before["frequentUpdates"] is False
        assert before["limits"]["maxPayloadBytes"] == 4096
        producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("x"))
        after = producer.Authorization(app=COFFEE)["authorization"]
        assert after["remainingStarts"] == before["remainingStarts"] - 1
        assert after["activities"] == before["activities"] + 1


def test_introspection_serves_the_protocol_files(daemon):
    here = os.path.join(REPO, "Protocol")
    with daemon.connect("org.varlink.service") as service:
        info = service.GetInfo()
        assert "org.island.Producer" in info["interfaces"]
        for name in ("org.island", "org.island.Producer", "org.island.Extension", "org.island.Presenter",
                     "org.island.Admin", "org.island.Connection"):
            with open(os.path.join(here, name + ".varlink")) as f:
                assert service.GetInterfaceDescription(name)["description"] == f.read()


def test_every_lifecycle_step_is_logged_with_its_ids(daemon):
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("x"))["activity"]
        producer.End(app=COFFEE, id=a["id"], dismissalPolicy={"kind": "immediate"})
    log = daemon.log()
    # Journal field names come from these keys (ACTIVITY_ID=, APP_ID=) when stderr is the journal.
    for step in ("active", "dismissed"):
        assert any("activity %s" % step in line and "activity_id=%s" % a["id"] in line and "app_id=%s" % COFFEE in line
                   for line in log.splitlines()), log
