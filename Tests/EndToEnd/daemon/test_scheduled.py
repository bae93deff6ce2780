"""Scheduled starts (Request's `start`): pending until the date — listed to its app, shown by
no presenter — then started with its alert; across a restart and a kill -9 too, and at once,
saying so, when the date passed while the daemon was down.

Nothing here measures a gap: a start date is a wall-clock date the daemon and the test share,
so "not before" is checked as an order (the item reaches a presenter no earlier than its date,
by the test's own clock read after receiving it; and nothing about it comes before a marker
caused while it was still pending)."""

import json
import time

from harness.paths import LIVENESS
from harness.processes import wait_for
from harness.varlink import error_of, next_update, subscribe_presenter

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"
ALERT = {"title": "Doors open", "body": "Gate B"}
# Short, so the tests do not idle; the rules checked do not depend on it.
OFFSET = 3.0


def mentions(update, activity_id):
    """Whether a presenter update says anything of the activity."""
    island = update.get("island") or {}
    return (any(i["id"] == activity_id for i in update.get("items", []))
            or activity_id in update.get("removed", [])
            or activity_id in (island.get("attached"), island.get("detached"))
            or activity_id in island.get("lockScreen", [])
            or (update.get("alert") or {}).get("id") == activity_id)


def schedule(producer, start, app=COFFEE):
    return producer.Request(app=app, type="Concert", attributes={"hall": "A"}, content={"state": {"doors": "closed"}},
                            start=start, alert=ALERT)["activity"]


def state_of(daemon, activity_id, app=COFFEE):
    with daemon.connect("org.island.Producer") as p:
        return next(a for a in p.List(app=app)["activities"] if a["id"] == activity_id)


def first_sight(stream, activity_id):
    """The first presenter update that mentions the activity, and the test's clock then."""
    update = next_update(stream, lambda u: mentions(u, activity_id), timeout=LIVENESS + OFFSET)
    return update, time.time()


def test_pending_until_its_date_then_shown_with_its_alert(daemon):
    stream, snapshot = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
        start = time.time() + OFFSET
        pending = schedule(coffee, start)
        assert pending["state"] == "pending" and pending["start"] == start
        # Its app lists it, and may change what it will start with.
        assert [a["state"] for a in coffee.List(app=COFFEE)["activities"]] == ["pending"]
        delivery = coffee.Update(app=COFFEE, id=pending["id"], content={"state": {"doors": "opening"}},
                                 alert={"title": "x", "body": "y"})["delivery"]
        assert delivery["alertSuppressed"] and delivery["alertSuppressedReason"] == "pending"
        # A marker caused after both: what a presenter heard before it says nothing of the
        # pending activity — checked when it was still pending after the marker arrived.
        marker = timer.Request(app=TIMER, type="Timer", attributes={}, content={"state": {}})["activity"]
        before = stream.read_through(lambda m: any(i["id"] == marker["id"] for i in m["parameters"]["update"].get("items", [])))
        still_pending = state_of(daemon, pending["id"])["state"] == "pending"
        if still_pending:
            assert not any(mentions(m["parameters"]["update"], pending["id"]) for m in before)
            # Nor does a presenter subscribing now see it.
            late, late_snapshot = subscribe_presenter(daemon)
            assert not mentions(late_snapshot, pending["id"])
            assert all(i["id"] != pending["id"] for i in late_snapshot["items"])
            late.close()
        update, seen_at = first_sight(stream, pending["id"])
        assert seen_at >= start, "shown before its date"
        [item] = [i for i in update["items"] if i["id"] == pending["id"]]
        assert item["state"] == "active" and item["content"]["state"] == {"doors": "opening"}
        assert update["alert"]["id"] == pending["id"] and update["alert"]["title"] == "Doors open"
        started = state_of(daemon, pending["id"])
        assert started["state"] == "active" and "startedLate" not in started
    stream.close()


def test_a_start_without_an_alert_is_refused_by_name(daemon):
    with daemon.connect("org.island.Producer") as p:
        start = time.time() + 600
        name, parameters = error_of(p.Request, app=COFFEE, type="Concert", attributes={}, content={"state": {}}, start=start)
        assert name == "org.island.StartAlertRequired" and parameters == {"start": start}
        assert p.List(app=COFFEE)["activities"] == []


def test_the_start_budget_is_spent_when_requested(make_daemon):
    daemon = make_daemon("[Limits]\nStartBudget=1\n")
    with daemon.connect("org.island.Producer") as p:
        schedule(p, time.time() + 600)
        assert p.Authorization(app=COFFEE)["authorization"]["remainingStarts"] == 0
        name, _ = error_of(p.Request, app=COFFEE, type="Coffee", attributes={}, content={"state": {}})
        assert name == "org.island.StartBudgetExceeded"


def restart_with(daemon, how):
    if how == "kill -9":
        daemon.kill()
    else:
        daemon.stop()
    daemon.start()


def check_restart(daemon, how):
    with daemon.connect("org.island.Producer") as p:
        start = time.time() + OFFSET
        pending = schedule(p, start)
    restart_with(daemon, how)
    stream, snapshot = subscribe_presenter(daemon)
    listed = state_of(daemon, pending["id"])
    if listed["state"] == "pending":
        # Back before its date: still pending, and no presenter was shown it.
        assert not mentions(snapshot, pending["id"])
        update, seen_at = first_sight(stream, pending["id"])
        assert seen_at >= start, "shown before its date"
        assert update["alert"]["id"] == pending["id"]
        assert "startedLate" not in state_of(daemon, pending["id"])
    else:
        # The machine took longer than the offset to restart: the date passed while the daemon
        # was down, which the next test checks on purpose.
        assert listed["state"] == "active" and listed["startedLate"] == "daemonDown"
    stream.close()


def test_a_pending_activity_survives_a_restart(daemon):
    check_restart(daemon, "restart")


def test_a_pending_activity_survives_a_kill_9(daemon):
    check_restart(daemon, "kill -9")


def test_a_date_passed_while_down_starts_it_at_once_saying_so(daemon):
    with daemon.connect("org.island.Producer") as p:
        start = time.time() + 1
        pending = schedule(p, start)
    daemon.kill()
    # Waiting for a date to pass, not for the daemon to do something.
    wait_for(lambda: time.time() > start + 0.5, message="the start date to pass")
    daemon.start()
    stream, snapshot = subscribe_presenter(daemon)
    if not mentions(snapshot, pending["id"]):
        first_sight(stream, pending["id"])
    started = state_of(daemon, pending["id"])
    assert started["state"] == "active" and started["startedLate"] == "daemonDown" and started["start"] == start
    assert "started late" in daemon.log()
    stream.close()


def test_island_start_at_schedules_and_says_clearly_what_it_takes(daemon):
    from harness.cli import activities, island, ok
    app = ("--app", COFFEE)
    pending = ok(island(daemon, "start", "Concert", *app, "--at", "+1h", "--alert-title", "Doors open")).stdout.strip()
    [listed] = activities(daemon, *app, "--state", "pending")
    assert listed["id"] == pending and listed["start"] > time.time() + 3000
    # An ISO 8601 date with its zone is that instant.
    iso = ok(island(daemon, "start", "Concert", *app, "--at", "2099-01-15T08:00:00Z", "--alert-title", "Later", "--json")).stdout
    assert '"start":4072147200.0' in iso.replace(" ", "")
    # The table says when a pending activity starts, not when it was asked for (2099's date,
    # in the local time zone, whichever side of midnight that puts it).
    later = json.loads(iso)["id"]
    [row] = [line for line in ok(island(daemon, "list", *app)).stdout.splitlines() if line.startswith(later)]
    assert "pending" in row and " 2099-01-1" in row, row
    # A date already past is refused rather than started at once as if it were scheduled.
    listed_before = len(activities(daemon, *app))
    past = island(daemon, "start", "Concert", *app, "--at", "2020-01-15T08:00:00Z", "--alert-title", "x")
    assert past.returncode == 2 and "in the past" in past.stderr and "without --at" in past.stderr, past.stderr
    assert len(activities(daemon, *app)) == listed_before
    # Anything else is refused, saying what would do.
    bad = island(daemon, "start", "Concert", *app, "--at", "tomorrow", "--alert-title", "x")
    assert bad.returncode == 2 and "+10m" in bad.stderr and "ISO 8601" in bad.stderr, bad.stderr
    # And the alert is required, by name.
    missing = island(daemon, "start", "Concert", *app, "--at", "+1h")
    assert missing.returncode == 1 and "StartAlertRequired" in missing.stderr, missing.stderr
