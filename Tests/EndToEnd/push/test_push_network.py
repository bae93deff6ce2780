"""Push across a network: the broker in one network namespace and islandd in another, joined
by a link with delay and loss (netns.py: tc netem, or a user-space TUN relay where the kernel
has no netem). Fifty updates published in a burst arrive in order, each applied once."""

import json

import pytest

from harness import broker as brokers
from harness.netns import Network
from harness.paths import LIVENESS
from harness.processes import wait_for
from harness.varlink import next_item, subscribe_presenter

UNAVAILABLE = Network.unavailable() or (None if brokers.available() else "mosquitto, its clients or openssl are not installed")
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")

COFFEE = "org.example.Coffee"


def test_updates_cross_a_slow_lossy_network_in_order_and_once(unstarted_daemon):
    with Network(delay=0.02, loss=0.05) as network:
        broker = brokers.Broker(devices=["device-net"], host=network.broker_address, netns=network.broker).start()
        try:
            daemon = unstarted_daemon(broker.push_config("device-net", keepalive=10))
            daemon.prefix = ["ip", "netns", "exec", network.device]
            daemon.start()
            wait_for(lambda: "connected to the push broker" in daemon.log(), 
                     message="the connection across the namespaces (%s)" % network.mode)
            with daemon.connect("org.island.Producer") as producer:
                created = producer.Request(app=COFFEE, type="Delivery", attributes={}, content={"state": {"n": 0}},
                                           pushToken=True)["activity"]
            token = created["pushToken"]
            # islandd does not wait for its SUBSCRIBE's answer: pushes published before the
            # broker took it would reach nobody.
            broker.wait_subscribed(brokers.session_client("device-net", token), token)
            presenter, _ = subscribe_presenter(daemon)
            feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
            try:
                payloads = [json.dumps({"aps": {"timestamp": 1000 + n, "event": "update", "content-state": {"n": n}}})
                            for n in range(1, 51)]
                broker.publish_lines("backend-coffee", token, payloads)
                answers = feedback.wait(50, timeout=2 * LIVENESS)
                assert [a["timestamp"] for a in answers] == [1000.0 + n for n in range(1, 51)], "in order, none twice"
                # One more push is the marker: a second delivery of any of the fifty came first.
                broker.publish("backend-coffee", token, json.dumps({"aps": {"timestamp": 1051, "event": "update",
                                                                            "content-state": {"n": 51}}}))
                answers = feedback.wait(51, timeout=2 * LIVENESS)
                assert [a["timestamp"] for a in answers] == [1000.0 + n for n in range(1, 52)], "in order, none twice"
                assert all(a["outcome"] in ("applied", "throttled") for a in answers), answers
                next_item(presenter, created["id"], lambda item: item["content"]["state"] == {"n": 51})
                carried, dropped = network.packets()
                print("link: %s, %d packets carried, %d dropped" % (network.mode, carried, dropped))
                assert carried > 40, "the pushes crossed the emulated link"
            finally:
                feedback.close()
                presenter.close()
                daemon.stop()
        finally:
            broker.remove()
