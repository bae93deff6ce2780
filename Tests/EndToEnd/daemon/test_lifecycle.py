"""An app's activity from start to dismissal, through the reference Python client."""

import os
import time

import pytest

from harness.paths import REPO
from harness.varlink import Connection, error_of

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
        # Standard apps get 2 deliveries/s; the start was one, so this one waits its turn.
        assert updated["delivery"]["throttled"] is True
        assert abs(updated["delivery"]["deliverAt"] - (activity["createdAt"] + 0.5)) < 1e-3

        ended = producer.End(app=COFFEE, id=activity["id"], content=content("ready"),
                             dismissalPolicy={"kind": "default"})
        assert ended["activity"]["state"] == "ended"
        assert ended["activity"]["endReason"] == "app"
        assert ended["activity"]["dismissAt"] >= time.time() + 4 * 3600 - 60

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


def test_immediate_dismissal_removes_the_activity(daemon):
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("x"))["activity"]
        producer.End(app=COFFEE, id=a["id"], dismissalPolicy={"kind": "immediate"})
        assert producer.List(app=COFFEE)["activities"] == []
        name, params = error_of(producer.Update, app=COFFEE, id=a["id"], content=content("y"))
        assert name == "org.island.NoSuchActivity" and params["id"] == a["id"]


def test_fast_updates_are_coalesced_and_say_so(daemon):
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Coffee", attributes={}, content=content("0"))["activity"]
        first = producer.Update(app=COFFEE, id=a["id"], content=content("1"))
        second = producer.Update(app=COFFEE, id=a["id"], content=content("2"))
        # The standard rate is 2/s: one of these two comes within half a second of a delivery.
        throttled = [r for r in (first, second) if r["delivery"]["throttled"]]
        assert throttled, (first, second)
        assert throttled[-1]["delivery"]["deliverAt"] > time.time() - 1
        assert second["activity"]["content"]["state"] == {"stage": "2"}


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
        time.sleep(0.6)  # past the delivery interval, so this update is delivered at once
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
