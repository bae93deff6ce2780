"""[Push] SessionExpirySec= reaches the broker (MQTT 5's session expiry interval): a device back
within it gets what was queued while it was away; one away longer finds its app's session gone
at the broker, with what it held: that push is never answered. Only the key's parsing was
tested; a daemon that never sent the interval would pass that, and the broker would keep a
dead device's queue for ever.

No gap is measured: the broker's own log line ("Expiring client … due to timeout") says the
session expired, and the device reconnects after it."""

import pytest

from harness import broker as brokers
from harness.paths import LIVENESS
from harness.processes import wait_for

pytestmark = pytest.mark.slow

COFFEE = "org.example.Coffee"
DEVICE = "device-expiry"
# The shortest the daemon allows; the broker checks expiry about once a second.
EXPIRY = 60


def test_a_session_outlives_a_short_absence_and_expires_after_session_expiry_sec(make_daemon):
    broker = brokers.Broker(devices=[DEVICE]).start()
    try:
        daemon = broker.device(make_daemon, DEVICE, "SessionExpirySec=1min\n")
        with daemon.connect("org.island.Producer") as producer:
            token = producer.Request(app=COFFEE, type="Delivery", attributes={}, content={"state": {"n": 0}},
                                     pushToken=True)["activity"]["pushToken"]
        session = brokers.session_client(DEVICE, token)
        broker.wait_subscribed(session, token)
        feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
        try:
            # Away for a moment: the push queued meanwhile arrives at the reconnection.
            daemon.stop()
            broker.publish("backend-coffee", token, brokers.aps("update", 100, {"n": 1}, sequence=1))
            daemon.start()
            [first] = feedback.wait(1)
            assert first["sequence"] == 1 and first["outcome"] in ("applied", "throttled"), first
            assert "client_id=%s session_present=true" % session in daemon.log(), daemon.log()

            # Away past SessionExpirySec=: the broker forgets the app's session and its queue.
            daemon.stop()
            subscribed = broker.subscriptions(session, token)
            broker.publish("backend-coffee", token, brokers.aps("update", 200, {"n": 2}, sequence=2))
            wait_for(lambda: "Expiring client %s due to timeout" % session in broker.log(tail=0),
                     timeout=EXPIRY + 2 * LIVENESS, message="the broker expiring the app's session")
            daemon.start()
            wait_for(lambda: daemon.log().count("client_id=%s session_present=false" % session) >= 1,
                     message="the app's session opened anew (%s)" % daemon.log()[-600:])
            broker.wait_subscribed(session, token, count=subscribed + 1)
            broker.publish("backend-coffee", token, brokers.aps("update", 300, {"n": 3}, sequence=3))
            # The push queued in the expired session never arrives: the answer to the next one
            # follows the first. (Its `missed` count is kept in memory, and this device was
            # restarted: PROTOCOL.md, "A lost push is visible".)
            answers = feedback.wait(2)
            assert [a["sequence"] for a in answers] == [1, 3], answers
        finally:
            feedback.close()
    finally:
        broker.remove()
