"""What the user does on the island reaches the app; alerts; what happens to an activity when
its app goes away; layouts registered by extensions."""


import pytest

from harness.processes import wait_for
from harness.varlink import Connection, error_of, next_item, next_update, subscribe_presenter

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"

ORDER_URL = "https://example.org/order"
LAYOUT = {
    "url": ORDER_URL,
    "chip": "Order",
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.stage}}"},
    "expanded": {"bottom": {"type": "button", "action": "pause", "label": "Pause", "priority": 1}},
}


def content(**state):
    return {"state": state}


def event_of(message):
    return message["parameters"]["event"]


class App:
    """A producer connection and a Watch stream of one app, the watch known to be registered
    (it said `watching`: the call is handled in a task, so a call on another connection could
    overtake it) and to hear the app (it has seen the state event of a probe activity)."""

    def __init__(self, daemon, app):
        self.app = app
        self.watch = Connection(daemon.socket)
        self.watch.call("org.island.Producer.Watch", {"app": app}, more=True)
        assert event_of(self.watch.read()) == {"kind": "watching"}
        self._client = daemon.connect("org.island.Producer")
        self.producer = self._client.__enter__()
        probe = self.request(type="Probe")
        self.next_event(lambda e: e.get("activity", {}).get("id") == probe["id"])

    def request(self, type="Order", **extra):
        return self.producer.Request(app=self.app, type=type, attributes=extra.pop("attributes", {}),
                                     content=extra.pop("content", content(stage="ordered")), **extra)["activity"]

    def next_event(self, predicate):
        return event_of(self.watch.read_until(lambda m: predicate(event_of(m))))

    def events_until(self, predicate):
        """The events before the next one that matches (which it skips)."""
        return [event_of(m) for m in self.watch.read_through(lambda m: predicate(event_of(m)))[:-1]]

    def close(self):
        self.watch.close()
        self._client.__exit__(None, None, None)


@pytest.fixture
def coffee(daemon):
    app = App(daemon, COFFEE)
    yield app
    app.close()


def register_layout(daemon, app, type, layout):
    with daemon.connect("org.island.Extension") as ext:
        ext.RegisterLayout(app=app, type=type, layout=layout)


# Interactions


def test_a_tap_opens_the_layout_url_and_tells_the_app(daemon, coffee):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    a = coffee.request()
    with daemon.connect("org.island.Presenter") as presenter:
        assert presenter.Interact(action="tap", id=a["id"]) == {"url": ORDER_URL}
    event = coffee.next_event(lambda e: e["kind"] == "tap")
    assert event["url"] == ORDER_URL
    assert event["activity"]["id"] == a["id"]


def test_a_tap_without_a_layout_url_opens_nothing(daemon, coffee):
    a = coffee.request(type="Plain")
    with daemon.connect("org.island.Presenter") as presenter:
        assert presenter.Interact(action="tap", id=a["id"]).get("url") is None
    event = coffee.next_event(lambda e: e["kind"] == "tap")
    assert event["activity"]["id"] == a["id"] and event.get("url") is None


def test_a_tap_url_template_is_rendered(daemon, coffee):
    register_layout(daemon, COFFEE, "Order", dict(LAYOUT, url="https://example.org/orders/{{attributes.order}}"))
    a = coffee.request(attributes={"order": "A17"})
    with daemon.connect("org.island.Presenter") as presenter:
        assert presenter.Interact(action="tap", id=a["id"])["url"] == "https://example.org/orders/A17"
    assert coffee.next_event(lambda e: e["kind"] == "tap")["url"] == "https://example.org/orders/A17"


def test_a_button_goes_to_the_app(daemon, coffee):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    a = coffee.request()
    with daemon.connect("org.island.Presenter") as presenter:
        assert presenter.Interact(action="button", id=a["id"], button="pause").get("url") is None
    event = coffee.next_event(lambda e: e["kind"] == "button")
    assert event["action"] == "pause"
    assert event["activity"]["id"] == a["id"]


def test_taps_and_buttons_reach_only_the_owning_app(daemon, coffee):
    timer = App(daemon, TIMER)
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    a = coffee.request()
    with daemon.connect("org.island.Presenter") as presenter:
        presenter.Interact(action="tap", id=a["id"])
        presenter.Interact(action="button", id=a["id"], button="pause")
    coffee.next_event(lambda e: e["kind"] == "button")
    # Timer's watch hears nothing of them: a request of Timer's, made after both, is the first
    # thing it hears.
    marker = timer.request(type="Marker")
    assert timer.events_until(lambda e: e.get("activity", {}).get("id") == marker["id"]) == []
    timer.close()


def test_only_a_button_the_live_activity_draws_reaches_the_app(daemon, coffee):
    """A press of a button the layout does not have, or on an activity that has ended, is refused by
    name and never reaches the app's Watch."""
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    a = coffee.request()
    plain = coffee.request(type="Plain")  # the default layout: no buttons at all
    with daemon.connect("org.island.Presenter") as presenter:
        assert error_of(presenter.Interact, action="button", id=a["id"], button="explode") == \
            ("org.island.NoSuchButton", {"id": a["id"], "button": "explode"})
        assert error_of(presenter.Interact, action="button", id=plain["id"], button="pause")[0] == "org.island.NoSuchButton"
        coffee.producer.End(app=COFFEE, id=a["id"], dismissalPolicy={"kind": "default"})
        assert error_of(presenter.Interact, action="button", id=a["id"], button="pause") == \
            ("org.island.ActivityEnded", {"id": a["id"], "state": "ended"})
        # A tap on the ended card still opens the app, as on iOS.
        assert presenter.Interact(action="tap", id=a["id"]) == {"url": ORDER_URL}
    events = coffee.events_until(lambda e: e["kind"] == "tap")
    assert [e for e in events if e["kind"] == "button"] == [], events


def test_an_immediate_dismissal_is_heard_as_ended_then_dismissed(daemon, coffee):
    """The Watch promises `ended` before `dismissed`, also when both come at once."""
    for dismiss in ("End", "Interact"):
        a = coffee.request()
        if dismiss == "End":
            coffee.producer.End(app=COFFEE, id=a["id"], dismissalPolicy={"kind": "immediate"})
        else:
            with daemon.connect("org.island.Presenter") as presenter:
                presenter.Interact(action="dismiss", id=a["id"])
        states = [e["activity"]["state"] for e in coffee.events_until(
            lambda e: e["kind"] == "state" and e["activity"]["state"] == "dismissed") if e["kind"] == "state"]
        assert states[-1:] == ["ended"], (dismiss, states)


def test_a_dismissal_removes_the_activity_and_tells_the_app(daemon, coffee):
    a = coffee.request()
    with daemon.connect("org.island.Presenter") as presenter:
        presenter.Interact(action="dismiss", id=a["id"])
    event = coffee.next_event(lambda e: e["kind"] == "state" and e["activity"]["id"] == a["id"]
                              and e["activity"]["state"] != "active")
    assert event["activity"]["state"] == "ended"  # first, though it is dismissed at once
    assert event["activity"]["endReason"] == "user"
    event = coffee.next_event(lambda e: e["kind"] == "state" and e["activity"]["id"] == a["id"])
    assert event["activity"]["state"] == "dismissed"
    assert a["id"] not in [x["id"] for x in coffee.producer.List(app=COFFEE)["activities"]]


def test_interactions_on_unknown_activities_are_refused(daemon):
    with daemon.connect("org.island.Presenter") as presenter:
        for action in ("tap", "dismiss", "expand"):
            name, params = error_of(presenter.Interact, action=action, id="nope")
            assert name == "org.island.NoSuchActivity" and params["id"] == "nope", action
        name, params = error_of(presenter.Interact, action="button", id="nope", button="pause")
        assert name == "org.island.NoSuchActivity"


# Alerts


def test_an_alert_expands_the_island_and_reaches_presenters(daemon, coffee):
    a = coffee.request()
    stream, _ = subscribe_presenter(daemon)
    updated = coffee.producer.Update(app=COFFEE, id=a["id"], content=content(stage="ready"),
                                     alert={"title": "Coffee", "body": "Your order is ready"})
    assert updated["delivery"]["alerted"] is True
    assert updated["delivery"]["alertSuppressed"] is False
    assert updated["delivery"]["throttled"] is False, "an alert is delivered at once"
    update = next_update(stream, lambda u: u.get("alert") is not None)
    assert update["alert"] == {"id": a["id"], "title": "Coffee", "body": "Your order is ready"}
    assert update["island"]["mode"] == "expanded"
    assert update["island"]["expanded"] == a["id"]
    assert any(i["id"] == a["id"] and i["content"]["state"] == {"stage": "ready"} for i in update["items"])
    stream.close()


def test_the_alert_budget_suppresses_the_alert_not_the_update(make_daemon):
    daemon = make_daemon("[App:org.example.Coffee]\nAlertBudget=1\n")
    app = App(daemon, COFFEE)
    a = app.request()
    alert = {"title": "Coffee", "body": "ready"}
    first = app.producer.Update(app=COFFEE, id=a["id"], content=content(stage="1"), alert=alert)
    second = app.producer.Update(app=COFFEE, id=a["id"], content=content(stage="2"), alert=alert)
    assert first["delivery"]["alerted"] is True and first["delivery"]["alertSuppressed"] is False
    assert second["delivery"]["alerted"] is False and second["delivery"]["alertSuppressed"] is True
    assert second["activity"]["content"]["state"] == {"stage": "2"}
    assert app.producer.Authorization(app=COFFEE)["authorization"]["remainingAlerts"] == 0
    app.close()


# Producer death


def test_owner_gone_end_ends_and_keep_keeps(daemon):
    with daemon.connect("org.island.Producer") as p:
        ends = p.Request(app=COFFEE, type="T", attributes={}, content=content(), ownerGone="end")["activity"]
        keeps = p.Request(app=COFFEE, type="T", attributes={}, content=content(), ownerGone="keep")["activity"]
        assert ends["ownerGone"] == "end" and keeps["ownerGone"] == "keep"
    # The producer connection is closed. Each poll is a connection of its own, so no poll
    # keeps the app's producer count up.

    def states():
        with daemon.connect("org.island.Producer") as poll:
            listed = {a["id"]: a for a in poll.List(app=COFFEE)["activities"]}
        return listed if listed[ends["id"]]["state"] == "ended" else None

    listed = wait_for(states, interval=0.05, message="the ownerGone=end activity ending")
    assert listed[ends["id"]]["endReason"] == "ownerGone"
    assert listed[keeps["id"]]["state"] == "active"


def producers(daemon):
    with daemon.connect("org.island.Admin") as admin:
        return admin.Status()["producers"]


def test_owner_gone_waits_for_the_last_connection_of_the_app(daemon):
    with daemon.connect("org.island.Producer") as second:
        second.List(app=COFFEE)
        with daemon.connect("org.island.Producer") as first:
            ends = first.Request(app=COFFEE, type="T", attributes={}, content=content(), ownerGone="end")["activity"]
            assert producers(daemon) == 2
        # The daemon has seen the first connection go: the app still has the second one.
        wait_for(lambda: producers(daemon) == 1, message="the first producer's disconnect")
        assert second.List(app=COFFEE)["activities"][0]["state"] == "active"
    wait_for(lambda: producers(daemon) == 0, message="the second producer's disconnect")

    with daemon.connect("org.island.Producer") as poll:
        a = poll.List(app=COFFEE)["activities"][0]
    assert a["id"] == ends["id"]
    assert a["state"] == "ended" and a["endReason"] == "ownerGone"


# Layouts


def test_register_list_and_remove_layouts(daemon):
    with daemon.connect("org.island.Extension") as ext:
        assert ext.ListLayouts(app=COFFEE)["layouts"] == []
        ext.RegisterLayout(app=COFFEE, type="Order", layout=LAYOUT)
        ext.RegisterLayout(app=COFFEE, type="Brew", layout={"chip": "Brew"})
        assert ext.ListLayouts()["layouts"] == [
            {"type": "Brew", "layout": {"chip": "Brew"}}, {"type": "Order", "layout": LAYOUT}]
        ext.RegisterLayout(app=COFFEE, type="Brew", layout={"chip": "Brew2"})
        assert ext.ListLayouts(app=COFFEE)["layouts"][0] == {"type": "Brew", "layout": {"chip": "Brew2"}}
        ext.RemoveLayout(app=COFFEE, type="Brew")
        assert ext.ListLayouts(app=COFFEE)["layouts"] == [{"type": "Order", "layout": LAYOUT}]
    with daemon.connect("org.island.Extension") as timer_ext:
        assert timer_ext.ListLayouts(app=TIMER)["layouts"] == [], "layouts belong to their app"


def test_presenters_get_the_registered_layout_and_the_default_after_removal(daemon, coffee):
    a = coffee.request()
    stream, snapshot = subscribe_presenter(daemon)
    item = next(i for i in snapshot["items"] if i["id"] == a["id"])
    assert item["defaultLayout"] is True

    register_layout(daemon, COFFEE, "Order", LAYOUT)
    update, item = next_item(stream, a["id"])
    assert item["defaultLayout"] is False
    assert item["layout"] == LAYOUT

    with daemon.connect("org.island.Extension") as ext:
        ext.RemoveLayout(app=COFFEE, type="Order")
    update, item = next_item(stream, a["id"])
    assert item["defaultLayout"] is True
    assert item["layout"] != LAYOUT

    # A layout of another type does not touch this activity.
    register_layout(daemon, COFFEE, "Other", {"chip": "x"})
    coffee.producer.Update(app=COFFEE, id=a["id"], content=content(stage="brewing"))
    update, item = next_item(stream, a["id"])
    assert item["content"]["state"] == {"stage": "brewing"}
    assert "layout" not in item and "defaultLayout" not in item, "its layout did not change: still the default"
    stream.close()


def test_a_registered_layout_ignores_the_states_shape_and_the_default_after_removal_follows_it(daemon):
    registered = {"chip": "Coffee", "compactTrailing": {"type": "text", "template": "{{state.stage}}!"}}
    stream, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p, daemon.connect("org.island.Extension") as ext:
        a = p.Request(app=COFFEE, type="Order", attributes={}, content={"state": {"stage": "ordered"}})["activity"]
        _, item = next_item(stream, a["id"])
        assert item["defaultLayout"] is True
        default = item["layout"]

        ext.RegisterLayout(app=COFFEE, type="Order", layout=registered)
        _, item = next_item(stream, a["id"], lambda i: "layout" in i)
        assert item["defaultLayout"] is False and item["layout"] == registered

        p.Update(app=COFFEE, id=a["id"], content={"state": {"stage": "brewing", "minutes": 2}})
        _, item = next_item(stream, a["id"], lambda i: i["content"]["state"].get("minutes") == 2)
        assert "layout" not in item, "a registered layout does not follow the state's shape"

        ext.RemoveLayout(app=COFFEE, type="Order")
        _, item = next_item(stream, a["id"], lambda i: "layout" in i)
        assert item["defaultLayout"] is True
        assert item["layout"] != default, "the default is worked out from the state as it is now"
        assert item["layout"]["compactTrailing"]["template"] == "{{humanized(state.stage)}}"
    stream.close()


def test_a_new_activity_of_a_registered_type_carries_the_layout(daemon, coffee):
    register_layout(daemon, COFFEE, "Order", LAYOUT)
    stream, _ = subscribe_presenter(daemon)
    a = coffee.request()
    update, item = next_item(stream, a["id"])
    assert item["defaultLayout"] is False and item["layout"] == LAYOUT
    stream.close()


def test_an_alert_expansion_returns_to_the_resting_island(daemon, coffee):
    a = coffee.request(content={"state": {}, "relevanceScore": 5})  # above the fixture's probe
    stream, _ = subscribe_presenter(daemon)
    coffee.producer.Update(app=COFFEE, id=a["id"], content={"state": {"stage": "ready"}, "relevanceScore": 5},
                           alert={"title": "t", "body": "b"})
    next_update(stream, lambda u: "island" in u and u["island"]["mode"] == "expanded")
    # "for a few seconds, then returns" (docs/design.md §5); the deadline only bounds the wait.
    update = next_update(stream, lambda u: "island" in u and u["island"]["mode"] != "expanded")
    assert update["island"]["mode"] == "compact"
    assert update["island"]["attached"] == a["id"]
    stream.close()


def test_an_alert_on_a_throttled_activity_is_delivered_at_once(make_daemon):
    # One delivery a minute, so the update after the start is throttled however slowly it comes.
    coffee = App(make_daemon("[App:org.example.Coffee]\nUpdatesPerSecond=0.0167\n"), COFFEE)
    a = coffee.request()
    throttled = coffee.producer.Update(app=COFFEE, id=a["id"], content=content(stage="1"))
    assert throttled["delivery"]["throttled"] is True
    alerted = coffee.producer.Update(app=COFFEE, id=a["id"], content=content(stage="2"), alert={"title": "t", "body": "b"})
    assert alerted["delivery"]["throttled"] is False and alerted["delivery"]["alerted"] is True
    assert alerted["activity"]["deliveredContent"]["state"] == {"stage": "2"}
    coffee.close()


def test_an_after_dismissal_needs_a_date(daemon, coffee):
    a = coffee.request()
    name, params = error_of(coffee.producer.End, app=COFFEE, id=a["id"], dismissalPolicy={"kind": "after"})
    assert name == "org.varlink.service.InvalidParameter" and params["parameter"] == "dismissalPolicy.date"
    assert a["id"] in [x["id"] for x in coffee.producer.List(app=COFFEE, states=["active"])["activities"]]


def install_layout(daemon, app, type, layout):
    import json
    import os
    folder = os.path.join(daemon.share, "island", "layouts", app)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, type + ".json"), "w") as f:
        json.dump(layout, f)


def test_installed_layouts_are_served_and_a_registered_one_wins(daemon, coffee):
    installed = {"chip": "Inst", "url": "https://example.org/installed"}
    install_layout(daemon, COFFEE, "Order", installed)
    # The daemon picks the file up by itself too; its rescan redraws every item, so it is
    # waited for before the stream below counts items.
    wait_for(lambda: "reloaded the manifests and layouts" in daemon.log(), message="the layout picked up")
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()
    a = coffee.request()
    stream, snapshot = subscribe_presenter(daemon)
    item = next(i for i in snapshot["items"] if i["id"] == a["id"])
    assert item["defaultLayout"] is False and item["layout"] == installed
    with daemon.connect("org.island.Presenter") as presenter:
        assert presenter.Interact(action="tap", id=a["id"])["url"] == "https://example.org/installed"

    register_layout(daemon, COFFEE, "Order", LAYOUT)
    _, item = next_item(stream, a["id"])
    assert item["layout"] == LAYOUT

    with daemon.connect("org.island.Extension") as ext:
        ext.RemoveLayout(app=COFFEE, type="Order")
    update, item = next_item(stream, a["id"])
    assert item["defaultLayout"] is False and item["layout"] == installed
    stream.close()
