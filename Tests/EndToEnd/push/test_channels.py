"""Broadcast channels with real parts: a mosquitto broker with passwords and an ACL file (broker.py),
several islandd's connected to it as devices, and the app's backend as `island channel` — which
needs no islandd — plus mosquitto_pub for what a hostile or careless backend sends by hand.

One broker serves the module; each test has daemons (devices) and channels of its own."""

import json
import re
import os
import socket
import sqlite3
import subprocess
import time

import pytest

from harness import broker as brokers
from harness.paths import ISLAND, LIVENESS
from harness.processes import wait_for
from harness.varlink import Connection, error_of, next_item, subscribe_presenter

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not brokers.available(), reason="mosquitto, its clients or openssl are not installed "
                                                                "(scripts/install-deps.sh installs them)")]

COFFEE = "org.example.Coffee"
BACKEND = "backend-coffee"
DEVICES = ["device-%d" % n for n in range(1, 24)]
UNUSED_DEVICES = iter(DEVICES)


@pytest.fixture(scope="module")
def broker():
    b = brokers.Broker(devices=DEVICES).start()
    yield b
    b.remove()


@pytest.fixture
def device(broker, make_daemon):
    def make(config=""):
        return broker.device(make_daemon, next(UNUSED_DEVICES), config)
    return make


def create(broker, storage, *extra):
    return broker.island(BACKEND, "channel", "create", "--app", COFFEE, "--storage", storage, *extra).stdout.strip()


def publish(broker, channel, state, *extra):
    return broker.island(BACKEND, "channel", "push", channel, "--app", COFFEE, "--state", json.dumps(state), *extra)


def topic(channel):
    return "island/channels/%s/%s" % (COFFEE, channel)


def listen(daemon, channel, state):
    """An activity of Coffee on `daemon` that listens to `channel`: the Request's reply comes once
    the broker holds the subscription."""
    with daemon.connect("org.island.Producer") as producer:
        reply = producer.Request(app=COFFEE, type="Score", attributes={"match": 1}, content={"state": state}, channel=channel)
    return reply["activity"]


def state_of(daemon, activity_id):
    with daemon.connect("org.island.Producer") as producer:
        return next(a for a in producer.List(app=COFFEE)["activities"] if a["id"] == activity_id)["content"]["state"]


@pytest.mark.slow  # the refused probe is waited out: 30 s
def test_the_backend_creates_lists_reads_and_deletes_channels_without_islandd(broker):
    latest = create(broker, "latest")
    none = create(broker, "none")
    assert len(latest) == 22 and latest != none
    listed = broker.island(BACKEND, "channel", "list", "--app", COFFEE).stdout.split("\n")
    assert "%s latest" % latest in listed and "%s none" % none in listed
    publish(broker, latest, {"score": "1-0"})
    read = json.loads(broker.island(BACKEND, "channel", "read", latest, "--app", COFFEE, "--json").stdout)
    assert read["storage"] == "latest" and read["latest"]["aps"]["content-state"] == {"score": "1-0"}
    broker.island(BACKEND, "channel", "delete", latest, "--app", COFFEE)
    gone = broker.island(BACKEND, "channel", "read", latest, "--app", COFFEE, check=False)
    assert gone.returncode == 1 and "InvalidChannel" in gone.stderr
    assert latest not in broker.island(BACKEND, "channel", "list", "--app", COFFEE).stdout
    # Another app's backend sees none of Coffee's records: the ACL gives it only its own (its
    # probe never comes back either, which it waits for as long as a cluster may take: 30 s).
    refused = broker.island("backend-flights", "channel", "list", "--app", COFFEE, check=False, timeout=2 * LIVENESS)
    assert refused.returncode == 69 and none not in refused.stdout


def test_one_publish_reaches_the_presenters_of_three_daemons(broker, device):
    channel = create(broker, "latest")
    daemons = [device() for _ in range(3)]
    activities = [listen(d, channel, {"score": "0-0"}) for d in daemons]
    presenters = [subscribe_presenter(d)[0] for d in daemons]
    try:
        publish(broker, channel, {"score": "1-0"})
        for presenter, activity in zip(presenters, activities):
            next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "1-0"})
    finally:
        for presenter in presenters:
            presenter.close()


def test_a_late_subscriber_gets_the_latest_message_at_once(broker, device):
    channel = create(broker, "latest")
    publish(broker, channel, {"score": "2-1"})
    daemon = device()
    presenter, _ = subscribe_presenter(daemon)
    try:
        activity = listen(daemon, channel, {"score": "0-0"})
        # No publish after the subscription: what the broker retained is applied.
        next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "2-1"})
    finally:
        presenter.close()


def test_a_channel_that_stores_nothing_gives_a_daemon_that_was_offline_nothing(broker, device):
    channel = create(broker, "none")
    daemon = device()
    activity = listen(daemon, channel, {"score": "0-0"})
    client = "%s/%s" % (daemon.device, COFFEE)
    subscriptions = broker.subscriptions(client, topic(channel))
    daemon.stop()
    publish(broker, channel, {"score": "missed"})
    daemon.start()
    presenter, _ = subscribe_presenter(daemon)
    try:
        # Back, and subscribed again (islandd subscribes at every connection, whatever the
        # broker kept): from now on what is published reaches it.
        broker.wait_subscribed(client, topic(channel), count=subscriptions + 1)
        publish(broker, channel, {"score": "after"}, "--timestamp", str(time.time() + 1))
        # The device's session (persistent, QoS 1) kept its subscription; a message at QoS 0 is
        # never queued for it while it is away, so the next state it sees is the one after.
        _, item = next_item(presenter, activity["id"], lambda item: item["content"]["state"] != {"score": "0-0"})
        assert item["content"]["state"] == {"score": "after"}
    finally:
        presenter.close()


def test_an_expired_message_is_not_applied(broker, device):
    channel = create(broker, "latest", "--feedback")
    daemon = device()
    activity = listen(daemon, channel, {"score": "0-0"})
    answers = broker.subscriber(BACKEND, "island/%s/%s/%s/feedback" % (daemon.device, COFFEE, channel))
    try:
        now = time.time()
        # What a backend may put on a 3.1.1 broker, which keeps no message expiry: the device
        # checks the expiration it carries.
        late = json.dumps({"aps": {"timestamp": now, "event": "update", "content-state": {"score": "stale"},
                                   "expiration": now - 1}, "feedback": True})
        broker.publish(BACKEND, topic(channel), late)
        [answer] = answers.wait(1)
        assert answer["outcome"] == "refused" and answer["error"] == "org.island.ChannelMessageExpired"
        assert answer["parameters"]["channel"] == channel
        assert state_of(daemon, activity["id"]) == {"score": "0-0"}
        # The expiry has one name, a token's push's: APNs' header name beside `aps` is refused,
        # not ignored.
        header = json.dumps({"aps": {"timestamp": now + 1, "event": "update", "content-state": {"score": "header"}},
                             "apns-expiration": now + 60, "feedback": True})
        broker.publish(BACKEND, topic(channel), header)
        answer = answers.wait(2)[1]
        assert answer["outcome"] == "refused" and answer["error"] == "org.island.InvalidPushPayload", answer
        assert "aps.expiration" in answer["parameters"]["reason"]
        assert state_of(daemon, activity["id"]) == {"score": "0-0"}
    finally:
        answers.close()


@pytest.mark.slow  # the CLI collects answers for the whole of its --wait, 3 s or more
def test_the_backends_cli_says_when_a_held_message_is_delivered(broker, device):
    """`island channel push` on a channel with feedback prints each device's answer: a message
    held by a busy island said only `throttled ID`, not until when. The CLI collects answers
    for its --wait and no longer: on a machine too slow for the answer to come within it, the
    next message (held too, the island still busy) is pushed, until LIVENESS has passed."""
    channel = create(broker, "latest", "--feedback")
    daemon = device("[Daemon]\nExpandedSec=1h\n")
    activity = listen(daemon, channel, {"score": "0-0"})
    with daemon.connect("org.island.Presenter") as island:
        island.Interact(action="expand", id=activity["id"])
    deadline = time.time() + LIVENESS
    line = None
    while line is None and time.time() < deadline:
        pushed = publish(broker, channel, {"score": "1-0"}, "--priority", "1", "--timestamp", repr(time.time()), "--wait", "3")
        line = next((line for line in pushed.stdout.splitlines() if line.startswith("throttled")), None)
    assert line, "no held answer printed within %ss: %s" % (LIVENESS, pushed.stdout)
    match = re.fullmatch(r"throttled (\S+), delivered at (\S+) \(deliverAt ([0-9.e+]+)\)", line)
    assert match and match.group(1) == activity["id"], pushed.stdout
    assert float(match.group(3)) > 0 and match.group(2).startswith("20"), line


def test_another_apps_backend_cannot_publish_to_the_channel(broker, device):
    channel = create(broker, "latest", "--feedback")
    daemon = device()
    activity = listen(daemon, channel, {"score": "0-0"})
    answers = broker.subscriber(BACKEND, "island/%s/%s/%s/feedback" % (daemon.device, COFFEE, channel))
    try:
        hostile = json.dumps({"aps": {"timestamp": time.time() + 5, "event": "update", "content-state": {"score": "hacked"}},
                              "feedback": True})
        broker.publish("backend-flights", topic(channel), hostile)
        # A marker after it, from the app's own backend: the device reads its topics in order,
        # so had the hostile message come through, its answer came first.
        publish(broker, channel, {"score": "1-0"}, "--timestamp", str(time.time() + 10), "--wait", "0")
        [answer] = answers.wait(1)
        assert answer["outcome"] in ("applied", "throttled") and answer["activity"] == activity["id"]
        assert state_of(daemon, activity["id"]) == {"score": "1-0"}
        assert "Denied PUBLISH from backend-flights" in broker.log(tail=None)
    finally:
        answers.close()


def test_a_broadcast_start_is_refused(broker, device):
    channel = create(broker, "latest", "--feedback")
    refused = broker.island(BACKEND, "channel", "push", channel, "--app", COFFEE, "--event", "start", "--state", "{}", check=False)
    assert refused.returncode == 1 and "org.island.BroadcastStart" in refused.stderr
    daemon = device()
    listen(daemon, channel, {"score": "0-0"})
    answers = broker.subscriber(BACKEND, "island/%s/%s/%s/feedback" % (daemon.device, COFFEE, channel))
    try:
        start = json.dumps({"aps": {"timestamp": time.time(), "event": "start", "content-state": {}, "attributes-type": "Score",
                                    "attributes": {"match": 2}}, "feedback": True})
        broker.publish(BACKEND, topic(channel), start)
        [answer] = answers.wait(1)
        assert answer["outcome"] == "refused" and answer["error"] == "org.island.BroadcastStart"
        with daemon.connect("org.island.Producer") as producer:
            assert len(producer.List(app=COFFEE)["activities"]) == 1, "nothing started"
    finally:
        answers.close()


def test_a_start_naming_no_channel_fails_by_name(broker, device):
    daemon = device()
    with daemon.connect("org.island.Producer") as producer:
        name, parameters = error_of(producer.Request, app=COFFEE, type="Score", attributes={}, content={"state": {}},
                                    channel="not/a+channel")
        assert name == "org.island.InvalidChannel" and parameters["channel"] == "not/a+channel"
        assert producer.List(app=COFFEE)["activities"] == []


def test_a_push_to_start_may_make_the_new_activity_listen_to_a_channel(broker, device):
    channel = create(broker, "none")
    daemon = device()
    with daemon.connect("org.island.Producer") as producer:
        start_token = producer.PushToStartToken(app=COFFEE, type="Score")["pushToken"]
    started = broker.island(BACKEND, "push", start_token, "--event", "start", "--type", "Score", "--attributes", '{"match": 3}',
                            "--state", '{"score": "0-0"}', "--input-push-channel", channel)
    assert started.stdout.startswith("applied to ")
    activity_id = started.stdout.split()[2].rstrip(",")
    broker.wait_subscribed("%s/%s" % (daemon.device, COFFEE), topic(channel))
    presenter, _ = subscribe_presenter(daemon)
    try:
        publish(broker, channel, {"score": "3-3"})
        next_item(presenter, activity_id, lambda item: item["content"]["state"] == {"score": "3-3"})
    finally:
        presenter.close()


def test_an_activity_listens_to_its_channel_across_a_restart_and_stops_when_it_is_gone(broker, device):
    channel = create(broker, "none")
    daemon = device()
    activity = listen(daemon, channel, {"score": "0-0"})
    client = "%s/%s" % (daemon.device, COFFEE)
    subscriptions = broker.subscriptions(client, topic(channel))
    daemon.stop()
    daemon.start()
    # The subscription came back from the store: islandd subscribes to it again.
    broker.wait_subscribed(client, topic(channel), count=subscriptions + 1)
    presenter, _ = subscribe_presenter(daemon)
    try:
        publish(broker, channel, {"score": "restarted"})
        next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "restarted"})
    finally:
        presenter.close()
    with daemon.connect("org.island.Producer") as producer:
        producer.End(app=COFFEE, id=activity["id"], dismissalPolicy={"kind": "immediate"})
    client = "%s/%s" % (daemon.device, COFFEE)
    wait_for(lambda: ("Received UNSUBSCRIBE from %s" % client) in broker.log(tail=None), timeout=LIVENESS,
             message="the unsubscription of the channel no activity listens to")


def message(timestamp, state, priority):
    return json.dumps({"aps": {"timestamp": timestamp, "event": "update", "content-state": state, "priority": priority},
                       "feedback": True})


def test_a_channel_message_at_priority_10_spends_the_push_budget_and_5_spends_nothing(broker, device):
    """A channel's update obeys priority as a token's push does: 10 spends from the app's hourly
    budget and is refused by name beyond it; 5 is exempt (and coalesced)."""
    channel = create(broker, "latest", "--feedback")
    daemon = device("[Limits]\nPushBudget=3\n")
    activity = listen(daemon, channel, {"n": 0})
    answers = broker.subscriber(BACKEND, "island/%s/%s/%s/feedback" % (daemon.device, COFFEE, channel))
    try:
        now = time.time()
        broker.publish_lines(BACKEND, topic(channel), [message(now + n, {"n": n}, 5) for n in range(1, 21)])
        low = answers.wait(20)
        assert all(a["outcome"] in ("applied", "throttled") for a in low), low
        broker.publish_lines(BACKEND, topic(channel), [message(now + 100 + n, {"n": 100 + n}, 10) for n in range(1, 5)])
        high = sorted(answers.wait(24)[20:], key=lambda a: a["timestamp"])
        assert all(a["outcome"] in ("applied", "throttled") for a in high[:3]), high
        assert high[3]["outcome"] == "refused" and high[3]["error"] == "org.island.PushBudgetExceeded", high
        assert high[3]["parameters"]["limit"] == 3 and high[3]["parameters"]["app"] == COFFEE
        assert state_of(daemon, activity["id"]) == {"n": 103}
        # Priority 5 still passes with the budget spent, as `island channel push --priority 5`
        # sends it (it prints the devices' answers, and fails on a refusal).
        broker.publish(BACKEND, topic(channel), message(now + 200, {"n": 200}, 5))
        assert answers.wait(25)[24]["outcome"] in ("applied", "throttled")
        publish(broker, channel, {"n": 300}, "--priority", "5", "--timestamp", str(now + 300))
        assert answers.wait(26)[25]["outcome"] in ("applied", "throttled")
        assert state_of(daemon, activity["id"]) == {"n": 300}
    finally:
        answers.close()


def test_a_priority_1_message_waits_while_the_island_is_busy_and_is_applied_after(broker, device):
    """Priority 1 is delivered only when the island is not busy: while the user holds an
    activity expanded, the message is held (answered `throttled`, the state unchanged); the
    user lets go, and it is applied. At rest, one is applied at once."""
    channel = create(broker, "latest", "--feedback")
    # An expansion that does not time out within the test: only the collapse ends it.
    daemon = device("[Daemon]\nExpandedSec=1h\n")
    activity = listen(daemon, channel, {"score": "0-0"})
    presenter, _ = subscribe_presenter(daemon)
    answers = broker.subscriber(BACKEND, "island/%s/%s/%s/feedback" % (daemon.device, COFFEE, channel))
    try:
        with daemon.connect("org.island.Presenter") as island:
            island.Interact(action="expand", id=activity["id"])
        now = time.time()
        broker.publish(BACKEND, topic(channel), message(now, {"score": "1-0"}, 1))
        [held] = answers.wait(1)
        assert held["outcome"] == "throttled" and held["activity"] == activity["id"], held
        assert state_of(daemon, activity["id"]) == {"score": "0-0"}, "applied while the island was busy"
        with daemon.connect("org.island.Presenter") as island:
            island.Interact(action="collapse")
        next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "1-0"})
        # At rest: decided at once (presenters get it within the activity's update rate).
        broker.publish(BACKEND, topic(channel), message(now + 1, {"score": "2-0"}, 1))
        assert answers.wait(2)[1]["outcome"] in ("applied", "throttled")
        assert state_of(daemon, activity["id"]) == {"score": "2-0"}
        # Priority 1 never alerts: one with an alert is refused by name.
        alerting = json.loads(message(now + 2, {"score": "3-0"}, 1))
        alerting["aps"]["alert"] = {"title": "Goal", "body": "3-0"}
        broker.publish(BACKEND, topic(channel), json.dumps(alerting))
        refused = answers.wait(3)[2]
        assert refused["outcome"] == "refused" and refused["error"] == "org.island.InvalidPushPayload", refused
    finally:
        answers.close()
        presenter.close()


def held_rows(daemon):
    """The held channel messages in a stopped daemon's store (setting rows
    `push-held:<activity>`; a running islandd holds its database exclusively)."""
    database = sqlite3.connect(os.path.join(daemon.state, "islandd.sqlite3"))
    try:
        return [key for (key,) in database.execute("SELECT key FROM settings WHERE key LIKE 'push-held:%'")]
    finally:
        database.close()


def test_a_held_priority_1_message_is_applied_after_a_kill_9_once_the_island_rests(broker, device):
    """A message at priority 1 held while the island is busy has been acknowledged to the broker
    and answered `throttled`: it is on disk by then, so islandd killed with SIGKILL before the
    island rests applies it after its restart. The channel stores nothing, so the broker cannot
    hand it over again: only the daemon's own store can."""
    channel = create(broker, "none", "--feedback")
    daemon = device("[Daemon]\nExpandedSec=1h\n")
    activity = listen(daemon, channel, {"score": "0-0"})
    answers = broker.subscriber(BACKEND, "island/%s/%s/%s/feedback" % (daemon.device, COFFEE, channel))
    try:
        with daemon.connect("org.island.Presenter") as island:
            island.Interact(action="expand", id=activity["id"])
        broker.publish(BACKEND, topic(channel), message(time.time(), {"score": "1-0"}, 1))
        [held] = answers.wait(1)
        assert held["outcome"] == "throttled" and held["activity"] == activity["id"], held
        daemon.kill()
        assert held_rows(daemon) == ["push-held:" + activity["id"]], "answered before it was kept"
        daemon.start()
        # The user's expansion died with the daemon: the island rests, and the held message is
        # applied without anything sent again — by the time the daemon serves, or soon after.
        presenter, snapshot = subscribe_presenter(daemon)
        try:
            shown = next((i for i in snapshot["items"] if i["id"] == activity["id"]), None)
            if shown is None or shown["content"]["state"] != {"score": "1-0"}:
                next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "1-0"})
        finally:
            presenter.close()
        assert state_of(daemon, activity["id"]) == {"score": "1-0"}
        # Applied once: its row went in the commit that applied it.
        daemon.stop()
        assert held_rows(daemon) == []
        daemon.start()
        # Held again, and the activity ends before the island rests: its row goes with it.
        with daemon.connect("org.island.Presenter") as island:
            island.Interact(action="expand", id=activity["id"])
        broker.publish(BACKEND, topic(channel), message(time.time(), {"score": "2-0"}, 1))
        assert answers.wait(2)[1]["outcome"] == "throttled"
        with daemon.connect("org.island.Producer") as producer:
            producer.End(app=COFFEE, id=activity["id"], dismissalPolicy={"kind": "immediate"})
        daemon.stop()
        assert held_rows(daemon) == []
    finally:
        answers.close()


def test_a_message_nobody_answers_is_kept_through_a_kill_9(broker, device):
    """A channel message that asks for no answers is committed without waiting for the disk
    (design.md §8: `synchronous = NORMAL` for that commit), which a SIGKILL does not undo: the
    restarted daemon shows it. The channel stores nothing, so the broker cannot hand it over
    again: only the daemon's own store can. The app's watcher hears of a change only once it is
    committed, so the kill comes after the commit."""
    channel = create(broker, "none")
    daemon = device()
    activity = listen(daemon, channel, {"score": "0-0"})
    watcher = Connection(daemon.socket)
    try:
        watcher.call("org.island.Producer.Watch", {"app": COFFEE}, more=True)
        assert watcher.read()["parameters"]["event"] == {"kind": "watching"}
        publish(broker, channel, {"score": "1-0"})
        watcher.read_until(lambda m: m["parameters"]["event"].get("activity", {}).get("content", {}).get("state")
                           == {"score": "1-0"})
    finally:
        watcher.close()
    daemon.kill()
    daemon.start()
    assert state_of(daemon, activity["id"]) == {"score": "1-0"}


@pytest.mark.slow  # `island push` and `island channel` retry a refused broker for 5 s and 10 s
def test_a_backend_whose_broker_is_not_there_is_told_so_by_name():
    """`island push` and `island channel …` give up on a broker nothing answers for with exit
    status 69 and the reason the connection gave, as a backend's script needs to retry."""
    # A port bound but never listening refuses connections, and while it is held no other
    # worker's server can listen there.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        broker = "mqtt://127.0.0.1:%d" % probe.getsockname()[1]
        for arguments in (["push", "island/device/%s/%s" % (COFFEE, "0" * 32), "--state", "{}", "--wait", "0"],
                          ["channel", "read", "A" * 22, "--app", COFFEE]):
            done = subprocess.run([ISLAND, *arguments, "--broker", broker], capture_output=True, text=True,
                                  timeout=2 * LIVENESS)
            assert done.returncode == 69, (arguments, done.stderr)
            assert "BrokerUnavailable: could not connect to %s: Connection refused" % broker in done.stderr, done.stderr
