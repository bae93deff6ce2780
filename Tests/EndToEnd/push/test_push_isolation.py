"""What a broker, or one app's server, can do to a device: two defects these tests guard against.

1. libmosquitto allocates every packet a broker sends whole before anyone can look at it: a
   140 MiB PUBLISH (a hostile broker's, or any token holder's through a broker without
   max_packet_size) took islandd from 44 to 464 MiB. The clients now run in a link process
   under a data limit of its own; islandd reads bounded frames from it. Checked with a
   hand-written broker that ignores the Maximum Packet Size islandd asks for, and with a real
   mosquitto under MQTT 3.1.1 (which has no such request).
2. A device had one session at the broker for all its apps, and a broker bounds and drops per
   session: one app's server flooding its own token crowded out another app's pushes. Each app
   now has a session of its own, and a numbered push's answer says how many numbers before it
   never arrived, so a loss that does happen is visible to the server that suffered it."""

import os
import signal
import subprocess

import pytest

from harness import broker as brokers
from harness.paths import LIVENESS
from harness.processes import children_of, memory, wait_for

pytestmark = pytest.mark.skipif(not brokers.available(), reason="mosquitto, its clients or openssl are not installed "
                                                               "(scripts/install-deps.sh installs them)")

COFFEE = "org.example.Coffee"
FLIGHTS = "org.example.Flights"
# docs/design.md §9: islandd's memory, whatever anyone does.
CEILING = 128 << 20
SANITIZED = bool(os.environ.get("ISLAND_SANITIZER"))


def request(daemon, app, state):
    with daemon.connect("org.island.Producer") as producer:
        return producer.Request(app=app, type="Delivery", attributes={"order": 42}, content={"state": state},
                                pushToken=True)["activity"]


def activity(daemon, app, activity_id):
    with daemon.connect("org.island.Producer") as producer:
        return next((a for a in producer.List(app=app)["activities"] if a["id"] == activity_id), None)


@pytest.mark.skipif(SANITIZED, reason="a sanitizer's shadow memory needs more than any data limit allows, and RSS "
                                      "means nothing under it")
def test_a_hostile_brokers_oversized_packet_never_reaches_islandds_memory(make_daemon):
    hostile = brokers.HostileBroker(oversized=1)
    try:
        daemon = make_daemon(hostile.push_config("device-hostile"))
        device = "device-hostile"
        # The device's session got 140 MiB announced, lost that connection, and came back.
        wait_for(lambda: hostile.connections.get(device, 0) >= 2, timeout=LIVENESS,
                 message="the device's session back after the oversized packet (%s)" % daemon.log()[-800:])
        created = request(daemon, COFFEE, {"n": 0})
        token = created["pushToken"]
        session = brokers.session_client(device, token)
        # The app's session too: its first connection gets the same.
        wait_for(lambda: hostile.sent_oversized.get(session, 0) >= 1 and hostile.subscribed(token), timeout=LIVENESS,
                 message="the app's session subscribed after the oversized packet (%s)" % daemon.log()[-800:])
        hostile.push(token, brokers.aps("update", 1000, {"n": 1}, sequence=1))
        answers = wait_for(lambda: hostile.feedback(brokers.feedback_topic(token)), timeout=LIVENESS,
                           message="the push's answer (%s)" % daemon.log()[-800:])
        assert answers[0]["outcome"] in ("applied", "throttled") and answers[0]["sequence"] == 1
        assert activity(daemon, COFFEE, created["id"])["content"]["state"] == {"n": 1}
        assert daemon.process.poll() is None
        peak = memory(daemon.process.pid)[1]
        assert peak <= CEILING, "islandd's peak RSS %.1f MiB" % (peak / 2**20)
        # Nor did the link process take it in: it is held to its own limit.
        link_peak = memory(link_process(daemon))[1]
        assert link_peak <= CEILING, "the link process's peak RSS %.1f MiB" % (link_peak / 2**20)
        print("after a hostile 140 MiB PUBLISH, peak RSS: islandd %.1f MiB, its link process %.1f MiB"
              % (peak / 2**20, link_peak / 2**20))
    finally:
        hostile.close()


@pytest.mark.skipif(SANITIZED, reason="a sanitizer's shadow memory needs more than any data limit allows")
def test_a_140_mib_publish_through_mosquitto_under_mqtt_3_1_1_leaves_islandd_bounded_and_working(make_daemon, tmp_path):
    """A token holder (Flights' server) publishes 140 MiB to its own token through a mosquitto
    without max_packet_size, under MQTT 3.1.1, where a client cannot ask for a limit. Flights'
    session gives up that connection (mosquitto may even send it again at the reconnection, if
    it had not finished sending it: then Flights' session is discarded at the broker, as for a
    QoS 1 message below), but islandd's memory is not touched, and other apps' sessions go on."""
    broker = brokers.Broker(devices=["device-311"]).start()
    try:
        daemon = make_daemon(broker.push_config("device-311") + "MQTTVersion=3.1.1\n")
        wait_for(lambda: "connected to the push broker" in daemon.log(), message="the broker connection")
        coffee = request(daemon, COFFEE, {"n": 0})
        flights = request(daemon, FLIGHTS, {"n": 0})
        for created in (coffee, flights):
            broker.wait_subscribed(brokers.session_client("device-311", created["pushToken"], "3.1.1"), created["pushToken"])
        big = tmp_path / "big"
        with open(big, "wb") as f:
            f.truncate(140 << 20)
        flights_feedback = broker.subscriber("backend-flights", brokers.feedback_topic(flights["pushToken"]))
        subprocess.run(broker._prefix() + ["mosquitto_pub", "-h", broker.host, "-p", str(broker.port),
                                           *broker.credentials("backend-flights"), "-q", "0", "-t", flights["pushToken"],
                                           "-f", str(big)], check=True, capture_output=True, timeout=LIVENESS)
        flights_session = brokers.session_client("device-311", flights["pushToken"], "3.1.1")

        def flights_connections():
            return sum(1 for line in daemon.log().splitlines()
                       if "connected to the push broker" in line and "no connection" not in line
                       and "client_id=%s " % flights_session in line)
        # Flights' session lost its connection over it and came back. (A daemon that read it
        # whole would answer it instead: PushPayloadTooLarge.)
        try:
            wait_for(lambda: flights_connections() >= 2 or flights_feedback.messages, timeout=LIVENESS,
                     message="Flights' session back after the oversized publish, or an answer (%s)" % daemon.log()[-800:])
        finally:
            flights_feedback.close()
        feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(coffee["pushToken"]))
        try:
            broker.publish("backend-coffee", coffee["pushToken"], brokers.aps("update", 1000, {"n": 1}))
            assert feedback.wait(1)[0]["outcome"] in ("applied", "throttled")
        finally:
            feedback.close()
        assert activity(daemon, COFFEE, coffee["id"])["content"]["state"] == {"n": 1}
        assert daemon.process.poll() is None
        peak = memory(daemon.process.pid)[1]
        assert peak <= CEILING, "islandd's peak RSS %.1f MiB" % (peak / 2**20)
        print("islandd peak RSS after a 140 MiB publish through mosquitto (3.1.1): %.1f MiB" % (peak / 2**20))
    finally:
        broker.remove()


# The developer guide's broker limits, with a queue of 100 rather than 1,000 so that a flood is quick to make.
QUEUED = 100
README_LIMITS = ("max_packet_size 131072\nmax_queued_messages 1000\nmax_queued_bytes 16777216\n"
                 "persistent_client_expiration 7d\n")
LIMITS = README_LIMITS.replace("max_queued_messages 1000", "max_queued_messages %d" % QUEUED)


@pytest.fixture(scope="module")
def limited_broker():
    b = brokers.Broker(devices=["device-flood-%d" % n for n in range(1, 4)], limits=LIMITS).start()
    yield b
    b.remove()


def two_apps(broker, make_daemon, device):
    daemon = make_daemon(broker.push_config(device))
    wait_for(lambda: "connected to the push broker" in daemon.log(), message="the broker connection")
    coffee = request(daemon, COFFEE, {"n": 0})
    flights = request(daemon, FLIGHTS, {"n": 0})
    for created in (coffee, flights):
        broker.wait_subscribed(brokers.session_client(device, created["pushToken"]), created["pushToken"])
    return daemon, coffee, flights


def accounted(answers, sent):
    """Every push numbered 1…`sent` is either answered or counted as missed by a later answer."""
    numbered = sorted({a["sequence"] for a in answers if a.get("sequence")})
    missed = sum(a.get("missed", 0) for a in answers)
    return numbered[-1] == sent and len(numbered) + missed == sent


def test_one_app_flooding_its_token_while_the_device_is_offline_loses_no_push_of_another_app(limited_broker, make_daemon):
    broker = limited_broker
    daemon, coffee, flights = two_apps(broker, make_daemon, "device-flood-1")
    coffee_feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(coffee["pushToken"]))
    flights_feedback = broker.subscriber("backend-flights", brokers.feedback_topic(flights["pushToken"]))
    try:
        daemon.stop()
        flood = QUEUED + 50
        broker.publish_lines("backend-flights", flights["pushToken"],
                             [brokers.aps("update", 1000 + n, {"n": n}, sequence=n) for n in range(1, flood + 1)])
        broker.publish("backend-coffee", coffee["pushToken"], brokers.aps("end", 2000, {"n": "done"}, sequence=1))
        daemon.start()
        answer = coffee_feedback.wait(1)[0]
        assert answer["event"] == "end" and answer["outcome"] == "applied", answer
        assert activity(daemon, COFFEE, coffee["id"])["state"] != "active"
        # Flights' own queue overflowed: what the broker dropped is told to Flights' server by
        # the answer to its next push.
        first = flights_feedback.wait(QUEUED)
        assert len(first) < flood, "the broker kept more than its limit: nothing was lost"
        broker.publish("backend-flights", flights["pushToken"], brokers.aps("update", 1000 + flood + 1, {"n": 0}, sequence=flood + 1))
        answers = wait_for(lambda: [a for a in flights_feedback.wait(1) if a.get("sequence") == flood + 1]
                           and flights_feedback.wait(1), message="the answer to Flights' next push")
        last = answers[-1]
        assert last["sequence"] == flood + 1 and last.get("missed", 0) > 0, last
        assert accounted(answers, flood + 1), [(a.get("sequence"), a.get("missed")) for a in answers]
        print("offline: Flights %d answered, %d missed and told; Coffee's end applied" % (len(answers), last["missed"]))
        if not SANITIZED:  # a sanitizer's shadow memory counts in RSS
            peak = memory(daemon.process.pid)[1]
            assert peak <= CEILING, "islandd's peak RSS %.1f MiB" % (peak / 2**20)
    finally:
        coffee_feedback.close()
        flights_feedback.close()


def link_process(daemon, other_than=None):
    """The pid of islandd's MQTT link process: its child (not `other_than`, one killed)."""
    children = wait_for(
        lambda: [child for child in children_of(daemon.process.pid) if child != other_than], message="the link process")
    assert len(children) == 1, children
    return children[0]


def shared_files(pid):
    """What `pid` holds open beyond its standard three, by what it is: sockets and pipes by inode,
    files by path (an anonymous inode's name is the same in every process, so it says nothing)."""
    held = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except FileNotFoundError:  # closed while listed
            continue
        if int(fd) > 2 and target.startswith(("socket:[", "pipe:[", "/")) and target != "/dev/null":
            held.add(target)
    return held


def test_the_link_process_holds_none_of_the_daemons_sockets_or_files(make_daemon):
    """The link process reads what brokers send, so it must hold nothing of the daemon's: not its
    listening socket (which it could accept the daemon's clients on, and which kept answering
    connections after a `kill -9` of the daemon until the link process noticed), not a client's
    connection, not the store. SwiftNIO opens sockets without close-on-exec; the spawn closes
    them. Checked on the first link process and on one started again while a client is
    connected."""
    broker = brokers.Broker(devices=["device-fds"]).start()
    try:
        daemon = broker.device(make_daemon, "device-fds")
        with daemon.connect("org.island.Producer") as producer:
            producer.List(app=COFFEE)
            first = link_process(daemon)
            assert not shared_files(first) & shared_files(daemon.process.pid), "the first link process"
            connections = daemon.log().count("connected to the push broker")
            os.kill(first, signal.SIGKILL)
            again = link_process(daemon, other_than=first)
            wait_for(lambda: daemon.log().count("connected to the push broker") > connections,
                     message="the new link process connected")
            producer.List(app=COFFEE)  # the client's connection is still open, and still the daemon's
            assert not shared_files(again) & shared_files(daemon.process.pid), "the link process started again"
    finally:
        broker.remove()


def test_one_app_flooding_its_token_while_the_device_is_online_loses_no_push_of_another_app(make_daemon):
    """The device is connected but reads nothing for a while (its link process is stopped: a
    slow device, made deterministic): the broker sends each session its 20 in flight and
    queues the rest up to max_queued_messages, then drops. Flights' server sends 1,500,
    Coffee's 20: Coffee's wait in a queue of their own."""
    # The developer guide's limits as they are (a queue of 1,000): the backends' own feedback
    # subscribers are sessions too, and a smaller queue would drop answers in a burst.
    broker = brokers.Broker(devices=["device-burst"], limits=README_LIMITS).start()
    daemon, coffee, flights = two_apps(broker, make_daemon, "device-burst")
    coffee_feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(coffee["pushToken"]))
    flights_feedback = broker.subscriber("backend-flights", brokers.feedback_topic(flights["pushToken"]))
    link = link_process(daemon)
    try:
        flood = 1500
        os.kill(link, signal.SIGSTOP)
        try:
            broker.publish_lines("backend-flights", flights["pushToken"],
                                 [brokers.aps("update", 1000 + n, {"n": n}, sequence=n) for n in range(1, flood + 1)])
            broker.publish_lines("backend-coffee", coffee["pushToken"],
                                 [brokers.aps("update", 5000 + n, {"n": n}, sequence=n) for n in range(1, 21)])
        finally:
            os.kill(link, signal.SIGCONT)
        answers = coffee_feedback.wait(20, timeout=2 * LIVENESS)
        assert sorted(a["sequence"] for a in answers) == list(range(1, 21)), "every push of Coffee answered"
        assert all("missed" not in a for a in answers)
        # Flights' own queue overflowed: what was lost is accounted for by a later answer.
        broker.publish("backend-flights", flights["pushToken"], brokers.aps("update", 1000 + flood + 1, {"n": 0}, sequence=flood + 1))
        wait_for(lambda: any(a.get("sequence") == flood + 1 for a in flights_feedback.wait(1)), timeout=2 * LIVENESS,
                 message="the answer to Flights' last push")
        answers = flights_feedback.wait(1)
        missed = sum(a.get("missed", 0) for a in answers)
        assert missed > 0, "the broker kept more than its limit: nothing was lost"
        assert accounted(answers, flood + 1), (len(answers), missed)
        print("online: Flights %d answered, %d missed and told; Coffee 20 of 20" % (len(answers), missed))
        if not SANITIZED:  # a sanitizer's shadow memory counts in RSS
            peak = memory(daemon.process.pid)[1]
            assert peak <= CEILING, "islandd's peak RSS %.1f MiB" % (peak / 2**20)
    finally:
        coffee_feedback.close()
        flights_feedback.close()
        broker.remove()


@pytest.mark.skipif(SANITIZED, reason="a sanitizer's shadow memory needs more than any data limit allows")
@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_an_oversized_qos_1_message_is_named_dropped_and_later_pushes_arrive(make_daemon, tmp_path, version):
    """An app's server publishes, at QoS 1, a message larger than the link process can hold
    (LinkHeadroom= makes that 16 MiB rather than 140) through a mosquitto without
    max_packet_size. Under MQTT 3.1.1 the broker sends it again at every reconnection of the
    app's persistent session: the log names the oversized message (not another client with the
    same ClientID), the daemon discards that session at the broker, and the server's next push is
    applied. Under MQTT 5 the broker never sends it: the CONNECT's Maximum Packet Size (256 KiB)
    makes mosquitto drop it."""
    broker = brokers.Broker(devices=["device-big"]).start()
    try:
        daemon = make_daemon(broker.push_config("device-big") + "MQTTVersion=%s\nLinkHeadroom=2M\n" % version)
        created = request(daemon, COFFEE, {"n": 0})
        token = created["pushToken"]
        session = brokers.session_client("device-big", token, version)
        broker.wait_subscribed(session, token)
        big = tmp_path / "big"
        with open(big, "wb") as f:
            f.truncate(16 << 20)
        subprocess.run(broker._prefix() + ["mosquitto_pub", "-h", broker.host, "-p", str(broker.port),
                                           *broker.credentials("backend-coffee"), "-q", "1", "-t", token, "-f", str(big)],
                       check=True, capture_output=True, timeout=LIVENESS)
        if version == "3.1.1":
            wait_for(lambda: "discarding the session at the broker" in daemon.log(), timeout=LIVENESS,
                     message="the session discarded after the broker resent the oversized message (%s)" % daemon.log()[-2000:])
            told = [line for line in daemon.log().splitlines() if "larger than the MQTT link process can hold" in line]
            assert told and "2 MiB" in told[0] and "LinkHeadroom=" in told[0] and "client_id=%s" % session in told[0], told
        feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(token))
        try:
            # A server that hears nothing sends the same push again (same timestamp: applied once):
            # the push may come before the new session has subscribed.
            def answered():
                broker.publish("backend-coffee", token, brokers.aps("update", 1000, {"n": 1}, sequence=1))
                try:
                    # One round of resending, not the test's bound.
                    return feedback.wait(1, timeout=2)
                except TimeoutError:
                    return None
            answers = wait_for(answered, timeout=LIVENESS, message="the later push's answer (%s)" % daemon.log()[-2000:])
        finally:
            feedback.close()
        assert answers[0]["outcome"] in ("applied", "throttled") and answers[0]["sequence"] == 1, answers
        wait_for(lambda: activity(daemon, COFFEE, created["id"])["content"]["state"] == {"n": 1}, timeout=LIVENESS,
                 message="the later push applied")
        log = daemon.log()
        assert "soon after accepting it" not in log and "took its session" not in log, "another client blamed: " + log[-2000:]
        if version == "5":
            assert "larger than" not in log, "the broker sent it under MQTT 5: " + log[-2000:]
        print("\n".join(line for line in log.splitlines() if "client_id=%s" % session in line))
        assert daemon.process.poll() is None
    finally:
        broker.remove()



@pytest.mark.skipif(SANITIZED, reason="a sanitizer's shadow memory needs more than any data limit allows")
def test_a_hostile_mqtt_5_broker_resending_an_oversized_packet_gets_the_session_discarded(make_daemon):
    """A broker that ignores the Maximum Packet Size of MQTT 5 and sends an app's session an
    oversized packet at two connections running: the second time the daemon discards the
    session (a connection with a clean start, closed once accepted), the next connection
    subscribes again, and a push through it is applied."""
    hostile = brokers.HostileBroker(oversized=2, oversized_bytes=40 << 20)
    try:
        daemon = make_daemon(hostile.push_config("device-h") + "LinkHeadroom=4M\n")
        created = request(daemon, COFFEE, {"n": 0})
        token = created["pushToken"]
        session = brokers.session_client("device-h", token)
        # Two oversized, the discarding one, the new session's.
        wait_for(lambda: "discarding the session at the broker" in daemon.log() and hostile.connections.get(session, 0) >= 4
                 and hostile.subscribed(token), timeout=LIVENESS, message="the session discarded and subscribed again (%s)"
                 % daemon.log()[-2000:])
        hostile.push(token, brokers.aps("update", 1000, {"n": 1}, sequence=1))
        answers = wait_for(lambda: hostile.feedback(brokers.feedback_topic(token)), timeout=LIVENESS,
                           message="the push's answer (%s)" % daemon.log()[-2000:])
        assert answers[0]["outcome"] in ("applied", "throttled") and answers[0]["sequence"] == 1, answers
        assert "soon after accepting it" not in daemon.log()
    finally:
        hostile.close()


def test_one_apps_flood_delays_another_apps_push_by_at_most_the_window(make_daemon):
    """Flights' server floods its token (3,000 pushes at QoS 1) while islandd is stopped (a busy
    device, made deterministic); then Coffee's server sends one push, and islandd goes on. The
    link process hands Flights' pushes on only up to its share of the window (48 of 64), and
    Coffee's beside them at once, so Coffee's is decided after at most a window of Flights'
    (docs/design.md, Push: the shared window) — not after all that Flights' session had read.
    Observed as the order islandd took them in: each answer's `receivedAt`, stamped as the push
    is taken, one after another on the engine's loop."""
    flood = 3000
    broker = brokers.Broker(devices=["device-fair"], limits="max_queued_messages %d\n" % (2 * flood)).start()
    daemon = make_daemon(broker.push_config("device-fair"))
    try:
        wait_for(lambda: "connected to the push broker" in daemon.log(), message="the broker connection")
        coffee = request(daemon, COFFEE, {"n": 0})
        flights = request(daemon, FLIGHTS, {"n": 0})
        for created in (coffee, flights):
            broker.wait_subscribed(brokers.session_client("device-fair", created["pushToken"]), created["pushToken"])
        coffee_feedback = broker.subscriber("backend-coffee", brokers.feedback_topic(coffee["pushToken"]))
        flights_feedback = broker.subscriber("backend-flights", brokers.feedback_topic(flights["pushToken"]))
        coffee_session = brokers.session_client("device-fair", coffee["pushToken"])
        os.kill(daemon.process.pid, signal.SIGSTOP)
        try:
            broker.publish_lines("backend-flights", flights["pushToken"],
                                 [brokers.aps("update", 1000 + n, {"n": n}, priority=5, sequence=n) for n in range(1, flood + 1)])
            broker.publish("backend-coffee", coffee["pushToken"], brokers.aps("update", 5000, {"n": 1}))
            # Coffee's push reached islandd's socket: libmosquitto acknowledges a message once its
            # handler has returned, and the handler returns once the frame is written. (With the
            # window unshared it never is while islandd is stopped: the socket is full of Flights'.)
            wait_for(lambda: "Received PUBACK from %s " % coffee_session in open(broker.path("mosquitto.log")).read(),
                     timeout=LIVENESS, message="Coffee's push handed on by the link process")
        finally:
            os.kill(daemon.process.pid, signal.SIGCONT)
        [answer] = coffee_feedback.wait(1, timeout=2 * LIVENESS)
        assert answer["outcome"] in ("applied", "throttled"), answer
        taken = answer["receivedAt"]
        # Flights' answers come in the order its pushes were taken: read up to the first taken
        # after Coffee's.
        wait_for(lambda: any(a["receivedAt"] > taken for a in flights_feedback.wait(1, timeout=2 * LIVENESS)),
                 timeout=2 * LIVENESS, message="a push of Flights taken after Coffee's")
        before = sum(1 for a in flights_feedback.wait(1) if a["receivedAt"] <= taken)
        assert before <= 64, "Coffee's push was taken after %d of Flights' flood" % before
        # And the flood goes on after it, to its last push.
        wait_for(lambda: activity(daemon, FLIGHTS, flights["id"])["content"]["state"] == {"n": flood},
                 timeout=4 * LIVENESS, message="Flights' last push applied")
        print("Coffee's push taken after %d of Flights' %d" % (before, flood))
        coffee_feedback.close()
        flights_feedback.close()
    finally:
        broker.remove()
