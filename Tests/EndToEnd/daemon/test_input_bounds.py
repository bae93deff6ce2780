"""What a producer or an extension may send is bounded so that everything the daemon builds
from it stays valid for every client and cheap to make (docs/design.md §3, §4, §6): nesting of
attributes and state, the length of `type` and `key`, template rendering, and the schemes a
tap may open. Driven through the real daemon with the reference Python varlink client."""

import json
import os
import sqlite3
import subprocess

import pytest
import varlink

from harness.paths import BIN_DIR, SLOWDOWN
from harness.varlink import Connection, error_of, next_item, subscribe_presenter

ISLAND = os.path.abspath(os.path.join(BIN_DIR, "island"))
COFFEE = "org.example.Coffee"
MAX_NESTING = 32


def nested(depth):
    """An object `depth` containers deep, objects and arrays alternating: {"a":[{"a":1}]} is 3."""
    value = 1
    for level in range(depth, 1, -1):
        value = [value] if level % 2 == 0 else {"a": value}
    return {"a": value}


def depth_of(value):
    if isinstance(value, dict):
        return 1 + max([depth_of(v) for v in value.values()] or [0])
    if isinstance(value, list):
        return 1 + max([depth_of(v) for v in value] or [0])
    return 0


def register_layout(daemon, app, type, layout):
    with daemon.connect("org.island.Extension") as ext:
        ext.RegisterLayout(app=app, type=type, layout=layout)


# Nesting ----------------------------------------------------------------------------------

def test_the_fixture_nests_as_deep_as_it_says():
    assert [depth_of(nested(d)) for d in (1, 2, 3, 32, 33)] == [1, 2, 3, 32, 33]


@pytest.mark.parametrize("member", ["attributes", "state"])
def test_one_level_past_the_nesting_limit_is_refused(daemon, member):
    deep = nested(MAX_NESTING + 1)
    with daemon.connect("org.island.Producer") as producer:
        attributes = deep if member == "attributes" else {}
        state = deep if member == "state" else {"n": 1}
        assert error_of(producer.Request, app=COFFEE, type="Deep", attributes=attributes, content={"state": state}) == \
            ("org.island.NestingTooDeep", {"limit": MAX_NESTING, "depth": MAX_NESTING + 1})
        if member == "state":
            a = producer.Request(app=COFFEE, type="Deep", attributes={}, content={"state": {"n": 1}})["activity"]
            for call in (lambda: producer.Update(id=a["id"], content={"state": deep}),
                         lambda: producer.End(id=a["id"], content={"state": deep}, dismissalPolicy={"kind": "immediate"})):
                assert error_of(call) == ("org.island.NestingTooDeep", {"limit": MAX_NESTING, "depth": MAX_NESTING + 1})
            assert producer.List()["activities"][0]["content"]["state"] == {"n": 1}
        else:
            assert all(x["type"] != "Deep" for x in producer.List()["activities"])


def test_the_deepest_accepted_activity_reaches_presenters_list_and_watch(daemon):
    """The property behind the limit: every message the daemon builds around an accepted
    activity (a presenter's snapshot and deltas, the app's List and Watch) is one every client
    reads. State and attributes both at the limit."""
    deepest = nested(MAX_NESTING)
    deeper_state = {"b": nested(MAX_NESTING - 1), "n": 2}
    assert depth_of(deeper_state) == MAX_NESTING
    with varlink.Client(address=daemon.address) as client, \
            client.open("org.island.Presenter") as presenter, client.open("org.island.Producer") as producer, \
            client.open("org.island.Producer") as watcher:
        a = producer.Request(app=COFFEE, type="Deep", attributes=deepest, content={"state": deepest})["activity"]
        assert a["attributes"] == deepest and a["content"]["state"] == deepest

        updates = presenter.Subscribe(_more=True)
        snapshot = next(updates)["update"]
        assert snapshot["kind"] == "snapshot"
        item = next(i for i in snapshot["items"] if i["id"] == a["id"])
        assert item["attributes"] == deepest and item["content"]["state"] == deepest

        events = watcher.Watch(app=COFFEE, _more=True)
        assert next(events)["event"]["kind"] == "watching"
        producer.Update(id=a["id"], content={"state": deeper_state})

        update = next(updates)["update"]
        while not any(i["id"] == a["id"] for i in update.get("items", [])):
            update = next(updates)["update"]
        item = next(i for i in update["items"] if i["id"] == a["id"])
        assert item["content"]["state"] == deeper_state

        event = next(events)["event"]
        while event["kind"] != "content":
            event = next(events)["event"]
        assert event["activity"]["content"]["state"] == deeper_state
        assert event["activity"]["attributes"] == deepest

        listed = next(x for x in producer.List()["activities"] if x["id"] == a["id"])
        assert listed["attributes"] == deepest and listed["content"]["state"] == deeper_state


def test_the_deepest_valid_layout_reaches_presenters(daemon):
    """Layouts carry nested data too: views at the deepest nesting validation allows (8), with
    a progress bar's segments inside the innermost."""
    view = {"type": "progress", "value": 1, "segments": [{"length": 1, "color": "#ffffff"}]}
    for _ in range(7):
        view = {"type": "vstack", "children": [view]}
    layout = {"expanded": {"center": dict(view, priority=1)}}
    register_layout(daemon, COFFEE, "Deep", layout)
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Deep", attributes=nested(MAX_NESTING), content={"state": nested(MAX_NESTING)})["activity"]
    stream, snapshot = subscribe_presenter(daemon)
    try:
        item = next(i for i in snapshot["items"] if i["id"] == a["id"])
        assert item["layout"] == layout
    finally:
        stream.close()


# type and key -----------------------------------------------------------------------------

def test_type_and_key_are_bounded_in_bytes(daemon):
    with daemon.connect("org.island.Producer") as producer:
        def request(type="T", key=None):
            return producer.Request(app=COFFEE, type=type, attributes={}, content={"state": {}}, key=key)
        assert request(type="t" * 128)["activity"]["type"] == "t" * 128
        assert error_of(request, type="t" * 129) == ("org.island.TypeTooLong", {"limit": 128, "size": 129})
        # UTF-8 bytes, not characters: 100 two-byte letters are 200 bytes.
        assert error_of(request, type="é" * 100) == ("org.island.TypeTooLong", {"limit": 128, "size": 200})
        assert error_of(request, type="t" * 200_000) == ("org.island.TypeTooLong", {"limit": 128, "size": 200_000})
        first = request(key="k" * 256)
        assert request(key="k" * 256)["created"] is False and first["created"] is True
        assert error_of(request, key="k" * 257) == ("org.island.KeyTooLong", {"limit": 256, "size": 257})
        assert sorted(len(x["type"]) for x in producer.List()["activities"]) == [1, 128]
    # A layout is registered for a type: one no activity can have is refused too.
    register_layout(daemon, COFFEE, "t" * 128, {"chip": "T"})
    with daemon.connect("org.island.Extension") as ext:
        assert error_of(ext.RegisterLayout, app=COFFEE, type="t" * 129, layout={"chip": "T"}) == \
            ("org.island.TypeTooLong", {"limit": 128, "size": 129})
        assert [layout["type"] for layout in ext.ListLayouts(app=COFFEE)["layouts"]] == ["t" * 128]


# Activities stored before the limits ------------------------------------------------------

def test_stored_activities_past_the_limits_are_skipped_at_start_with_a_warning(make_daemon):
    """A database from a daemon without the limits may hold a state nested 61 deep (which
    presenter messages would wrap past the wire's 64) or a 200 KB type. They are not restored:
    the daemon says so in its log, and everything else comes back and streams normally."""
    daemon = make_daemon()
    with daemon.connect("org.island.Producer") as producer:
        kept = producer.Request(app=COFFEE, type="Kept", attributes={}, content={"state": {"n": 1}})["activity"]
        deep = producer.Request(app=COFFEE, type="Deep", attributes={}, content={"state": {"n": 2}})["activity"]
        long = producer.Request(app=COFFEE, type="Long", attributes={}, content={"state": {"n": 3}})["activity"]
    daemon.stop()

    database = sqlite3.connect(os.path.join(daemon.state, "islandd.sqlite3"))
    with database:
        for id, change in ((deep["id"], lambda body: body["content"].update(state=nested(61)) or
                            body["deliveredContent"].update(state=nested(61))),
                           (long["id"], lambda body: body.update(type="t" * 200_000))):
            (text,) = database.execute("SELECT body FROM activities WHERE id = ?", (id,)).fetchone()
            body = json.loads(text)
            change(body)
            database.execute("UPDATE activities SET body = ? WHERE id = ?", (json.dumps(body, separators=(",", ":")), id))
    database.close()

    daemon.start()
    log = daemon.log()
    for id in (deep["id"], long["id"]):
        assert any("skipping an activity" in line and id in line for line in log.splitlines()), log
    with daemon.connect("org.island.Producer") as producer:
        assert [x["id"] for x in producer.List(app=COFFEE)["activities"]] == [kept["id"]]
    stream, snapshot = subscribe_presenter(daemon)
    try:
        assert [i["id"] for i in snapshot["items"]] == [kept["id"]]
        with daemon.connect("org.island.Producer") as producer:
            producer.Update(app=COFFEE, id=kept["id"], content={"state": {"n": 4}})
        _, item = next_item(stream, kept["id"])
        assert item["content"]["state"] == {"n": 4}
    finally:
        stream.close()


# Templates --------------------------------------------------------------------------------

def sections(depth, body="x"):
    return "{{#state.a}}" * depth + body + "{{/state.a}}" * depth


def test_a_tap_on_a_runaway_url_template_leaves_the_daemon_answering(daemon):
    """16 sections over a 3-element array is 3^16 passes. The tap's URL is rendered on the
    daemon's loop: bounded, the tap answers without a URL and a probe made meanwhile on
    another connection is answered; unbounded, the loop was pinned for 30 s and more."""
    register_layout(daemon, COFFEE, "Runaway", {"url": "https://example.org/" + sections(16),
                                                  "compactTrailing": {"type": "text", "template": sections(16)}})
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=COFFEE, type="Runaway", attributes={}, content={"state": {"a": [1, 2, 3]}})["activity"]
    tap = Connection(daemon.socket)
    probe = Connection(daemon.socket)
    try:
        tap.call("org.island.Presenter.Interact", {"action": "tap", "id": a["id"]})
        probe.call("org.island.Producer.Authorization", {"app": COFFEE})
        # Generous bounds: liveness, not speed.
        assert "authorization" in probe.read()["parameters"]
        reply = tap.read()
        assert "error" not in reply and reply["parameters"].get("url") is None
    finally:
        tap.close()
        probe.close()


def test_island_preview_of_a_runaway_template_finishes(tmp_path):
    layout = tmp_path / "runaway.json"
    layout.write_text(json.dumps({"compactTrailing": {"type": "text", "template": sections(16)},
                                  "compactLeading": {"type": "text", "template": "{{#state.items}}{{state.big}}{{/state.items}}"}}))
    state = json.dumps({"a": [1, 2, 3], "items": list(range(100)), "big": "b" * 3000})
    result = subprocess.run([ISLAND, "preview", str(layout), "--state", state, "--mode", "compact", "--json"],
                            capture_output=True, text=True, timeout=60 * SLOWDOWN)
    assert result.returncode == 0, result.stderr
    regions = json.loads(result.stdout)["regions"]
    assert regions["trailing"] == "…"
    assert regions["leading"].endswith("…") and set(regions["leading"][:-1]) == {"b"}
    assert len(regions["leading"].encode()) <= 4096


# Tap URL schemes --------------------------------------------------------------------------

MYAPP = "org.example.MyApp"

# (layout url, what a tap opens: the URL, None, or "refused" when RegisterLayout refuses it)
SCHEMES = [
    ("https://example.org/a", "https://example.org/a"),
    ("http://example.org/a", "http://example.org/a"),
    ("HTTP://example.org/a", "http://example.org/a"),
    ("HtTpS://example.org/a", "https://example.org/a"),
    ("myapp://order/1", "myapp://order/1"),
    ("MyApp://order/1", "myapp://order/1"),
    ("smb://host/share", None),
    ("sftp://host/file", None),
    ("ssh://host", None),
    ("vnc://host", None),
    ("view-source:file:///etc/passwd", None),
    ("jar:file:///tmp/x.jar!/a", None),
    ("apt:python3", None),
    ("help:gnome-help", None),
    ("mailto:someone@example.org", None),
    ("otherapp://x", None),
    ("javascript:alert(1)", "refused"),
    ("JAVASCRIPT:alert(1)", "refused"),
    (" javascript:alert(1)", "refused"),
    ("\tjavascript:alert(1)", "refused"),
    ("\u0001https://example.org", "refused"),
    ("%6Aavascript:alert(1)", "refused"),
    ("%68ttps://example.org", "refused"),
    ("file:///etc/passwd", "refused"),
]


@pytest.fixture
def myapp(daemon):
    """An app whose desktop entry declares one scheme of its own."""
    path = os.path.join(daemon.share, "applications", MYAPP + ".desktop")
    with open(path, "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=MyApp\nExec=/usr/bin/false\nX-Island-LiveActivities=true\n"
                "MimeType=text/plain;x-scheme-handler/myapp;\n")
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()
    return MYAPP


@pytest.mark.parametrize("app", [MYAPP, COFFEE])
def test_a_tap_opens_only_web_urls_and_the_apps_declared_schemes(daemon, myapp, app):
    with daemon.connect("org.island.Producer") as producer:
        a = producer.Request(app=app, type="Link", attributes={}, content={"state": {}})["activity"]
    wrong = []
    with daemon.connect("org.island.Extension") as ext, daemon.connect("org.island.Presenter") as presenter:
        for url, opens in SCHEMES:
            if opens and opens.startswith("myapp:") and app != MYAPP:
                opens = None  # Coffee declares no scheme of its own.
            try:
                ext.RegisterLayout(app=app, type="Link", layout={"url": url})
                got = presenter.Interact(action="tap", id=a["id"]).get("url")
            except varlink.VarlinkError as error:
                got = "refused" if error.error() == "org.island.InvalidLayout" else error.error()
            if got != opens:
                wrong.append((url, got, opens))
    # Every row at once, so a failure shows the whole table's verdicts: (url, opened, expected).
    assert wrong == []
