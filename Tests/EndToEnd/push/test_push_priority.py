"""APNs' rules beyond one push, with a real mosquitto: priority (10 spends the app's push budget
and is refused by name beyond it, a kill -9 forgetting none of it; 5 spends nothing and the latest
wins), expiry (an expired push
is refused by name; one that must arrive now or never is kept for no offline device), a
push-to-start that schedules its start (`start-date`, with its alert), and a disabled app's
stored push-to-start token, refused by name until the app is enabled again."""

import os
import subprocess
import time

import pytest

from harness import broker as brokers
from harness.paths import ISLANDD, LIVENESS
from harness.processes import wait_for
from harness.varlink import next_update, subscribe_presenter

pytestmark = [pytest.mark.quick, pytest.mark.skipif(not brokers.available(), reason="mosquitto, its clients or openssl are not installed "
                                                                "(scripts/install-deps.sh installs them)")]

COFFEE = "org.example.Coffee"
DEVICES = ["device-%d" % n for n in range(1, 9)]
UNUSED_DEVICES = iter(DEVICES)
ALERT = {"title": "Coffee", "body": "Your order starts"}


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


def start_token(daemon):
    with daemon.connect("org.island.Producer") as producer:
        token = producer.PushToStartToken(app=COFFEE, type="Delivery")["pushToken"]
    daemon.broker.wait_subscribed(brokers.session_client(daemon.device, token), token)
    return token


def listed(daemon, activity_id):
    with daemon.connect("org.island.Producer") as producer:
        return next((a for a in producer.List(app=COFFEE)["activities"] if a["id"] == activity_id), None)


def start(timestamp, **fields):
    return brokers.aps("start", timestamp, {"stage": "ordered"}, **{"attributes-type": "Delivery", "attributes": {"order": 7}},
                       **fields)


def test_a_push_to_start_schedules_a_start_with_its_alert(broker, device):
    daemon = device()
    token = start_token(daemon)
    presenter, _ = subscribe_presenter(daemon)
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        # Without its alert, a scheduled start is refused by name.
        broker.publish("backend-coffee", token, start(100, **{"start-date": time.time() + 600}))
        [refused] = feedback.wait(1)
        assert refused["error"] == "org.island.StartAlertRequired", refused
        when = time.time() + 2
        broker.publish("backend-coffee", token, start(101, **{"start-date": when, "alert": ALERT}))
        answer = feedback.wait(2)[1]
        assert answer["outcome"] == "applied", answer
        scheduled = listed(daemon, answer["activity"])
        assert scheduled["start"] == when and scheduled["state"] in ("pending", "active")
        update = next_update(presenter, lambda u: any(i["id"] == answer["activity"] for i in u["items"]),
                             timeout=LIVENESS + 2)
        assert time.time() >= when, "shown before its date"
        assert update["alert"]["id"] == answer["activity"] and update["alert"]["body"] == ALERT["body"]
        assert listed(daemon, answer["activity"])["state"] == "active"
    finally:
        feedback.close()
        presenter.close()


def test_a_disabled_apps_push_to_start_token_is_refused_until_it_is_enabled_again(broker, device):
    daemon = device()
    token = start_token(daemon)
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        with daemon.connect("org.island.Admin") as admin:
            admin.SetEnabled(app=COFFEE, enabled=False)
        broker.publish("backend-coffee", token, start(200))
        [denied] = feedback.wait(1)
        assert denied["error"] == "org.island.Denied" and denied["parameters"] == {"app": COFFEE}, denied
        with daemon.connect("org.island.Producer") as producer:
            assert producer.List(app=COFFEE)["activities"] == []
        # The token was kept, not revoked: enabled again, the same token starts activities.
        with daemon.connect("org.island.Admin") as admin:
            admin.SetEnabled(app=COFFEE, enabled=True)
        broker.publish("backend-coffee", token, start(201))
        answer = feedback.wait(2)[1]
        assert answer["outcome"] == "applied", answer
        assert listed(daemon, answer["activity"])["state"] == "active"
    finally:
        feedback.close()


def token_of(daemon, state):
    with daemon.connect("org.island.Producer") as producer:
        created = producer.Request(app=COFFEE, type="Delivery", attributes={"order": 42}, content={"state": state},
                                   pushToken=True)["activity"]
    daemon.broker.wait_subscribed(brokers.session_client(daemon.device, created["pushToken"]), created["pushToken"])
    return created


def island_push(broker, token, *arguments):
    """`island push` as an app's server runs it, as the backend, through the TLS listener."""
    return subprocess.run([os.path.join(os.path.dirname(ISLANDD), "island"), "push", token, "--broker", broker.url,
                           "--cafile", broker.ca, "--username", "backend-coffee",
                           "--password-file", broker.password_file("backend-coffee"), *arguments],
                          capture_output=True, text=True, timeout=2 * LIVENESS)


def test_a_flood_at_priority_5_spends_nothing_and_10_beyond_the_budget_is_refused_by_name(broker, device):
    daemon = device("[Limits]\nPushBudget=3\n")
    created = token_of(daemon, {"n": 0})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        flood = [brokers.aps("update", 1000 + n, {"n": n}, priority=5) for n in range(1, 41)]
        broker.publish_lines("backend-coffee", token, flood)
        answers = feedback.wait(40)
        assert all(a["outcome"] in ("applied", "throttled") for a in answers), answers
        # The latest wins: presenters end on it, whatever was coalesced on the way.
        wait_for(lambda: listed(daemon, created["id"])["deliveredContent"]["state"] == {"n": 40},
                 message="the flood's latest state delivered")
        # The budget is whole: three at priority 10 pass, the fourth is refused by name.
        broker.publish_lines("backend-coffee", token, [brokers.aps("update", 2000 + n, {"n": 100 + n}) for n in range(1, 5)])
        answers = feedback.wait(44)[40:]
        assert all(a["outcome"] in ("applied", "throttled") for a in answers[:3]), answers
        assert len(answers) == 4 and answers[3]["error"] == "org.island.PushBudgetExceeded", answers
        assert answers[3]["parameters"]["limit"] == 3 and answers[3]["parameters"]["app"] == COFFEE
        assert listed(daemon, created["id"])["content"]["state"] == {"n": 103}
        # And priority 5 still passes.
        broker.publish("backend-coffee", token, brokers.aps("update", 3000, {"n": 200}, priority=5))
        assert feedback.wait(45)[44]["outcome"] in ("applied", "throttled")
    finally:
        feedback.close()


def test_the_push_budget_spent_before_a_kill_is_still_spent_after_the_restart(broker, device):
    daemon = device("[Limits]\nPushBudget=2\n")
    created = token_of(daemon, {"n": 0})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        broker.publish_lines("backend-coffee", token, [brokers.aps("update", 4000 + n, {"n": n}) for n in (1, 2)])
        answers = feedback.wait(2)
        # Answered once committed: the spending is on disk before the kill.
        assert all(a["outcome"] in ("applied", "throttled") for a in answers), answers
        daemon.kill()
        daemon.start()
        broker.publish("backend-coffee", token, brokers.aps("update", 4003, {"n": 3}))
        refused = feedback.wait(3)[2]
        assert refused["error"] == "org.island.PushBudgetExceeded" and refused["parameters"]["limit"] == 2, refused
        assert listed(daemon, created["id"])["content"]["state"] == {"n": 2}
    finally:
        feedback.close()


def test_an_expired_push_is_refused_by_name(broker, device):
    daemon = device()
    created = token_of(daemon, {"n": 0})
    late = island_push(broker, created["pushToken"], "--state", '{"n": 1}', "--expiration", str(time.time() - 60))
    assert late.returncode == 1 and "PushExpired" in late.stderr, late.stdout + late.stderr
    assert listed(daemon, created["id"])["content"]["state"] == {"n": 0}
    on_time = island_push(broker, created["pushToken"], "--state", '{"n": 2}', "--expiration", "+10m")
    assert on_time.returncode == 0, on_time.stdout + on_time.stderr
    assert listed(daemon, created["id"])["content"]["state"] == {"n": 2}


def test_now_or_never_is_kept_for_no_offline_device(broker, device):
    daemon = device()
    created = token_of(daemon, {"n": 0})
    token = created["pushToken"]
    feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
    try:
        daemon.stop()
        never = island_push(broker, token, "--state", '{"n": 1}', "--timestamp", "500", "--expiration", "0", "--wait", "0")
        assert never.returncode == 0, never.stdout + never.stderr
        # A push kept for the device as usual, after it: the marker.
        broker.publish("backend-coffee", token, brokers.aps("update", 501, {"n": 2}))
        daemon.start()
        answers = feedback.wait(1)
        assert [a["timestamp"] for a in answers] == [501], "the now-or-never push was kept for an offline device"
        assert listed(daemon, created["id"])["content"]["state"] == {"n": 2}
        # Online, it arrives.
        now = island_push(broker, token, "--state", '{"n": 3}', "--timestamp", "502", "--expiration", "0")
        assert now.returncode == 0, now.stdout + now.stderr
    finally:
        feedback.close()
