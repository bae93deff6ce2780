"""Push (docs/design.md §12) with real parts: a mosquitto broker with TLS, passwords and an ACL file
(broker.py), islandd connected to it as a device, and backends that are shell tools — mosquitto_pub
to push, mosquitto_sub to read the feedback — as an app's server would be.

One broker serves the module; each test has its own daemon (its own device id), so tests
never see each other's tokens."""

import json
import os
import subprocess
import time

import pytest

from harness import broker as brokers
from harness.paths import ISLANDD, LIVENESS
from harness.processes import wait_for
from harness.varlink import Connection, error_of, next_item, subscribe_presenter

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not brokers.available(), reason="mosquitto, its clients or openssl are not installed "
                                                                "(scripts/install-deps.sh installs them)")]

COFFEE = "org.example.Coffee"
DEVICES = ["device-%d" % n for n in range(1, 16)]


@pytest.fixture(scope="module")
def broker():
    b = brokers.Broker(devices=DEVICES).start()
    yield b
    b.remove()


UNUSED_DEVICES = iter(DEVICES)


@pytest.fixture
def device(broker, make_daemon):
    """Makes daemons connected to the broker, each as a device of its own."""
    def make(config=""):
        return broker.device(make_daemon, next(UNUSED_DEVICES), config)
    return make


def request(daemon, state, app=COFFEE, type="Delivery", push_token=True, **extra):
    """Started, with its token when `push_token`: the broker holds the token's subscription by
    the time the reply comes, so a push published at once arrives."""
    with daemon.connect("org.island.Producer") as producer:
        reply = producer.Request(app=app, type=type, attributes={"order": 42}, content={"state": state},
                                 pushToken=push_token, **extra)
    return reply["activity"]


def subscribed(daemon, token, count=1):
    """Once the broker has logged the device's subscription to `token` `count` times."""
    daemon.broker.wait_subscribed(brokers.session_client(daemon.device, token), token, count)


def timestamps(answers):
    return [a["timestamp"] for a in answers]


def activity(daemon, activity_id, app=COFFEE):
    with daemon.connect("org.island.Producer") as producer:
        return next((a for a in producer.List(app=app)["activities"] if a["id"] == activity_id), None)


def test_a_backend_updates_and_ends_an_activity_and_reads_what_happened(broker, device):
    daemon = device()
    created = request(daemon, {"stage": "ordered"})
    token = created["pushToken"]
    assert token.startswith("island/%s/%s/" % (daemon.device, COFFEE)) and len(token.rsplit("/", 1)[1]) == 32
    presenter, _ = subscribe_presenter(daemon)
    # Every token of the app, so that a later activity's answer can mark a point in the stream.
    feedback = broker.subscriber("backend-coffee", "island/%s/%s/+/feedback" % (daemon.device, COFFEE))
    try:
        broker.publish("backend-coffee", token, brokers.aps("update", 100, {"stage": "baking"}, alert={"title": "Coffee", "body": "Brewing"}))
        _, item = next_item(presenter, created["id"], lambda i: i["content"]["state"] == {"stage": "baking"})
        [answer] = feedback.wait(1)
        assert answer["outcome"] in ("applied", "throttled") and answer["activity"] == created["id"]
        assert answer["timestamp"] == 100 and answer["event"] == "update"

        broker.publish("backend-coffee", token, brokers.aps("end", 101, {"stage": "delivered"}, **{"dismissal-date": 0}))
        answers = feedback.wait(2)
        assert answers[1]["outcome"] == "applied"
        # Dismissed at once (a dismissal date in the past): gone, and its token with it, which
        # the device says once and then stops listening to.
        wait_for(lambda: activity(daemon, created["id"]) is None, message="the ended activity's dismissal")
        answers = feedback.wait(3)
        assert answers[2]["outcome"] == "revoked" and answers[2]["reason"] == "dismissed"
        broker.publish("backend-coffee", token, brokers.aps("update", 102, {"stage": "again"}))
        # A marker: another activity's push, published after it. The device reads its topics on
        # one connection in order and answers an applied push once it is committed, after
        # anything before it: had the revoked token still been heard, its answer came first.
        marker = request(daemon, {"stage": "marker"})
        broker.publish("backend-coffee", marker["pushToken"], brokers.aps("update", 103, {"stage": "marker"}))
        answers = feedback.wait(4)
        assert timestamps(answers) == [100, 101, None, 103], "nothing is heard on a revoked token"
        assert answers[3]["activity"] == marker["id"]
    finally:
        feedback.close()
        presenter.close()


def test_a_push_published_the_moment_the_token_is_handed_out_arrives(broker, device):
    """A token is handed out only once the broker holds its subscription: the backend publishes
    on a connection it keeps open the moment each reply comes — a new token, then 49 rotations
    (an app has at most 5 activities at once), then a push-to-start token — and every push is
    applied."""
    daemon = device()
    publisher = brokers.Publisher(broker, "backend-coffee")
    try:
        with daemon.connect("org.island.Producer") as producer:
            created = producer.Request(app=COFFEE, type="Delivery", attributes={}, content={"state": {"n": -1}},
                                       pushToken=True)["activity"]
            token = created["pushToken"]
            for n in range(50):
                if n:
                    token = producer.PushToken(app=COFFEE, id=created["id"], rotate=True)["pushToken"]
                publisher.publish(token, brokers.aps("update", 100 + n, {"n": n}))
                wait_for(lambda: activity(daemon, created["id"])["content"]["state"] == {"n": n}, timeout=LIVENESS,
                         message="push %d applied (%s)" % (n, daemon.log()[-800:]))
            start = producer.PushToStartToken(app=COFFEE, type="Delivery")["pushToken"]
            publisher.publish(start, brokers.aps("start", 200, {"n": "pushed"}, **{"attributes-type": "Delivery",
                                                                                    "attributes": {}}))
            wait_for(lambda: any(a["content"]["state"] == {"n": "pushed"} for a in producer.List(app=COFFEE)["activities"]),
                     timeout=LIVENESS, message="the push-to-start applied (%s)" % daemon.log()[-800:])
    finally:
        publisher.close()


def test_an_older_timestamp_is_refused_and_the_refusal_is_published(broker, device):
    daemon = device()
    created = request(daemon, {"n": 0})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        # Back to back through one connection; the third, a redelivery of the first, is a
        # duplicate: refused too, never applied twice.
        broker.publish_lines("backend-coffee", token, [brokers.aps("update", 200, {"n": 2}), brokers.aps("update", 150, {"n": 1}),
                                                       brokers.aps("update", 200, {"n": 2})])
        # Answered in the order the pushes came: the refusals, decided at
        # once, wait for the answer of the push before them, which waits for its commit.
        first, older, again = feedback.wait(3)
        assert first["outcome"] in ("applied", "throttled") and first["timestamp"] == 200
        assert older["outcome"] == "refused" and older["error"] == "org.island.StaleTimestamp"
        assert older["parameters"] == {"id": created["id"], "last": 200.0, "given": 150.0}
        assert again["error"] == "org.island.StaleTimestamp" and again["parameters"]["given"] == again["parameters"]["last"]
        assert activity(daemon, created["id"])["content"]["state"] == {"n": 2}
    finally:
        feedback.close()


def test_a_server_starts_an_activity_with_a_push_to_start_token(broker, device):
    daemon = device()
    with daemon.connect("org.island.Producer") as producer:
        start_token = producer.PushToStartToken(app=COFFEE, type="Delivery")["pushToken"]
        assert producer.PushToStartToken(app=COFFEE, type="Delivery")["pushToken"] == start_token, "asked again: the same"
    presenter, _ = subscribe_presenter(daemon)
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(start_token))
    try:
        broker.publish("backend-coffee", start_token, brokers.aps("start", 300, {"stage": "ordered"}, **{
            "attributes-type": "Delivery", "attributes": {"order": 7}, "input-push-token": 1}))
        [answer] = feedback.wait(1)
        assert answer["outcome"] == "applied", answer
        started = activity(daemon, answer["activity"])
        assert started["type"] == "Delivery" and started["attributes"] == {"order": 7}
        assert started["ownerGone"] == "keep"
        # The new activity's own token, in the feedback and for its app.
        assert answer["pushToken"] == started["pushToken"]
        next_item(presenter, answer["activity"])
        # The same start again (a redelivery) does not start a second activity.
        broker.publish("backend-coffee", start_token, brokers.aps("start", 300, {"stage": "ordered"}, **{
            "attributes-type": "Delivery", "attributes": {"order": 7}}))
        assert feedback.wait(2)[1]["error"] == "org.island.StaleTimestamp"
        # The activity's token works as any other (made by a push, not handed to a client who
        # waits: its subscription may still be on its way).
        subscribed(daemon, answer["pushToken"])
        updates = broker.subscriber("backend-coffee", brokers.feedback_topic(answer["pushToken"]))
        try:
            broker.publish("backend-coffee", answer["pushToken"], brokers.aps("update", 301, {"stage": "on the way"}))
            assert updates.wait(1)[0]["outcome"] in ("applied", "throttled")
        finally:
            updates.close()
        with daemon.connect("org.island.Producer") as producer:
            assert len(producer.List(app=COFFEE)["activities"]) == 1
    finally:
        feedback.close()
        presenter.close()


def test_a_backend_without_rights_on_the_topic_changes_nothing(broker, device):
    daemon = device()
    created = request(daemon, {"owner": "coffee"})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        # The flights backend may write only org.example.Flights topics: the broker drops this.
        broker.publish("backend-flights", token, brokers.aps("update", 400, {"owner": "forged"}))
        broker.publish("backend-coffee", token, brokers.aps("update", 401, {"owner": "genuine"}))
        # In order on the token's topic: had the forged push got through, it was answered
        # (applied, or refused when 401 was first) before or with 401.
        answers = feedback.wait(1)
        assert timestamps(answers) == [401]
        assert activity(daemon, created["id"])["content"]["state"] == {"owner": "genuine"}
        # Nor may it read the coffee app's feedback. Its own app's feedback, which it may read,
        # is the marker: the device answers the flights push after the coffee one.
        flights = request(daemon, {"owner": "flights"}, app="org.example.Flights")
        spy = broker.subscriber("backend-flights", brokers.feedback_topic(token), brokers.feedback_topic(flights["pushToken"]))
        try:
            broker.publish("backend-coffee", token, brokers.aps("update", 402, {"owner": "genuine"}))
            feedback.wait(2)
            broker.publish("backend-flights", flights["pushToken"], brokers.aps("update", 403, {"owner": "flights"}))
            spy.wait(1)
            assert timestamps(spy.wait(1)) == [403], "the flights backend read only its own feedback"
        finally:
            spy.close()
    finally:
        feedback.close()


def test_feedback_topics_do_not_reveal_the_token(broker, device):
    """A backend may read every feedback topic of its app, on every device (the developer
    guide's ACL); from their names it once learned other devices' tokens, and ended their
    activities. The name is a hash of the secret now: it reaches nothing."""
    daemon = device()
    created = request(daemon, {"n": 0})
    token = created["pushToken"]
    # Fresh: the notices other tests' revoked tokens left retained are not this test's.
    spy = broker.subscriber("backend-coffee", "island/+/%s/+/feedback" % COFFEE, verbose=True, fresh=True)
    try:
        broker.publish("backend-coffee", token, brokers.aps("update", 900, {"n": 1}))
        [(topic, answer)] = spy.wait_with_topics(1)
        assert answer["timestamp"] == 900 and answer["outcome"] in ("applied", "throttled")
        assert topic == brokers.feedback_topic(token)
        assert token.rsplit("/", 1)[1] not in topic, "the secret is not in the feedback topic"
        # What the name gives, its levels before /feedback, is no token: an end published there
        # reaches nothing. A push to the real token after it is the marker.
        broker.publish("backend-coffee", topic.rsplit("/", 1)[0], brokers.aps("end", 901, **{"dismissal-date": 0}))
        broker.publish("backend-coffee", token, brokers.aps("update", 902, {"n": 2}))
        assert timestamps(a for _, a in spy.wait_with_topics(2)) == [900, 902]
        assert activity(daemon, created["id"])["state"] in ("active", "stale")
    finally:
        spy.close()


def test_tokens_rotate_persist_and_are_streamed_to_the_app(broker, device):
    daemon = device()
    created = request(daemon, {"n": 1})
    old = created["pushToken"]
    watch = Connection(daemon.socket)
    watch.call("org.island.Producer.Watch", {"app": COFFEE}, more=True)
    assert watch.read()["parameters"]["event"]["kind"] == "watching"
    feedback = broker.subscriber("backend-coffee", "island/%s/%s/+/feedback" % (daemon.device, COFFEE))
    try:
        with daemon.connect("org.island.Producer") as producer:
            assert producer.PushToken(app=COFFEE, id=created["id"])["pushToken"] == old, "asked again: the same"
            new = producer.PushToken(app=COFFEE, id=created["id"], rotate=True)["pushToken"]
        assert new != old
        event = watch.read_until(lambda m: m["parameters"]["event"]["kind"] == "pushToken")["parameters"]["event"]
        assert event["pushToken"] == new and event["activity"]["id"] == created["id"] and event["activity"]["pushToken"] == new
        assert feedback.wait(1)[0] | {"receivedAt": 0} == {"timestamp": None, "event": None, "outcome": "revoked",
                                                           "reason": "rotated", "receivedAt": 0}
        broker.publish("backend-coffee", old, brokers.aps("update", 500, {"n": 2}))
        # The new token's push after it is the marker: answered after anything the old one got.
        broker.publish("backend-coffee", new, brokers.aps("update", 500, {"n": 1}))
        answers = feedback.wait(2)
        assert timestamps(answers) == [None, 500], "the old token stopped at once: nobody listens to it"
        assert answers[1]["outcome"] in ("applied", "throttled")
        assert activity(daemon, created["id"])["content"]["state"] == {"n": 1}
        daemon.stop()
        daemon.start()
        wait_for(lambda: daemon.log().count("connected to the push broker") >= 2, message="reconnection")
        assert activity(daemon, created["id"])["pushToken"] == new
        broker.publish("backend-coffee", new, brokers.aps("update", 501, {"n": 3}))
        assert feedback.wait(3)[2]["outcome"] in ("applied", "throttled")
    finally:
        watch.close()
        feedback.close()


def test_untrusted_payloads_get_named_refusals_and_the_daemon_keeps_serving(broker, device):
    daemon = device()
    created = request(daemon, {"n": 1})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        broker.publish("backend-coffee", token, "not json")
        broker.publish("backend-coffee", token, json.dumps({"aps": {"timestamp": "soon", "event": "update", "content-state": {}}}))
        # 33 levels of state: over the activity's limit of 32, within what the payload's parse
        # allows; 100 levels are not read at all.
        broker.publish("backend-coffee", token, brokers.aps("update", 600, {"deep": json.loads("[" * 32 + "]" * 32)}))
        broker.publish("backend-coffee", token, brokers.aps("update", 601, {"big": "x" * 70000}))
        broker.publish("backend-coffee", token, brokers.aps("update", 602, {"big": "x" * 5000}))
        broker.publish("backend-coffee", token, brokers.aps("start", 603, {}, **{"attributes-type": "Delivery", "attributes": {}}))
        broker.publish("backend-coffee", token, brokers.aps("update", 604, {"deep": json.loads("[" * 100 + "]" * 100)}))
        answers = feedback.wait(7)
        assert [a.get("error") for a in answers] == [
            "org.island.InvalidPushPayload", "org.island.InvalidPushPayload", "org.island.NestingTooDeep",
            "org.island.PushPayloadTooLarge", "org.island.AttributesTooLarge", "org.island.InvalidPushPayload",
            "org.island.InvalidPushPayload"]
        assert answers[1]["parameters"] == {"reason": "aps.timestamp must be a number"}
        assert daemon.process.poll() is None
        assert activity(daemon, created["id"])["content"]["state"] == {"n": 1}
    finally:
        feedback.close()


def test_a_timestamp_in_milliseconds_or_a_huge_alert_is_refused_by_name(broker, device):
    """One push with JavaScript's Date.now() once pinned the activity's order for ever; a 60 KB
    alert reached every presenter."""
    import time
    daemon = device()
    created = request(daemon, {"n": 0})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        now = time.time()
        broker.publish_lines("backend-coffee", token, [
            brokers.aps("update", now * 1000, {"n": 1}),
            brokers.aps("update", now, {"n": 2}, alert={"title": "t" * 30000, "body": "b" * 30000}),
            brokers.aps("update", now, {"n": 3})])
        millis, alert, seconds = feedback.wait(3)
        assert millis["error"] == "org.island.ImplausibleTimestamp" and millis["parameters"]["given"] == now * 1000
        assert alert["error"] == "org.island.AlertTooLarge" and alert["parameters"] == {"limit": 1024, "size": 60000}
        assert seconds["outcome"] in ("applied", "throttled"), seconds
        assert activity(daemon, created["id"])["content"]["state"] == {"n": 3}
    finally:
        feedback.close()


@pytest.mark.slow  # waits out the reconnection backoff's first steps, about 8 s
def test_two_devices_with_one_client_id_are_told_once_and_retried_ever_more_slowly(broker, make_daemon):
    """Two devices with the same ClientID= once took the session from each other about once a second
    for ever, two log lines each time, never saying why."""
    name = next(UNUSED_DEVICES)
    first = make_daemon(broker.push_config(name))
    wait_for(lambda: "connected to the push broker" in first.log(), message="the first daemon's connection")
    second = make_daemon(broker.push_config(name))
    told = "connection soon after accepting it 3 times running"
    wait_for(lambda: told in first.log() + second.log(), timeout=LIVENESS * 2, message="the conflict told")
    # A marker: another lost connection after it was told; still told once.
    lost = (first.log() + second.log()).count("no connection to the push broker")
    wait_for(lambda: (first.log() + second.log()).count("no connection to the push broker") > lost, timeout=LIVENESS * 2,
             message="another reconnection")
    assert first.log().count(told) <= 1 and second.log().count(told) <= 1, "once per daemon"
    assert "ClientID=%s" % name in first.log() + second.log()


def test_offline_the_broker_keeps_what_was_missed_and_it_is_applied_once_in_order(broker, device):
    daemon = device()
    created = request(daemon, {"n": 0})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        daemon.stop()
        for n in (1, 2, 3):
            broker.publish("backend-coffee", token, brokers.aps("update", 700 + n, {"n": n}))
        daemon.start()
        answers = feedback.wait(3)
        assert timestamps(answers) == [701, 702, 703], "each once, in order"
        # A push after them is the marker: any second delivery of what was missed came first.
        broker.publish("backend-coffee", token, brokers.aps("update", 704, {"n": 4}))
        answers = feedback.wait(4)
        assert timestamps(answers) == [701, 702, 703, 704], "each once, in order"
        assert all(a["outcome"] in ("applied", "throttled") for a in answers)
        assert activity(daemon, created["id"])["content"]["state"] == {"n": 4}
    finally:
        feedback.close()


def test_without_the_broker_islandd_serves_local_clients_and_catches_up_when_it_returns(make_daemon):
    # A broker of its own: the harness stops what a test started, and this one restarts it.
    broker = brokers.Broker(devices=["device-away"]).start()
    try:
        daemon = make_daemon(broker.push_config("device-away"))
        daemon.device, daemon.broker = "device-away", broker
        wait_for(lambda: "connected to the push broker" in daemon.log(), message="the broker connection")
        created = request(daemon, {"n": 0})
        token = created["pushToken"]
        broker.stop()
        try:
            wait_for(lambda: "no connection to the push broker" in daemon.log(), message="the lost connection noticed")
            # Local calls never wait for the broker: they are answered, and take effect, while
            # it is still away (it comes back only after them; a call that waited for it would
            # never be answered, and the connection's read would time out).
            with daemon.connect("org.island.Producer") as producer:
                producer.Update(app=COFFEE, id=created["id"], content={"state": {"n": 1}})
                local = producer.Request(app=COFFEE, type="Local", attributes={}, content={"state": {}})
            assert local["activity"]["state"] == "active"
            assert activity(daemon, created["id"])["content"]["state"] == {"n": 1}
            assert broker.process.poll() is not None, "the broker was away throughout"
        finally:
            broker.start()
        wait_for(lambda: daemon.log().count("connected to the push broker") >= 2, message="the reconnection")
        feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
        try:
            broker.publish("backend-coffee", token, brokers.aps("update", 800, {"n": 2}))
            assert feedback.wait(1)[0]["outcome"] in ("applied", "throttled")
            assert activity(daemon, created["id"])["content"]["state"] == {"n": 2}
        finally:
            feedback.close()
    finally:
        broker.remove()


def test_without_a_broker_asking_for_a_token_is_refused_by_name(daemon):
    with daemon.connect("org.island.Producer") as producer:
        name, parameters = error_of(producer.Request, app=COFFEE, type="Delivery", attributes={}, content={"state": {}},
                                    pushToken=True)
        assert name == "org.island.PushUnavailable" and "Broker=" in parameters["reason"]
        assert error_of(producer.PushToStartToken, app=COFFEE, type="Delivery")[0] == "org.island.PushUnavailable"
        plain = producer.Request(app=COFFEE, type="Delivery", attributes={}, content={"state": {}})["activity"]
        assert "pushToken" not in plain
        assert error_of(producer.PushToken, app=COFFEE, id=plain["id"])[0] == "org.island.PushUnavailable"
        # Nothing was started by the refused request.
        assert len(producer.List(app=COFFEE)["activities"]) == 1


def test_admin_status_reports_the_broker_connection(broker, device, daemon):
    pushing = device()
    request(pushing, {"n": 1})
    with pushing.connect("org.island.Admin") as admin:
        status = admin.Status()
    assert status["push"] == {"broker": broker.url, "device": pushing.device, "connected": True, "tokens": 1}
    out = subprocess.run([os.path.join(os.path.dirname(ISLANDD), "island"), "admin", "status", "--socket", pushing.socket],
                         capture_output=True, text=True)
    assert "push: connected to %s as %s, 1 tokens" % (broker.url, pushing.device) in out.stdout, out.stdout
    # Without [Push], no push member.
    with daemon.connect("org.island.Admin") as admin:
        assert "push" not in admin.Status()


def island_push(broker, token, *arguments):
    """`island push` as an app's server runs it, as the backend, through the TLS listener."""
    return subprocess.run([os.path.join(os.path.dirname(ISLANDD), "island"), "push", token, "--broker", broker.url,
                           "--cafile", broker.ca, "--username", "backend-coffee",
                           "--password-file", broker.password_file("backend-coffee"), *arguments],
                          capture_output=True, text=True, timeout=2 * LIVENESS)


def test_a_push_to_a_revoked_token_is_told_so_by_name(broker, device):
    """The device says `revoked` once, as it stops listening to a dismissed activity's token, and
    the broker keeps that notice: a server that pushes to the token later is told at once that
    the token is revoked — not, after its wait, that the device did not answer."""
    daemon = device()
    created = request(daemon, {"stage": "ordered"})
    token = created["pushToken"]
    done = island_push(broker, token, "--event", "end", "--state", '{"stage": "delivered"}', "--dismissal-date", "now")
    assert done.returncode == 0 and done.stdout.startswith("applied"), done.stdout + done.stderr
    wait_for(lambda: activity(daemon, created["id"]) is None, message="the ended activity's dismissal")
    # The notice is out once a subscriber made after it still gets it (retained).
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        [notice] = feedback.wait(1)
        assert notice["outcome"] == "revoked" and notice["reason"] == "dismissed"
    finally:
        feedback.close()

    # Waiting longer than the liveness bound: only the notice can end it within that bound.
    late = island_push(broker, token, "--state", '{"stage": "again"}', "--wait", str(LIVENESS))
    assert late.returncode == 1, late.stdout + late.stderr
    assert "TokenRevoked" in late.stderr and "dismissed" in late.stderr, late.stderr
    assert "NoFeedback" not in late.stderr


GUIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "developer-guide.md")

# `date` as two runs of a script within one second see it: the same whole second each time,
# the fraction (%N) a little later at each call.
SAME_SECOND_DATE = """#!/usr/bin/python3
import os, sys
calls = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls")
n = int(open(calls).read()) + 1 if os.path.exists(calls) else 1
open(calls, "w").write(str(n))
print(sys.argv[1].lstrip("+").replace("%s", os.environ["SAME_SECOND"]).replace("%N", "%09d" % (n * 1000)))
"""


def test_the_guides_mosquitto_pub_example_orders_an_update_and_an_end_in_one_second(broker, device, tmp_path):
    """The developer guide's mosquitto_pub example, run as written (only the broker's address
    and CA changed) for an update and then, within the same second, an end: the end applies —
    the guide's timestamps tell the two apart."""
    with open(GUIDE) as f:
        guide = f.read()
    start = guide.index("mosquitto_pub -h broker.example.com")
    example = guide[start:guide.index("\n#", start)]
    example = example.replace("broker.example.com", "localhost").replace("-p 8883", "-p %d" % broker.tls_port)
    example = example.replace("--cafile ca.pem", "--cafile " + broker.ca)
    assert '"event": "update"' in example, example
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "date").write_text(SAME_SECOND_DATE)
    (shim / "date").chmod(0o755)

    daemon = device()
    created = request(daemon, {"stage": "ordered"})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    env = dict(os.environ, PATH="%s:%s" % (shim, os.environ["PATH"]), TOKEN=token,
               PASSWORD=broker.passwords["backend-coffee"], SAME_SECOND=str(int(time.time())))
    try:
        for script in (example, example.replace('"event": "update"', '"event": "end"')):
            done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=LIVENESS)
            assert done.returncode == 0, done.stderr
        answers = feedback.wait(2)
        assert [a["event"] for a in answers] == ["update", "end"], answers
        assert answers[0]["outcome"] in ("applied", "throttled") and answers[1]["outcome"] == "applied", answers
        assert answers[0]["timestamp"] < answers[1]["timestamp"]
    finally:
        feedback.close()


def guide_block(guide, first_line, fence="```\n"):
    """The text of the guide's code block (opened by `fence`) that starts with `first_line`."""
    start = guide.index(fence + first_line) + len(fence)
    return guide[start:guide.index("```", start)]


def test_the_guides_broker_configuration_and_acl_run_as_written(make_daemon):
    """The developer guide's mosquitto configuration and ACL ("Confine everyone at the broker"),
    as written but for where its files are and the listener's port: mosquitto starts with them
    (it once refused the configuration, whose comments continued on indented lines: mosquitto
    reads `#` as a comment only at the start of a line), a device connects with its password
    over TLS, and the app's backend pushes to a token and reads the device's answer."""
    from harness.paths import ISLAND
    with open(GUIDE) as f:
        guide = f.read()
    broker = brokers.Broker(devices=["kitchen-42"], backends=["backend-coffee"])
    try:
        conf = guide_block(guide, "per_listener_settings true\n")
        for theirs, ours in (("/etc/mosquitto/ca.pem", broker.ca), ("/etc/mosquitto/server.pem", broker.path("server.crt")),
                             ("/etc/mosquitto/server.key", broker.path("server.key")),
                             ("/etc/mosquitto/passwd", broker.path("passwd")), ("/etc/mosquitto/island.acl", broker.path("acl")),
                             ("\nlistener 8883\n", "\nlistener %d %s\n" % (broker.tls_port, broker.host))):
            assert theirs in conf, theirs
            conf = conf.replace(theirs, ours)
        user = "root" if os.getuid() == 0 else os.environ.get("USER", "nobody")
        with open(broker.path("mosquitto.conf"), "w") as f:
            f.write("user %s\npersistence_location %s/\nlog_dest file %s\n%s"
                    % (user, broker.path("data"), broker.path("mosquitto.log"), conf))
        broker.set_acl(guide_block(guide, "# /etc/mosquitto/island.acl"))
        broker.start()
        daemon = broker.device(make_daemon, "kitchen-42")
        token = request(daemon, {"stage": "ordered"})["pushToken"]
        pushed = subprocess.run([ISLAND, "push", token, "--broker", broker.url, "--cafile", broker.ca,
                                 "--username", "backend-coffee", "--password-file", broker.password_file("backend-coffee"),
                                 "--state", '{"stage": "on the way"}', "--wait", str(LIVENESS)],
                                capture_output=True, text=True, timeout=2 * LIVENESS)
        # The device's answer: applied, or throttled by the update rate so soon after the start.
        assert pushed.returncode == 0, (pushed.stdout, pushed.stderr, broker.log())
        assert pushed.stdout.startswith(("applied", "throttled")), pushed.stdout
    finally:
        broker.remove()


def test_the_guides_push_section_is_read_as_written(unstarted_daemon):
    """The developer guide's `[Push]` example (step 1), as written but for the broker (a loopback
    port nobody serves: no network) and where its files are: the daemon starts on it and uses its
    ClientID=. Its comments once trailed the values, which systemd-style files do not allow:
    the ClientID= was refused as holding a '#'."""
    with open(GUIDE) as f:
        guide = f.read()
    section = guide_block(guide, "[Push]\nBroker=mqtts://broker.example.com:8883\n", fence="```ini\n")
    daemon = unstarted_daemon()
    for theirs, ours in (("mqtts://broker.example.com:8883", "mqtts://127.0.0.1:1"),
                         ("/etc/island/push-ca.pem", os.path.join(daemon.root, "push-ca.pem")),
                         ("/etc/island/push-password", os.path.join(daemon.root, "push-password"))):
        assert theirs in section, theirs
        section = section.replace(theirs, ours)
        if ours.startswith(daemon.root):
            with open(ours, "w") as f:
                f.write("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n" if ours.endswith(".pem") else "secret\n")
    with open(daemon.config, "w") as f:
        f.write(section)
    daemon.start()
    wait_for(lambda: "client_id=kitchen-42 " in daemon.log(), message="the guide's ClientID= in use (%s)" % daemon.log()[-600:])
