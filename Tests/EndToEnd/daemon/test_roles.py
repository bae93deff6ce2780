"""One role per connection; apps see only their own activities."""

import pytest

from harness.varlink import error_of

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"


def test_an_extension_cannot_request(daemon):
    import varlink
    with varlink.Client(address=daemon.address) as client:
        with client.open("org.island.Extension") as ext:
            ext.ListLayouts(app=COFFEE)
            # Same connection, another role.
            producer = client.open("org.island.Producer", connection=ext._connection)
            name, params = error_of(producer.Request, app=COFFEE, type="T", attributes={}, content={"state": {}})
            assert name == "org.island.PermissionDenied" and params["role"] == "producer"


def test_an_app_cannot_subscribe(daemon):
    import varlink
    with varlink.Client(address=daemon.address) as client:
        with client.open("org.island.Producer") as producer:
            producer.List(app=COFFEE)
            presenter = client.open("org.island.Presenter", connection=producer._connection)
            name, params = error_of(presenter.Interact, action="collapse")
            assert name == "org.island.PermissionDenied" and params["role"] == "presenter"


def test_app_b_cannot_touch_app_a(daemon):
    with daemon.connect("org.island.Producer") as a, daemon.connect("org.island.Producer") as b:
        activity = a.Request(app=COFFEE, type="T", attributes={}, content={"state": {}})["activity"]
        b.List(app=TIMER)
        name, params = error_of(b.End, app=TIMER, id=activity["id"])
        assert name == "org.island.NoSuchActivity" and params["id"] == activity["id"]
        assert b.List(app=TIMER)["activities"] == []
        assert a.List(app=COFFEE)["activities"][0]["state"] == "active"


def test_a_connection_acts_for_one_app(daemon):
    with daemon.connect("org.island.Producer") as p:
        p.List(app=COFFEE)
        name, params = error_of(p.List, app=TIMER)
        assert name == "org.island.PermissionDenied"
        assert COFFEE in params["reason"]
