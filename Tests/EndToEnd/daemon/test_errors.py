"""Every named refusal of the daemon, with the parameters that say why."""

import os

import pytest

from harness.varlink import error_of

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"


def content(**state):
    return {"state": state}


def test_attributes_too_large(daemon):
    with daemon.connect("org.island.Producer") as p:
        name, params = error_of(p.Request, app=COFFEE, type="T", attributes={"blob": "x" * 5000}, content=content())
        assert name == "org.island.AttributesTooLarge"
        assert params["limit"] == 4096 and params["size"] > 4096
        assert params["part"] == "attributes"  # which part to make smaller
        a = p.Request(app=COFFEE, type="T", attributes={"blob": "x" * 3000}, content=content())["activity"]
        name, params = error_of(p.Update, app=COFFEE, id=a["id"], content=content(log="y" * 2000))
        assert (name, params["part"]) == ("org.island.AttributesTooLarge", "state")


def test_unentitled_apps(daemon):
    with daemon.connect("org.island.Producer") as p:
        name, params = error_of(p.Request, app="org.example.NoActivities", type="T", attributes={}, content=content())
        assert name == "org.island.Unentitled" and params["app"] == "org.example.NoActivities"
        # The entry is found, and named, but lacks the key.
        entry = os.path.join(daemon.share, "applications", "org.example.NoActivities.desktop")
        assert params["reason"] == "its desktop entry %s does not declare X-Island-LiveActivities=true" % entry
    with daemon.connect("org.island.Producer") as p:
        name, params = error_of(p.Request, app="org.example.Unknown", type="T", attributes={}, content=content())
        # No entry: where it was looked for.
        assert name == "org.island.Unentitled", params
        assert params["reason"] == "no desktop entry org.example.Unknown.desktop in %s/applications, %s/applications" % (
            daemon.share, os.path.join(daemon.root, "none")), params


def test_denied_after_the_user_turns_the_app_off(daemon):
    with daemon.connect("org.island.Producer") as p, daemon.connect("org.island.Admin") as admin:
        a = p.Request(app=COFFEE, type="T", attributes={}, content=content(n=1))["activity"]
        admin.SetEnabled(app=COFFEE, enabled=False)
        name, params = error_of(p.Request, app=COFFEE, type="T", attributes={}, content=content())
        assert name == "org.island.Denied" and params["app"] == COFFEE
        ended = p.List(app=COFFEE)["activities"][0]
        assert ended["id"] == a["id"] and ended["state"] == "ended" and ended["endReason"] == "user"
        assert p.Authorization(app=COFFEE)["authorization"]["enabled"] is False


def test_target_and_global_maximum(make_daemon):
    daemon = make_daemon("[Limits]\nMaxActivities=3\nMaxActivitiesPerApp=2\n")
    with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
        for _ in range(2):
            coffee.Request(app=COFFEE, type="T", attributes={}, content=content())
        name, params = error_of(coffee.Request, app=COFFEE, type="T", attributes={}, content=content())
        assert name == "org.island.TargetMaximumExceeded" and params == {"app": COFFEE, "limit": 2}
        timer.Request(app=TIMER, type="T", attributes={}, content=content())
        name, params = error_of(timer.Request, app=TIMER, type="T", attributes={}, content=content())
        assert name == "org.island.GlobalMaximumExceeded" and params["limit"] == 3


def test_start_budget(make_daemon):
    daemon = make_daemon("[App:org.example.Coffee]\nStartBudget=2\n")
    with daemon.connect("org.island.Producer") as p:
        for _ in range(2):
            a = p.Request(app=COFFEE, type="T", attributes={}, content=content())["activity"]
            p.End(app=COFFEE, id=a["id"], dismissalPolicy={"kind": "immediate"})
        name, params = error_of(p.Request, app=COFFEE, type="T", attributes={}, content=content())
        assert name == "org.island.StartBudgetExceeded"
        assert params["limit"] == 2 and params["window"] == 60 and params["app"] == COFFEE


def test_no_such_activity_ended_and_stale_timestamp(daemon):
    with daemon.connect("org.island.Producer") as p:
        name, params = error_of(p.Update, app=COFFEE, id="nope", content=content())
        assert name == "org.island.NoSuchActivity" and params["id"] == "nope"
        a = p.Request(app=COFFEE, type="T", attributes={}, content=content())["activity"]
        p.Update(app=COFFEE, id=a["id"], content=content(n=2), timestamp=200.0)
        name, params = error_of(p.Update, app=COFFEE, id=a["id"], content=content(n=1), timestamp=100.0)
        assert name == "org.island.StaleTimestamp" and params["last"] == 200.0 and params["given"] == 100.0
        p.End(app=COFFEE, id=a["id"])
        name, params = error_of(p.Update, app=COFFEE, id=a["id"], content=content(n=3))
        assert name == "org.island.ActivityEnded" and params["state"] == "ended"


def test_implausible_timestamp_and_alert_too_large(daemon):
    """A timestamp in milliseconds once pinned the order for ever; a 60 KB alert went to every
    presenter."""
    import time
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=COFFEE, type="T", attributes={}, content=content())["activity"]
        millis = time.time() * 1000
        name, params = error_of(p.Update, app=COFFEE, id=a["id"], content=content(n=1), timestamp=millis)
        assert name == "org.island.ImplausibleTimestamp" and params["id"] == a["id"] and params["given"] == millis
        assert params["latest"] < millis / 100, "the daemon's clock plus 600 s"
        p.Update(app=COFFEE, id=a["id"], content=content(n=2), timestamp=time.time())  # nothing was pinned
        name, params = error_of(p.Update, app=COFFEE, id=a["id"], content=content(n=3),
                                alert={"title": "t" * 30000, "body": "b" * 30000})
        assert (name, params) == ("org.island.AlertTooLarge", {"limit": 1024, "size": 60000})
        name, params = error_of(p.End, app=COFFEE, id=a["id"], timestamp=millis)
        assert name == "org.island.ImplausibleTimestamp"


def test_a_stale_date_in_milliseconds_is_refused_by_name(daemon):
    """Accepted, a staleDate in milliseconds kept the activity from ever going stale, while a
    timestamp in milliseconds was refused: now both are, on a start, an update and an end."""
    import time
    millis = time.time() * 1000
    dated = {"state": {}, "staleDate": millis}
    with daemon.connect("org.island.Producer") as p:
        name, params = error_of(p.Request, app=COFFEE, type="T", attributes={}, content=dated)
        assert (name, params) == ("org.island.ImplausibleStaleDate", {"given": millis, "latest": 1e11})
        a = p.Request(app=COFFEE, type="T", attributes={}, content={"state": {}, "staleDate": time.time() + 60})["activity"]
        assert error_of(p.Update, app=COFFEE, id=a["id"], content=dated)[0] == "org.island.ImplausibleStaleDate"
        assert error_of(p.End, app=COFFEE, id=a["id"], content=dated)[0] == "org.island.ImplausibleStaleDate"
        assert p.List(app=COFFEE)["activities"][0]["state"] == "active"


def test_invalid_layout_names_the_path(daemon):
    with daemon.connect("org.island.Extension") as ext:
        name, params = error_of(ext.RegisterLayout, app=COFFEE, type="Coffee",
                                layout={"chip": "far too long for a chip"})
        assert name == "org.island.InvalidLayout"
        assert params["type"] == "Coffee" and params["path"] == "chip"


def test_wrongly_typed_parameters_are_refused_by_the_protocol_layer(daemon):
    from harness.varlink import Connection
    raw = Connection(daemon.socket)
    raw.call("org.island.Producer.Request", {"app": COFFEE, "type": 7, "attributes": {}, "content": {"state": {}}})
    reply = raw.read()
    assert reply["error"] == "org.varlink.service.InvalidParameter"
    assert reply["parameters"]["parameter"] == "type"
    raw.close()
