"""Arbitration as apps come and go, seen by presenters, and presenters that fall behind."""


from harness.varlink import Connection, next_item, next_update, subscribe_presenter

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"


def next_island(stream, predicate):
    """The next update whose island (a delta has one only when the island changed) matches."""
    return next_update(stream, lambda u: "island" in u and predicate(u["island"]))


def test_compact_then_minimal_then_compact(daemon):
    stream, snapshot = subscribe_presenter(daemon)
    assert snapshot["island"]["mode"] == "none"
    with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
        c = coffee.Request(app=COFFEE, type="Coffee", attributes={}, content={"state": {"stage": "ordered"}})["activity"]
        update = next_island(stream, lambda i: i["mode"] == "compact")
        assert update["island"]["attached"] == c["id"]
        assert any(item["id"] == c["id"] and item["defaultLayout"] for item in update["items"])

        t = timer.Request(app=TIMER, type="Timer", attributes={}, content={"state": {}, "relevanceScore": 10})["activity"]
        update = next_island(stream, lambda i: i["mode"] == "minimal")
        assert update["island"]["attached"] == t["id"]
        assert update["island"]["detached"] == c["id"]
        assert update["island"]["lockScreen"] == [t["id"], c["id"]]

        timer.End(app=TIMER, id=t["id"], dismissalPolicy={"kind": "immediate"})
        update = next_island(stream, lambda i: i["mode"] == "compact")
        assert update["island"]["attached"] == c["id"]
        assert t["id"] in update["removed"]
    stream.close()


def test_deltas_leave_out_the_island_and_layouts_that_did_not_change(daemon):
    stream, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=COFFEE, type="Coffee", attributes={}, content={"state": {"stage": "ordered"}})["activity"]
        update, item = next_item(stream, a["id"])
        assert update["island"]["attached"] == a["id"], "a new activity changes the island"
        assert item["defaultLayout"] is True and item["layout"]["compactTrailing"]["template"] == "{{humanized(state.stage)}}"
        first_layout = item["layout"]

        p.Update(app=COFFEE, id=a["id"], content={"state": {"stage": "brewing"}})
        update, item = next_item(stream, a["id"], lambda i: i["content"]["state"] == {"stage": "brewing"})
        assert "island" not in update, "the island did not change"
        assert "layout" not in item and "defaultLayout" not in item, "nor did the layout"

        # A new state key changes the default layout, so it comes again.
        p.Update(app=COFFEE, id=a["id"], content={"state": {"stage": "ready", "minutes": 2}})
        update, item = next_item(stream, a["id"], lambda i: i["content"]["state"].get("minutes") == 2)
        assert "island" not in update
        assert item["defaultLayout"] is True and item["layout"] != first_layout

    # A presenter that subscribes now gets every layout in its snapshot.
    late, snapshot = subscribe_presenter(daemon)
    [item] = [i for i in snapshot["items"] if i["id"] == a["id"]]
    assert item["layout"] and item["defaultLayout"] is True and snapshot["island"]["attached"] == a["id"]
    late.close()
    stream.close()


def test_relevance_reorders_the_island_and_content_alone_does_not(daemon):
    stream, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=COFFEE, type="Coffee", attributes={}, content={"state": {"n": 0}})["activity"]
        b = p.Request(app=COFFEE, type="Coffee", attributes={}, content={"state": {"n": 0}})["activity"]
        next_island(stream, lambda i: i["lockScreen"] == [a["id"], b["id"]])

        p.Update(app=COFFEE, id=b["id"], content={"state": {"n": 1}, "relevanceScore": 10})
        update, _ = next_item(stream, b["id"], lambda i: i["content"]["state"] == {"n": 1})
        assert update["island"]["attached"] == b["id"] and update["island"]["lockScreen"] == [b["id"], a["id"]]

        p.Update(app=COFFEE, id=b["id"], content={"state": {"n": 2}, "relevanceScore": 10})
        update, _ = next_item(stream, b["id"], lambda i: i["content"]["state"] == {"n": 2})
        assert "island" not in update, "new content at the same relevance leaves the island as it is"

        p.Update(app=COFFEE, id=b["id"], content={"state": {"n": 3}})
        update, _ = next_item(stream, b["id"], lambda i: i["content"]["state"] == {"n": 3})
        assert update["island"]["attached"] == a["id"] and update["island"]["lockScreen"] == [a["id"], b["id"]]
    stream.close()


def test_expand_collapse_and_tap(daemon):
    stream, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p, daemon.connect("org.island.Presenter") as presenter:
        a = p.Request(app=COFFEE, type="Coffee", attributes={}, content={"state": {}})["activity"]
        next_island(stream, lambda i: i["mode"] == "compact")
        presenter.Interact(action="expand", id=a["id"])
        assert next_island(stream, lambda i: i["mode"] == "expanded")["island"]["expanded"] == a["id"]
        presenter.Interact(action="collapse")
        next_island(stream, lambda i: i["mode"] == "compact")
        presenter.Interact(action="dismiss", id=a["id"])
        update = next_island(stream, lambda i: i["mode"] == "none")
        assert update["island"]["lockScreen"] == []
        assert p.List(app=COFFEE)["activities"] == []
    stream.close()


def test_sequence_numbers_grow(daemon):
    stream, snapshot = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p:
        p.Request(app=COFFEE, type="Coffee", attributes={}, content={"state": {}})
        update = stream.read()["parameters"]["update"]
        assert update["kind"] == "delta"
        assert update["sequence"] > snapshot["sequence"]
    stream.close()


def test_a_stuck_presenter_does_not_slow_the_others(daemon):
    stuck = Connection(daemon.socket)
    stuck.sock.setsockopt(__import__("socket").SOL_SOCKET, __import__("socket").SO_RCVBUF, 4096)
    stuck.call("org.island.Presenter.Subscribe", {}, more=True)  # and never read again
    healthy, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p:
        activities = [p.Request(app=COFFEE, type="Coffee", attributes={"pad": "x" * 3000},
                                content={"state": {"n": 0}})["activity"] for _ in range(5)]
        last = 0
        for n in range(1, 400):
            for a in activities:
                p.Update(app=COFFEE, id=a["id"], content={"state": {"n": n, "pad": "y" * 500}})
            last = n
        # The healthy presenter keeps receiving while the stuck one holds its socket full (it
        # is never read: the stuck presenter holds it until the end of the test).
        next_item(healthy, activities[0]["id"], lambda item: item["content"]["state"]["n"] == last)
        # And the daemon still answers at once.
        assert p.List(app=COFFEE)["activities"]
    stuck.close()
    healthy.close()
