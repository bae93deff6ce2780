"""The daemon as a process and as the user's settings: configuration, reload, the admin role
and what survives a restart."""

import os
import signal
import time

import pytest
import varlink

from harness.daemon import write_manifest
from harness.processes import wait_for
from harness.varlink import Connection, error_of, subscribe_presenter

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"
FLIGHTS = "org.example.Flights"
TIMER = "org.example.Timer"
LATE = "org.example.Late"


def content(**state):
    return {"state": state}


def request(daemon, app, **extra):
    """Starts an activity for `app` on a connection of its own; returns the activity."""
    with daemon.connect("org.island.Producer") as p:
        return p.Request(app=app, type=extra.pop("type", "T"), attributes={}, content=content(), **extra)["activity"]


def request_error(daemon, app):
    with daemon.connect("org.island.Producer") as p:
        return error_of(p.Request, app=app, type="T", attributes={}, content=content())


def apps_by_id(admin):
    listed = admin.ListApps()
    return {a["id"]: a for a in listed["apps"]}, listed["enabled"]


# Configuration


def test_a_bad_configuration_stops_the_start_with_status_78(unstarted_daemon):
    daemon = unstarted_daemon("[Limits]\nBogus=1\n")
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.returncode == 78
    assert "%s:2" % daemon.config in daemon.log(), daemon.log()
    assert "Bogus" in daemon.log()


def test_a_bad_drop_in_is_named_too(unstarted_daemon):
    daemon = unstarted_daemon("[Limits]\nMaxActivities=3\n")
    os.makedirs(daemon.config + ".d")
    drop_in = os.path.join(daemon.config + ".d", "10-broken.conf")
    with open(drop_in, "w") as f:
        f.write("# a comment\n\n[Limits]\nMaxActivities=lots\n")
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.returncode == 78
    assert "%s:4" % drop_in in daemon.log(), daemon.log()


def test_no_configuration_file_at_all_means_the_defaults(unstarted_daemon):
    daemon = unstarted_daemon()
    os.remove(daemon.config)
    daemon.start()
    with daemon.connect("org.island.Admin") as admin:
        limits = admin.Status()["limits"]
    assert limits["maxActivities"] == 32 and limits["maxActivitiesPerApp"] == 5
    assert limits["maxPayloadBytes"] == 4096 and limits["startBudget"] == 10
    request(daemon, COFFEE)


def test_the_configuration_sets_the_limits(make_daemon):
    daemon = make_daemon("[Limits]\nMaxActivities=7\n[App:org.example.Coffee]\nMaxActivitiesPerApp=2\n")
    with daemon.connect("org.island.Admin") as admin:
        assert admin.Status()["limits"]["maxActivities"] == 7
        apps, _ = apps_by_id(admin)
    assert apps[COFFEE]["limits"]["maxActivitiesPerApp"] == 2
    assert apps[TIMER]["limits"]["maxActivitiesPerApp"] == 5


# Reload


def test_sighup_reads_new_manifests(daemon):
    name, params = request_error(daemon, LATE)
    assert name == "org.island.Unentitled" and params["app"] == LATE
    write_manifest(daemon, LATE)
    daemon.process.send_signal(signal.SIGHUP)

    def started():
        try:
            return request(daemon, LATE)
        except varlink.VarlinkError as error:
            assert error.error() == "org.island.Unentitled", error
            return None

    activity = wait_for(started, message="a Request for %s after SIGHUP" % LATE)
    assert activity["app"] == LATE and activity["state"] == "active"
    assert daemon.process.poll() is None, "SIGHUP must not stop the daemon"


def test_admin_reload_reads_new_manifests_and_configuration(daemon):
    name, _ = request_error(daemon, LATE)
    assert name == "org.island.Unentitled"
    write_manifest(daemon, LATE)
    with open(daemon.config, "w") as f:
        f.write("[Limits]\nMaxActivities=9\n")
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()
        assert admin.Status()["limits"]["maxActivities"] == 9
        apps, _ = apps_by_id(admin)
        assert apps[LATE]["entitled"] is True
    assert request(daemon, LATE)["app"] == LATE


def test_a_reload_with_a_bad_configuration_keeps_the_running_one(daemon):
    with open(daemon.config, "w") as f:
        f.write("[Limits]\nMaxActivities=9\n")
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()
    with open(daemon.config, "w") as f:
        f.write("[Limits]\nBogus=1\n")
    with daemon.connect("org.island.Admin") as admin:
        with pytest.raises(varlink.VarlinkError):
            admin.Reload()
        assert admin.Status()["limits"]["maxActivities"] == 9
    daemon.process.send_signal(signal.SIGHUP)
    with daemon.connect("org.island.Admin") as admin:
        assert admin.Status()["limits"]["maxActivities"] == 9
    assert daemon.process.poll() is None


def test_a_refused_reload_is_an_error_of_the_island_interfaces(daemon):
    with open(daemon.config, "w") as f:
        f.write("[Limits]\nBogus=1\n")
    with daemon.connect("org.island.Admin") as admin:
        name, params = error_of(admin.Reload)
        assert name == "org.island.InvalidConfiguration", (name, params)
        assert params["path"] == daemon.config and params["line"] == 2 and "Bogus" in params["message"]
        # The connection stays usable: the error is about the call, not the connection.
        assert admin.Status()["scope"] == "user"


# Admin


def test_list_apps_reports_flags_and_live_counts(daemon):
    request(daemon, COFFEE)
    request(daemon, COFFEE)
    with daemon.connect("org.island.Admin") as admin:
        apps, enabled = apps_by_id(admin)
    assert enabled is True
    assert {COFFEE, FLIGHTS, TIMER} <= set(apps)
    for app in (COFFEE, FLIGHTS, TIMER):
        assert apps[app]["name"] == app
        assert apps[app]["entitled"] is True
        assert apps[app]["enabled"] is True
    assert apps[COFFEE]["activities"] == 2
    assert apps[TIMER]["activities"] == 0
    assert apps[FLIGHTS]["frequentUpdatesAllowed"] is True and apps[FLIGHTS]["frequentUpdates"] is True
    assert apps[COFFEE]["frequentUpdatesAllowed"] is False and apps[COFFEE]["frequentUpdates"] is False
    assert apps[FLIGHTS]["limits"]["updatesPerSecond"] > apps[COFFEE]["limits"]["updatesPerSecond"]


def test_status_reports_counts_and_scope(daemon):
    presenter = Connection(daemon.socket)
    presenter.call("org.island.Presenter.Subscribe", {}, more=True)
    presenter.read()
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=COFFEE, type="T", attributes={}, content=content())["activity"]
        p.Request(app=COFFEE, type="T", attributes={}, content=content())
        p.End(app=COFFEE, id=a["id"])
        with daemon.connect("org.island.Admin") as admin:
            status = admin.Status()
    presenter.close()
    assert status["scope"] == "user"
    assert status["version"]
    assert status["activities"] == 2
    assert status["liveActivities"] == 1
    assert status["presenters"] == 1
    assert status["producers"] == 1
    assert status["connections"] >= 3
    assert status["uptime"] >= 0
    assert status["limits"]["maxActivities"] == 32


def test_frequent_updates_can_be_turned_off(daemon):
    with daemon.connect("org.island.Producer") as flights:
        assert flights.Authorization(app=FLIGHTS)["authorization"]["frequentUpdates"] is True
        with daemon.connect("org.island.Admin") as admin:
            admin.SetFrequentUpdates(app=FLIGHTS, enabled=False)
            apps, _ = apps_by_id(admin)
        assert apps[FLIGHTS]["frequentUpdates"] is False
        assert apps[FLIGHTS]["frequentUpdatesAllowed"] is True
        assert flights.Authorization(app=FLIGHTS)["authorization"]["frequentUpdates"] is False
        with daemon.connect("org.island.Admin") as admin:
            admin.SetFrequentUpdates(app=FLIGHTS, enabled=True)
        assert flights.Authorization(app=FLIGHTS)["authorization"]["frequentUpdates"] is True


def test_the_global_switch_denies_every_app(daemon):
    coffee = request(daemon, COFFEE)
    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(enabled=False)
        apps, enabled = apps_by_id(admin)
    assert enabled is False
    for app in (COFFEE, TIMER, FLIGHTS):
        name, params = request_error(daemon, app)
        assert name == "org.island.Denied" and params["app"] == app
    with daemon.connect("org.island.Producer") as p:
        assert p.Authorization(app=TIMER)["authorization"]["enabled"] is False
    with daemon.connect("org.island.Producer") as p:
        ended = p.List(app=COFFEE)["activities"]
        assert [a["id"] for a in ended] == [coffee["id"]]
        assert ended[0]["state"] == "ended" and ended[0]["endReason"] == "user"

    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(enabled=True)
        assert admin.ListApps()["enabled"] is True
    for app in (COFFEE, TIMER):
        assert request(daemon, app)["state"] == "active"


def test_the_global_switch_leaves_the_per_app_settings_alone(daemon):
    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(app=TIMER, enabled=False)
        admin.SetEnabled(enabled=False)
        admin.SetEnabled(enabled=True)
        apps, _ = apps_by_id(admin)
    assert apps[TIMER]["enabled"] is False
    assert apps[COFFEE]["enabled"] is True
    assert request_error(daemon, TIMER)[0] == "org.island.Denied"
    request(daemon, COFFEE)


def watch(daemon, app):
    """A Watch stream on `app`, known to be registered (it said `watching`; the call is handled
    in a task, so a call on another connection could overtake it), that has seen an event of a
    request."""
    stream = Connection(daemon.socket)
    stream.call("org.island.Producer.Watch", {"app": app}, more=True)
    assert stream.read()["parameters"]["event"] == {"kind": "watching"}
    probe = request(daemon, app, type="Probe")
    stream.read_until(lambda m: m["parameters"]["event"].get("activity", {}).get("id") == probe["id"])
    return stream


def test_a_watcher_hears_when_its_app_is_turned_off(daemon):
    stream = watch(daemon, COFFEE)
    other = watch(daemon, TIMER)
    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(app=COFFEE, enabled=False)
    event = stream.read_until(lambda m: m["parameters"]["event"]["kind"] == "authorization")["parameters"]["event"]
    assert event["authorization"]["app"] == COFFEE
    assert event["authorization"]["enabled"] is False
    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(app=COFFEE, enabled=True)
    event = stream.read_until(lambda m: m["parameters"]["event"]["kind"] == "authorization")["parameters"]["event"]
    assert event["authorization"]["enabled"] is True
    # Timer's watcher heard nothing about Coffee's settings: a request of Timer's, made after
    # both changes, is the first thing it hears about.
    marker = request(daemon, TIMER, type="Marker")
    heard = other.read_through(lambda m: m["parameters"]["event"].get("activity", {}).get("id") == marker["id"])
    assert heard[:-1] == [], heard
    stream.close()
    other.close()


def test_a_watcher_hears_about_frequent_updates(daemon):
    stream = watch(daemon, FLIGHTS)
    with daemon.connect("org.island.Admin") as admin:
        admin.SetFrequentUpdates(app=FLIGHTS, enabled=False)
    event = stream.read_until(lambda m: m["parameters"]["event"]["kind"] == "authorization")["parameters"]["event"]
    assert event["authorization"]["frequentUpdates"] is False
    stream.close()


# Restart


def test_a_restart_keeps_activities_layouts_and_settings(daemon):
    layout = {"chip": "Coffee", "compactTrailing": {"type": "text", "template": "{{state.stage}}"}}
    with daemon.connect("org.island.Producer") as p:
        kept = p.Request(app=COFFEE, type="Order", attributes={"drink": "tea"},
                         content={"state": {"stage": "ordered"}, "relevanceScore": 3})["activity"]
        ended = p.Request(app=COFFEE, type="Order", attributes={}, content=content())["activity"]
        p.End(app=COFFEE, id=ended["id"], content=content(stage="done"))
    with daemon.connect("org.island.Extension") as ext:
        ext.RegisterLayout(app=COFFEE, type="Order", layout=layout)
    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(app=TIMER, enabled=False)
        admin.SetFrequentUpdates(app=FLIGHTS, enabled=False)

    assert daemon.stop() == 0
    daemon.start()

    with daemon.connect("org.island.Producer") as p:
        listed = {a["id"]: a for a in p.List(app=COFFEE)["activities"]}
    assert set(listed) == {kept["id"], ended["id"]}
    assert listed[kept["id"]]["state"] == "active"
    assert listed[kept["id"]]["attributes"] == {"drink": "tea"}
    assert listed[kept["id"]]["content"]["state"] == {"stage": "ordered"}
    assert listed[kept["id"]]["content"]["relevanceScore"] == 3
    assert listed[ended["id"]]["state"] == "ended" and listed[ended["id"]]["content"]["state"] == {"stage": "done"}
    with daemon.connect("org.island.Extension") as ext:
        assert ext.ListLayouts(app=COFFEE)["layouts"] == [{"type": "Order", "layout": layout}]
    with daemon.connect("org.island.Admin") as admin:
        apps, enabled = apps_by_id(admin)
    assert enabled is True
    assert apps[TIMER]["enabled"] is False
    assert apps[FLIGHTS]["frequentUpdates"] is False
    assert apps[COFFEE]["activities"] == 1
    assert request_error(daemon, TIMER)[0] == "org.island.Denied"
    # The restored island shows the restored activity with its layout.
    stream, snapshot = subscribe_presenter(daemon)
    stream.close()
    assert snapshot["island"]["attached"] == kept["id"]
    item = next(i for i in snapshot["items"] if i["id"] == kept["id"])
    assert item["defaultLayout"] is False and item["layout"] == layout


def test_a_restart_keeps_the_global_switch(daemon):
    with daemon.connect("org.island.Admin") as admin:
        admin.SetEnabled(enabled=False)
    assert daemon.stop() == 0
    daemon.start()
    with daemon.connect("org.island.Admin") as admin:
        assert admin.ListApps()["enabled"] is False
    assert request_error(daemon, COFFEE)[0] == "org.island.Denied"


def test_a_restart_keeps_the_budgets(make_daemon):
    daemon = make_daemon("[App:org.example.Coffee]\nStartBudget=2\nAlertBudget=1\n")
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=COFFEE, type="T", attributes={}, content=content())["activity"]
        p.Request(app=COFFEE, type="T", attributes={}, content=content())
        assert p.Update(app=COFFEE, id=a["id"], content=content(n=1), alert={"title": "t", "body": "b"})["delivery"]["alerted"]
    assert daemon.stop() == 0
    daemon.start()
    with daemon.connect("org.island.Producer") as p:
        authorization = p.Authorization(app=COFFEE)["authorization"]
        assert authorization["remainingStarts"] == 0 and authorization["remainingAlerts"] == 0
        name, params = error_of(p.Request, app=COFFEE, type="T", attributes={}, content=content())
        assert name == "org.island.StartBudgetExceeded" and params["limit"] == 2
        delivery = p.Update(app=COFFEE, id=a["id"], content=content(n=2), alert={"title": "t", "body": "b"})["delivery"]
        assert delivery["alertSuppressed"] is True


def test_start_budget_retry_after_is_seconds_from_now(make_daemon):
    daemon = make_daemon("[App:org.example.Coffee]\nStartBudget=1\n")
    with daemon.connect("org.island.Producer") as p:
        before = time.monotonic()
        p.Request(app=COFFEE, type="T", attributes={}, content=content())
        name, params = error_of(p.Request, app=COFFEE, type="T", attributes={}, content=content())
        took = time.monotonic() - before
    assert name == "org.island.StartBudgetExceeded"
    # org.island.varlink: how many seconds from now the next start is allowed: the window less
    # the time between the start and the refusal, which is at most what the two calls took
    # here (measured, so a slow machine widens the bound by as much as it is slow), give or
    # take a second of rounding. Not a date.
    assert 60 - took - 1 <= params["retryAfter"] <= 60, (params, took)
