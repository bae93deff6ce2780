"""A token or a channel is handed out only once the broker granted its subscription, and a refused
SUBSCRIBE is never taken for granted. mosquitto's acl_file grants every SUBSCRIBE (it withholds
the messages instead), so the refusals come from the harness's hand-written broker
(`broker.HostileBroker`, honest here), which answers a SUBACK of 0x87 (MQTT 5's "not
authorized") for the topics it is told to refuse."""

import pytest

from harness import broker as brokers
from harness.paths import LIVENESS
from harness.processes import wait_for
from harness.varlink import error_of

pytestmark = [pytest.mark.quick]

COFFEE = "org.example.Coffee"
CHANNEL = "c0ffee00c0ffee00c0ffee"


@pytest.fixture
def hostile():
    b = brokers.HostileBroker(oversized=0)
    yield b
    b.close()


def connected(daemon):
    wait_for(lambda: "connected to the push broker" in daemon.log(), timeout=LIVENESS, message="the broker connection")


def test_a_denied_channel_or_token_is_refused_by_name_and_starts_nothing(hostile, make_daemon):
    daemon = make_daemon(hostile.push_config("device-denied"))
    connected(daemon)
    hostile.refuse("island/channels/")
    hostile.refuse("island/device-denied/")
    with daemon.connect("org.island.Producer") as producer:
        name, parameters = error_of(producer.Request, app=COFFEE, type="Score", attributes={}, content={"state": {}},
                                    channel=CHANNEL)
        assert name == "org.island.InvalidChannel" and "refused" in parameters["reason"], (name, parameters)
        name, parameters = error_of(producer.Request, app=COFFEE, type="Delivery", attributes={}, content={"state": {}},
                                    pushToken=True)
        assert name == "org.island.PushUnavailable" and "refused" in parameters["reason"], (name, parameters)
        name, _ = error_of(producer.PushToStartToken, app=COFFEE, type="Delivery")
        assert name == "org.island.PushUnavailable"
        assert producer.List(app=COFFEE)["activities"] == []
    assert len(hostile.refused) == 3


def test_a_subscription_refused_after_a_reconnection_is_logged_and_asked_for_again(hostile, make_daemon):
    daemon = make_daemon(hostile.push_config("device-again"))
    connected(daemon)
    with daemon.connect("org.island.Producer") as producer:
        created = producer.Request(app=COFFEE, type="Delivery", attributes={}, content={"state": {"n": 0}},
                                   pushToken=True)["activity"]
    token = created["pushToken"]
    assert hostile.subscribed(token), "granted before the reply"
    # The broker loses the connection and, on the next one, refuses the token twice.
    hostile.refuse(token, times=2)
    hostile.drop(token)
    wait_for(lambda: hostile.subscribed(token), timeout=2 * LIVENESS,
             message="the token subscribed again after two refusals (%s)" % daemon.log()[-800:])
    assert hostile.refused == [token, token]
    log = daemon.log()
    assert log.count("the push broker refused a subscription this device holds") == 2, log[-1500:]
    assert token.rsplit("/", 1)[1] not in log, "the token's secret is never logged"
    hostile.push(token, brokers.aps("update", 10, {"n": 1}))
    wait_for(lambda: hostile.feedback(brokers.feedback_topic(token)), timeout=LIVENESS, message="the push's answer")
    assert hostile.feedback(brokers.feedback_topic(token))[0]["outcome"] in ("applied", "throttled")
