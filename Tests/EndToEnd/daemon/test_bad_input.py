"""The bad-input matrix (docs/design.md §8): every kind of bad client against the real daemon while
a well-behaved producer and presenter keep working.

Each case runs its bad clients on raw sockets and asserts exactly what each one gets: a named
error (with its parameters) or a clean close. Throughout the case a well-behaved producer
updates its own activity every 50 ms and a well-behaved presenter reads the island; after the
case they must have been answered correctly the whole time, must still be, the bad
connections must be gone from the daemon's count, and the daemon's memory must be bounded
(see RSS_BOUND). Where a bad client holds something (connections, a stalled stream, a flood),
the case checks that the well-behaved ones are served while it still holds it (`served_while`):
by the order of events, not by how fast, since a starved client is served only once the bad
one lets go, which is after that check.
"""

import os
import socket
import threading
import time

import pytest

from harness.paths import LIVENESS
from harness.processes import memory, wait_for
from harness.varlink import Connection, error, frame

COFFEE = "org.example.Coffee"    # 2 updates/s: the flooding producer
FLIGHTS = "org.example.Flights"  # frequent updates (20/s): feeds the never-reading presenters
TIMER = "org.example.Timer"      # the well-behaved producer

MAX_MESSAGE = 256 * 1024         # PROTOCOL.md, Limits: the default MaxMessageSize
MAX_QUEUED_CALLS = 64            # calls read ahead per connection
MAX_UNREAD_OUTPUT = 16 * 1024 * 1024

# The daemon's resident memory, peak (VmHWM) and current (VmRSS), must stay under this. An idle
# debug-build islandd is about 37 MiB. What a bad client can legitimately make it hold is
# bounded per connection: one partial message (256 KiB), 64 read-ahead calls, 16 MiB of unread
# replies, a presenter queue of 64 messages; 1,000 idle connections cost a few MiB of NIO
# state. No case here needs more than one such worst case at once, so 128 MiB is more than
# twice what any case may cost, while a leak of what the floods push through (hundreds of
# MiB of calls and replies) would cross it.
RSS_BOUND = 128 * 1024 * 1024
# Under scripts/sanitize.sh (ISLAND_SANITIZER set) the daemon's memory is the sanitizer's (shadow
# memory, quarantine) and its speed a fraction of the debug build's: the bounds do not apply
# there, or apply ten times looser.
SANITIZED = bool(os.environ.get("ISLAND_SANITIZER"))


# ---------------------------------------------------------------------------------------------
# Raw clients


def assert_closed_with(raw, name, **parameters):
    """The connection's next message is the error `name` (with these parameters, when given),
    and then the daemon closes it. Returns the error's parameters."""
    got, params = error(raw.read())
    assert got == name, (got, params)
    for key, value in parameters.items():
        assert params.get(key) == value, (key, params)
    raw.expect_close()
    return params


def get_info_ok(reply):
    assert "error" not in reply, reply
    assert reply["parameters"]["product"] == "islandd", reply


# ---------------------------------------------------------------------------------------------
# The well-behaved clients


class WellBehaved:
    """A producer that updates its own activity every 50 ms and checks each reply, and a
    presenter that reads the island and records the latest content of every item, each on
    its own thread and its own connection; plus an admin connection for the daemon's state.
    These three connections stay open for the whole case."""

    HELD_CONNECTIONS = 3

    def __init__(self, daemon):
        self.daemon = daemon
        self.admin = Connection(daemon.socket)
        self.producer = Connection(daemon.socket)
        reply = self.producer.ask("org.island.Producer.Request", {
            "app": TIMER, "type": "Probe", "attributes": {}, "content": {"state": {"n": 0}}})
        self.id = reply["parameters"]["activity"]["id"]
        self.presenter = Connection(daemon.socket)
        self.presenter.call("org.island.Presenter.Subscribe", {}, more=True)
        snapshot = self.presenter.read()["parameters"]["update"]
        assert snapshot["kind"] == "snapshot"
        self.contents = {item["id"]: item["content"]["state"] for item in snapshot["items"]}
        self.sequence = snapshot["sequence"]
        self.n = 0
        # Replies the producer got: its progress, which the cases watch while a bad client holds.
        self.replies = 0
        # Updates the presenter read: every presenter is sent the same stream.
        self.updates_seen = 0
        self.latencies = []
        self.errors = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._produce, daemon=True),
                        threading.Thread(target=self._present, daemon=True)]
        for t in self.threads:
            t.start()
        self.started = time.monotonic()

    def connections(self):
        reply = self.admin.ask("org.island.Admin.Status", {})
        assert "error" not in reply, reply
        return reply["parameters"]["connections"]

    def update(self, n):
        reply = self.producer.ask("org.island.Producer.Update", {
            "app": TIMER, "id": self.id, "content": {"state": {"n": n}}})
        assert "error" not in reply, reply
        assert reply["parameters"]["activity"]["content"]["state"] == {"n": n}, reply
        return reply

    def _produce(self):
        try:
            while not self.stop.is_set():
                self.n += 1
                start = time.monotonic()
                self.update(self.n)
                self.latencies.append(time.monotonic() - start)
                self.replies += 1
                self.stop.wait(0.05)
        except BaseException as e:  # noqa: B036 — reported by check()
            self.errors.append("producer: %r" % e)

    def _present(self):
        try:
            while not self.stop.is_set():
                try:
                    # A short read only so that the thread looks at `stop` now and then.
                    message = self.presenter.read(timeout=0.2)
                except TimeoutError:
                    continue
                update = message["parameters"]["update"]
                self.updates_seen += 1
                assert message.get("continues") is True, message
                assert update["sequence"] > self.sequence or update["resync"], (self.sequence, update)
                self.sequence = update["sequence"]
                if update["kind"] == "snapshot":
                    self.contents = {}
                for item in update["items"]:
                    self.contents[item["id"]] = item["content"]["state"]
                for removed in update["removed"]:
                    self.contents.pop(removed, None)
        except BaseException as e:  # noqa: B036
            self.errors.append("presenter: %r" % e)

    def served_while(self, what):
        """The producer gets two more replies, and the presenter sees the content of the
        second, now: the caller's bad clients still hold what they hold, and let go only after
        this returns. A daemon that starves the well-behaved clients until a bad one is gone
        (or for good) fails here, at the liveness bound, however fast or slow the machine."""
        target = self.replies + 2
        wait_for(lambda: self.replies >= target or self.errors,
                 message="the well-behaved producer answered while %s" % what)
        assert not self.errors, self.errors
        # Replies are counted after their check, so the producer's content is at least this.
        n = target
        wait_for(lambda: self.contents.get(self.id, {}).get("n", 0) >= n or self.errors,
                 message="the well-behaved presenter seeing the producer's update while %s" % what)
        assert not self.errors, self.errors

    def check(self):
        """After a case: the well-behaved clients were answered correctly throughout (no
        error, no call stuck), are served now, the bad connections are gone, and memory stayed
        bounded. (How fast they were served is measured, not asserted: see the summary.)"""
        self.stop.set()
        for t in self.threads:
            t.join(timeout=LIVENESS + 5)
            assert not t.is_alive(), "a well-behaved client is stuck in a call"
        assert not self.errors, self.errors
        assert self.latencies, "the well-behaved producer got no reply"
        worst = max(self.latencies)
        # Served now: an update is answered and reaches the presenter (at its rate, 2/s).
        self.stop.clear()
        self.threads = [threading.Thread(target=self._present, daemon=True)]
        self.threads[0].start()
        marker = 1_000_000 + self.n
        self.update(marker)
        wait_for(lambda: self.contents.get(self.id) == {"n": marker} or self.errors,
                 message="the well-behaved presenter seeing the last update")
        assert not self.errors, self.errors
        # A new connection is accepted and answered, and the bad ones are all gone.
        fresh = Connection(self.daemon.socket)
        get_info_ok(fresh.ask("org.varlink.service.GetInfo"))
        fresh.close()
        wait_for(lambda: self.connections() == self.HELD_CONNECTIONS,
                 message="the daemon's connection count back to the well-behaved ones")
        rss, peak = memory(self.daemon.process.pid)
        if not SANITIZED:
            assert peak < RSS_BOUND, "islandd peaked at %.1f MiB" % (peak / 2**20)
            assert rss < RSS_BOUND, "islandd holds %.1f MiB" % (rss / 2**20)
        assert self.daemon.process.poll() is None
        self.stop.set()
        self.threads[0].join(timeout=LIVENESS)
        return {"peak_mib": round(peak / 2**20, 1), "worst_latency": round(worst, 3), "calls": len(self.latencies)}

    def close(self):
        self.stop.set()
        for raw in (self.producer, self.presenter, self.admin):
            raw.close()


# ---------------------------------------------------------------------------------------------
# The cases. Each gets the daemon and the running well-behaved clients, and closes every
# connection it opened before it returns.


def truncated_then_half_closed(daemon, well):
    """A message cut off by the end of the stream: named, after the whole calls before it."""
    raw = Connection(daemon.socket)
    raw.send(frame({"method": "org.varlink.service.GetInfo"}) + b'{"method":"org.varlink.service.GetI')
    raw.sock.shutdown(socket.SHUT_WR)
    get_info_ok(raw.read())
    params = assert_closed_with(raw, "org.island.Connection.InvalidMessage")
    assert "ended inside a message (35 bytes without a NUL)" in params["reason"], params
    raw.close()


def truncated_then_vanished(daemon, well):
    """Clients that send half a message and disappear (no one to answer): just gone."""
    for n in range(50):
        raw = Connection(daemon.socket)
        raw.send(b'{"method":"org.island.Producer.Request","parameters":{"app":"' + b"x" * n)
        raw.close()
    for n in range(50):
        raw = Connection(daemon.socket)
        raw.send(b'{"method":"org.island.Presenter.Subscribe","more":true}\0')
        raw.close()


def message_at_and_over_the_limit(daemon, well):
    """A message of exactly the limit is served; one byte more is MessageTooLarge."""
    raw = Connection(daemon.socket)
    head = b'{"method":"org.varlink.service.GetInfo","pad":"'
    at_limit = head + b"x" * (MAX_MESSAGE - len(head) - 2) + b'"}'
    assert len(at_limit) == MAX_MESSAGE
    raw.send(at_limit + b"\0")
    get_info_ok(raw.read())
    over = head + b"x" * (MAX_MESSAGE - len(head) - 1) + b'"}'
    raw.send(frame({"method": "org.varlink.service.GetInfo"}) + over + b"\0")
    get_info_ok(raw.read())
    assert_closed_with(raw, "org.island.Connection.MessageTooLarge", limit=MAX_MESSAGE)
    raw.close()


def oversized_stream_without_nul(daemon, well):
    """64 MiB without a NUL: the daemon stops at the limit instead of buffering it all."""
    raw = Connection(daemon.socket)
    chunk = b"[" + b"1," * (1 << 19)
    sent = 0
    raw.sock.settimeout(LIVENESS)
    try:
        while sent < 64 * 1024 * 1024:
            sent += raw.sock.send(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert sent < 8 * 1024 * 1024, "the daemon read %d bytes of one message" % sent
    assert_closed_with(raw, "org.island.Connection.MessageTooLarge", limit=MAX_MESSAGE)
    raw.close()


def invalid_utf8(daemon, well):
    """Bytes that are not UTF-8 (or escapes that are not Unicode), anywhere in a message."""
    cases = [
        (b'{"method":"org.varlink.service.GetInfo","parameters":{"x":"\xff\xfe"}}', "invalid UTF-8"),
        (b'{"method":"org.varlink.service.GetInfo","x":"\xc0\xaf"}', "invalid UTF-8"),         # overlong '/'
        (b'{"method":"org.varlink.service.GetInfo","x":"\xed\xa0\x80"}', "invalid UTF-8"),     # surrogate
        (b'{"method":"org.varlink.service.GetInfo","x":"\xf4\x90\x80\x80"}', "invalid UTF-8"),  # > U+10FFFF
        (b'{"method":"org.island.Producer.Li\xe2\x82"}', "invalid UTF-8"),                     # cut sequence
        (b'{"method":"org.varlink.service.GetInfo","x":"\\ud800"}', "unexpected character"),   # lone surrogate
        (b'{"method":"org.varlink.service.GetInfo","x":"\\udc00"}', "invalid escape"),
        (b'\xef\xbb\xbf{"method":"org.varlink.service.GetInfo"}', "unexpected character"),    # a BOM
        (b'{"method":"org.varlink.service.GetInfo"\xff}', "unexpected character"),
    ]
    for data, reason in cases:
        raw = Connection(daemon.socket)
        raw.send(frame({"method": "org.varlink.service.GetInfo"}) + data + b"\0")
        get_info_ok(raw.read())
        params = assert_closed_with(raw, "org.island.Connection.InvalidMessage")
        assert params["reason"].startswith("invalid JSON: " + reason), (data, params)
        raw.close()
    # Valid non-ASCII text, and an escaped NUL, are fine.
    raw = Connection(daemon.socket)
    get_info_ok(raw.ask("org.varlink.service.GetInfo", None, x="h\u00e9\u2603\U0001F600\u0000"))
    raw.close()


def deeply_nested(daemon, well):
    """64 levels are the limit; 65, or 200,000, are InvalidMessage and crash nothing."""
    def nested(levels):
        # The message object is level 1; the ignored member holds the rest.
        inner = levels - 1
        return b'{"method":"org.varlink.service.GetInfo","x":' + b"[" * inner + b"]" * inner + b"}"
    raw = Connection(daemon.socket)
    raw.send(nested(64) + b"\0")
    get_info_ok(raw.read())
    raw.close()
    for data in (nested(65), b"[" * 200_000, b'{"method":"x","parameters":{"a":' * 5_000):
        raw = Connection(daemon.socket)
        raw.send(data + b"\0", may_be_cut=True)
        params = assert_closed_with(raw, "org.island.Connection.InvalidMessage")
        assert params["reason"].startswith("invalid JSON: nesting too deep"), params
        raw.close()


def not_a_varlink_call(daemon, well):
    """Frames that are not Varlink calls each name what is wrong, after earlier calls."""
    cases = [
        (b"", "invalid JSON: empty input"),
        (b"hello", "invalid JSON: unexpected character"),
        (b'{"method":"org.varlink.service.GetInfo"', "invalid JSON: unexpected end"),
        (b'{"method":"org.varlink.service.GetInfo"} {}', "invalid JSON: data after the JSON value"),
        (b'{"method":"a.B","method":"a.C"}', "invalid JSON: duplicate object key"),
        (b'{"method":"org.varlink.service.GetInfo","x":"a\nb"}', "invalid JSON: unescaped control character"),
        (b'{"method":"org.varlink.service.GetInfo","x":01}', "invalid JSON"),
        (b"[1]", "the message is not a JSON object"),
        (b"{}", 'the message has no "method" string'),
        (b'{"method":7}', 'the message has no "method" string'),
        (b'{"method":"org.varlink.service.GetInfo","parameters":[]}', '"parameters" is not an object'),
        (b'{"method":"org.varlink.service.GetInfo","more":"yes"}', '"more" is not a boolean'),
        (b'{"method":"org.varlink.service.GetInfo","oneway":1}', '"oneway" is not a boolean'),
        (b'{"method":"org.varlink.service.GetInfo","upgrade":{}}', '"upgrade" is not a boolean'),
    ]
    for data, reason in cases:
        raw = Connection(daemon.socket)
        # A call before and a call after: the first is answered, the second never read.
        raw.send(frame({"method": "org.varlink.service.GetInfo"}) + data + b"\0"
                 + frame({"method": "org.varlink.service.GetInfo"}))
        get_info_ok(raw.read())
        params = assert_closed_with(raw, "org.island.Connection.InvalidMessage")
        assert params["reason"].startswith(reason), (data, params)
        raw.close()


# (method, parameters, the parameter InvalidParameter names)
WRONG_TYPES = [
    ("org.island.Producer.Request", {"app": COFFEE, "type": 7, "attributes": {}, "content": {"state": {}}}, "type"),
    ("org.island.Producer.Request", {"app": COFFEE, "type": "T", "attributes": [], "content": {"state": {}}}, "attributes"),
    ("org.island.Producer.Request", {"app": COFFEE, "type": "T", "attributes": {}, "content": {"state": "x"}}, "content.state"),
    ("org.island.Producer.Request", {"app": COFFEE, "type": "T", "attributes": {}}, "content"),
    ("org.island.Producer.Request", {"app": COFFEE, "type": "T", "attributes": {}, "content": {"state": {}, "relevanceScore": "high"}}, "content.relevanceScore"),
    ("org.island.Producer.Request", {"app": COFFEE, "type": "T", "attributes": {}, "content": {"state": {}}, "ownerGone": "explode"}, "ownerGone"),
    ("org.island.Producer.Request", {"app": COFFEE, "type": "T", "attributes": {}, "content": {"state": {}}, "extra": 1}, "extra"),
    ("org.island.Producer.Request", {"app": 1, "type": "T", "attributes": {}, "content": {"state": {}}}, "app"),
    ("org.island.Producer.Update", {"app": COFFEE, "id": 42, "content": {"state": {}}}, "id"),
    ("org.island.Producer.Update", {"app": COFFEE, "id": "x", "content": {"state": {}}, "timestamp": "now"}, "timestamp"),
    ("org.island.Producer.Update", {"app": COFFEE, "id": "x", "content": {"state": {}}, "alert": {"title": "t"}}, "alert.body"),
    ("org.island.Producer.End", {"app": COFFEE, "id": "x", "dismissalPolicy": {"kind": "later"}}, "dismissalPolicy.kind"),
    # A string where the object belongs is named where the caller wrote it.
    ("org.island.Producer.End", {"app": COFFEE, "id": "x", "dismissalPolicy": "immediate"}, "dismissalPolicy"),
    ("org.island.Producer.List", {"app": COFFEE, "states": ["active", "bogus"]}, "states[1]"),
    ("org.island.Producer.List", {"app": COFFEE, "states": "active"}, "states"),
    ("org.island.Presenter.Interact", {"action": "fly"}, "action"),
    ("org.island.Admin.SetEnabled", {"enabled": "yes"}, "enabled"),
    ("org.varlink.service.GetInterfaceDescription", {"interface": None}, "interface"),
    ("org.varlink.service.GetInterfaceDescription", {}, "interface"),
    ("org.varlink.service.GetInfo", {"unexpected": True}, "unexpected"),
]


def wrong_types(daemon, well):
    """Each mistyped, missing or unexpected field is InvalidParameter naming its path, and
    the connection stays usable (and unbound: validation runs before any role binds)."""
    raw = Connection(daemon.socket)
    for method, parameters, path in WRONG_TYPES:
        reply = raw.ask(method, parameters)
        name, params = error(reply)
        assert name == "org.varlink.service.InvalidParameter" and params["parameter"] == path, (method, parameters, reply)
        assert set(params) == {"parameter", "expected"} and params["expected"], reply
    # What belongs there, in the interface's words.
    reply = raw.ask("org.island.Producer.End", {"app": COFFEE, "id": "x", "dismissalPolicy": "immediate"})
    assert error(reply)[1]["expected"] == "DismissalPolicy (kind: (default, immediate, after), date: ?float)", reply
    reply = raw.ask("org.island.Producer.List", {"app": COFFEE})
    assert reply["parameters"]["activities"] == [], reply
    raw.close()


# (method, extra call members, the error and its parameters)
UNKNOWN = [
    ("org.island.Producer.Fly", {}, "org.varlink.service.MethodNotFound", {"method": "org.island.Producer.Fly"}),
    ("org.island.Connection.Close", {}, "org.varlink.service.MethodNotFound", {"method": "org.island.Connection.Close"}),
    ("org.island.Nothing", {}, "org.varlink.service.MethodNotFound", {"method": "org.island.Nothing"}),
    ("org.example.Nope.Call", {}, "org.varlink.service.InterfaceNotFound", {"interface": "org.example.Nope"}),
    ("org.island.producer.List", {}, "org.varlink.service.InterfaceNotFound", {"interface": "org.island.producer"}),
    ("NoDots", {}, "org.varlink.service.InterfaceNotFound", {"interface": ""}),
    ("", {}, "org.varlink.service.InterfaceNotFound", {"interface": ""}),
    ("org.island.Presenter.Subscribe", {}, "org.varlink.service.ExpectedMore", {}),
    ("org.varlink.service.GetInfo", {"upgrade": True}, "org.varlink.service.InvalidParameter", {"parameter": "upgrade"}),
]


def unknown_methods_and_interfaces(daemon, well):
    """Unknown interfaces and methods are named; the connection keeps working, pipelined."""
    raw = Connection(daemon.socket)
    raw.send(b"".join(frame(dict({"method": m, "parameters": {}}, **flags)) for m, flags, _, _ in UNKNOWN)
             + frame({"method": "org.varlink.service.GetInfo"}))
    for method, _, name, parameters in UNKNOWN:
        assert error(raw.read()) == (name, parameters), method
    get_info_ok(raw.read())
    # The description of an interface that is not served.
    reply = raw.ask("org.varlink.service.GetInterfaceDescription", {"interface": "org.example.Nope"})
    assert error(reply) == ("org.varlink.service.InterfaceNotFound", {"interface": "org.example.Nope"})
    # A oneway call to nothing is not answered at all; the next call is.
    raw.call("org.example.Nope.Call", {}, oneway=True)
    get_info_ok(raw.ask("org.varlink.service.GetInfo"))
    raw.close()


def open_many(daemon, count):
    """`count` connections at once, each with a GetInfo call written; returns them open."""
    raws = []
    for _ in range(count):
        raw = Connection(daemon.socket)
        raw.call("org.varlink.service.GetInfo")
        raws.append(raw)
    return raws


def thousand_connections(daemon, well):
    """1,000 concurrent connections (the per-uid default is 1,024): every one is served."""
    raws = open_many(daemon, 1000)
    try:
        for raw in raws:
            get_info_ok(raw.read())
        assert well.connections() >= 1000 + WellBehaved.HELD_CONNECTIONS
        well.served_while("1,000 other connections are open")
        # Still all usable, in any order.
        for raw in reversed(raws[::50]):
            get_info_ok(raw.ask("org.varlink.service.GetInfo"))
    finally:
        for raw in raws:
            raw.close()


def connections_over_the_limit(scope):
    def case(daemon, well):
        """1,000 connections against a limit of 100 (config): the first are served, every
        other one is refused with TooManyConnections, and the refusals hold nothing."""
        raws = open_many(daemon, 1000)
        served = refused = 0
        try:
            for raw in raws:
                reply = raw.read()
                if "error" in reply:
                    assert reply == {"error": "org.island.Connection.TooManyConnections",
                                     "parameters": {"limit": 100, "scope": scope}}, reply
                    raw.expect_close()
                    refused += 1
                else:
                    get_info_ok(reply)
                    served += 1
            # The well-behaved clients hold three of the hundred.
            assert (served, refused) == (100 - WellBehaved.HELD_CONNECTIONS, 900 + WellBehaved.HELD_CONNECTIONS)
            well.served_while("the connection limit is reached")
            # Refused connections were not counted: after closing the served ones, a new
            # full batch of 97 is served again.
            for raw in raws:
                raw.close()
            wait_for(lambda: well.connections() == WellBehaved.HELD_CONNECTIONS,
                     message="the served connections closing")
            raws[:] = open_many(daemon, 100 - WellBehaved.HELD_CONNECTIONS)
            for raw in raws:
                get_info_ok(raw.read())
        finally:
            for raw in raws:
                raw.close()
    case.__name__ = "connections_over_the_%s_limit" % scope
    return case


def never_reading_presenters(daemon, well):
    """Presenters that subscribe and never read while a producer floods the island: the
    others keep receiving, the daemon's memory stays bounded, and a stuck presenter that
    finally reads gets a coherent stream: deltas, then a resync snapshot for what it missed."""
    stuck = []
    for _ in range(4):
        raw = Connection(daemon.socket, rcvbuf=4096)
        raw.call("org.island.Presenter.Subscribe", {}, more=True)
        stuck.append(raw)
    producer = Connection(daemon.socket)
    ids = []
    for n in range(5):
        reply = producer.ask("org.island.Producer.Request", {
            "app": FLIGHTS, "type": "Flood", "attributes": {"pad": "x" * 3000, "n": n}, "content": {"state": {"n": 0}}})
        ids.append(reply["parameters"]["activity"]["id"])
    # A burst of updates, pipelined 32 at a time, until every presenter has been sent 300
    # updates (the healthy one read them; the stuck ones hold about 60 in their sockets and 64
    # in their queues, so they miss hundreds), and the well-behaved producer has been served
    # while it ran. Delivery is capped (20 per second per activity), so that takes the daemon
    # about 3 s of its own time; a daemon that stops delivering, or serves no one else during
    # a flood, never gets there.
    last = 0
    seen_before, replies_before = well.updates_seen, well.replies
    deadline = time.monotonic() + LIVENESS
    while well.updates_seen < seen_before + 300 or well.replies < replies_before + 2:
        assert time.monotonic() < deadline, \
            "after %d flood updates the healthy presenter read %d updates and the producer got %d replies" \
            % (last, well.updates_seen - seen_before, well.replies - replies_before)
        batch = []
        for _ in range(32):
            last += 1
            batch.append(frame({"method": "org.island.Producer.Update", "parameters": {
                "app": FLIGHTS, "id": ids[last % 5], "content": {"state": {"n": last, "pad": "y" * 500}}}}))
        producer.send(b"".join(batch))
        for _ in batch:
            reply = producer.read()
            assert "error" not in reply, reply
    assert not well.errors, well.errors
    # The healthy presenter (WellBehaved) sees the last content of every flood activity.
    final = {ids[n % 5]: {"n": n, "pad": "y" * 500} for n in range(last - 4, last + 1)}
    wait_for(lambda: all(well.contents.get(i) == state for i, state in final.items()),
             message="the healthy presenter seeing the end of the flood")
    # Each stuck presenter is still connected; reading now, it gets whole messages in
    # sequence, and catches up through a resync snapshot that holds the latest content.
    for raw in stuck:
        raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        sequence, resynced, contents = None, False, {}
        while True:
            update = raw.read()["parameters"]["update"]
            if sequence is not None:
                assert update["sequence"] > sequence, (sequence, update["sequence"])
            sequence = update["sequence"]
            if update["kind"] == "snapshot":
                contents = {}
                resynced = resynced or update["resync"]
            for item in update["items"]:
                contents[item["id"]] = item["content"]["state"]
            if all(contents.get(i) == state for i, state in final.items()):
                break
        assert resynced, "a presenter that missed hundreds of changes was not resynchronized"
        raw.close()
    producer.close()


def send_until_stalled(raw, blob, well, patience=1.0, limit=LIVENESS):
    """Writes `blob` without blocking until the daemon stops taking it: nothing taken while
    the well-behaved producer got three replies (so the daemon's one event loop went round
    several times, and would have read this connection too had it been reading it) and for
    at least `patience` seconds. Or until all is sent, the daemon closes, or `limit` seconds
    pass. Returns (bytes sent, whether it stalled, whether it closed)."""
    raw.sock.setblocking(False)
    sent, stalled_since = 0, None
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and sent < len(blob):
        try:
            sent += raw.sock.send(blob[sent:sent + (1 << 16)])
            stalled_since = None
        except BlockingIOError:
            if stalled_since is None:
                stalled_since = (time.monotonic(), well.replies)
            elif time.monotonic() - stalled_since[0] >= patience and well.replies >= stalled_since[1] + 3:
                return sent, True, False
            time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            return sent, stalled_since is not None, True
    return sent, False, False


def never_reading_caller(daemon, well):
    """A client that pipelines calls and never reads a reply. PROTOCOL.md allows two
    outcomes: the daemon stops reading from it (backpressure) until it reads, or, once more
    than 16 MiB of replies wait for it, closes it without an error. Either way the daemon
    reads only a bounded amount of its calls, and the replies it does get are whole and in
    order."""
    raw = Connection(daemon.socket, rcvbuf=4096)
    call = frame({"method": "org.varlink.service.GetInterfaceDescription",
                  "parameters": {"interface": "org.island.Producer"}})
    blob = call * 20_000
    sent, stalled, closed = send_until_stalled(raw, blob, well)
    assert stalled or closed, \
        "the daemon kept reading (%d bytes) calls from a client that reads nothing, " \
        "or served no one else meanwhile" % sent
    # Kernel buffers and a bounded read-ahead: nothing like the 2 MiB offered.
    assert sent < len(blob) // 2, sent
    if not closed:
        well.served_while("a caller that reads nothing holds its connection")
    # Now it reads: whole replies, in order, each the description asked for; then, if the
    # daemon gave up on it, a close without an error.
    raw.sock.setblocking(True)
    expected_calls = sent // len(call)
    answered = 0
    try:
        while answered < expected_calls:
            reply = raw.read()
            assert "interface org.island.Producer" in reply["parameters"]["description"], reply
            answered += 1
    except EOFError:
        closed = True
    if closed:
        assert answered < expected_calls
    raw.close()


def flooding_producer(daemon, well):
    """A producer that floods one activity with updates is answered honestly: every update
    is accepted, at most 2 per second are delivered and the rest say `throttled`, and the
    latest content wins. A flood of requests gets the named limits."""
    raw = Connection(daemon.socket)
    reply = raw.ask("org.island.Producer.Request", {
        "app": COFFEE, "type": "Flood", "attributes": {}, "content": {"state": {"n": 0}}})
    flood = reply["parameters"]["activity"]["id"]
    # The flood goes on until it has sent 320 updates, its replies name three delivery slots
    # (a second of the daemon's own time: the cap is 2 per second), and the well-behaved
    # producer has been served while it ran; a daemon that serves no one else during a flood
    # never gets there.
    n, delivered, slots = 0, [], set()
    replies_before = well.replies
    deadline = time.monotonic() + LIVENESS
    while n < 320 or len(slots) < 3 or well.replies < replies_before + 2:
        assert time.monotonic() < deadline, \
            "after %d flood updates (%d delivery slots) the well-behaved producer got %d replies" \
            % (n, len(slots), well.replies - replies_before)
        batch = []
        for _ in range(MAX_QUEUED_CALLS):
            n += 1
            batch.append(frame({"method": "org.island.Producer.Update", "parameters": {
                "app": COFFEE, "id": flood, "content": {"state": {"n": n}}}}))
        raw.send(b"".join(batch))
        for k in range(len(batch)):
            reply = raw.read()
            assert "error" not in reply, reply
            params = reply["parameters"]
            sent_n = n - len(batch) + 1 + k
            assert params["activity"]["content"]["state"] == {"n": sent_n}, reply
            slots.add(params["delivery"]["deliverAt"])
            if not params["delivery"]["throttled"]:
                delivered.append(params["delivery"]["deliverAt"])
    # At most one delivery per 0.5 s, in the daemon's own clock: the updates delivered at once
    # and the slots the throttled ones wait for are each half a second or more apart. (The
    # first update after the Request was throttled, or delivered when the Request's slot had
    # passed.)
    for a, b in zip(delivered, delivered[1:]):
        assert b - a >= 0.5 - 1e-3, (a, b)
    ordered = sorted(slots)
    for a, b in zip(ordered, ordered[1:]):
        assert b - a >= 0.5 - 1e-3, (a, b)
    # Coalesced, not lost: the presenter ends on the last one.
    wait_for(lambda: well.contents.get(flood) == {"n": n},
             message="the presenter seeing the flood's last update")
    # A flood of requests: four more fit (5 live per app), the rest are refused by name.
    raw.send(b"".join(frame({"method": "org.island.Producer.Request", "parameters": {
        "app": COFFEE, "type": "Flood", "attributes": {"k": k}, "content": {"state": {}}}}) for k in range(40)))
    replies = [raw.read() for _ in range(40)]
    assert all("error" not in r for r in replies[:4]), replies[:4]
    for r in replies[4:]:
        assert error(r) == ("org.island.TargetMaximumExceeded", {"app": COFFEE, "limit": 5}), r
    # Ending them and starting again runs into the start budget (10 per minute).
    for r in replies[:4] + [{"parameters": {"activity": {"id": flood}}}]:
        reply = raw.ask("org.island.Producer.End", {"app": COFFEE, "id": r["parameters"]["activity"]["id"],
                                                    "dismissalPolicy": {"kind": "immediate"}})
        assert reply["parameters"]["activity"]["state"] == "dismissed", reply
    # Five starts were spent; five more are left in the minute, then StartBudgetExceeded.
    for k in range(5):
        reply = raw.ask("org.island.Producer.Request", {
            "app": COFFEE, "type": "Flood", "attributes": {"again": k}, "content": {"state": {}}})
        assert reply["parameters"]["created"] is True, reply
        raw.ask("org.island.Producer.End", {"app": COFFEE, "id": reply["parameters"]["activity"]["id"],
                                            "dismissalPolicy": {"kind": "immediate"}})
    raw.send(b"".join(frame({"method": "org.island.Producer.Request", "parameters": {
        "app": COFFEE, "type": "Flood", "attributes": {"k": k}, "content": {"state": {}}}}) for k in range(20)))
    for _ in range(20):
        name, params = error(raw.read())
        assert name == "org.island.StartBudgetExceeded", (name, params)
        assert (params["app"], params["limit"], params["window"]) == (COFFEE, 10, 60.0), params
        assert 0 < params["retryAfter"] <= 60, params
    raw.close()


def partial_messages_held_open(daemon, well):
    """100 connections each holding a 200 KiB message without its NUL (under the limit):
    the daemon holds them (each bounded by the limit: 20 MiB in all) and serves everyone
    else."""
    raws = []
    try:
        for _ in range(100):
            raw = Connection(daemon.socket)
            raw.send(b'{"method":"org.varlink.service.GetInfo","pad":"' + b"z" * (200 * 1024))
            raws.append(raw)
        # All held open, none answered yet. (The debug build scans about 10-20 MB/s of
        # input for NULs, so taking in 20 MiB takes a while.)
        wait_for(lambda: well.connections() >= 100 + WellBehaved.HELD_CONNECTIONS,
                 message="all partial senders connected")
        well.served_while("100 connections hold half a message each")
        # Completing one of them gets it served; the others, sent before it, are still not
        # answered after it was.
        raws[0].send(b'"}\0')
        get_info_ok(raws[0].read())
        for raw in raws[1:]:
            raw.sock.setblocking(False)
            try:
                data = raw.sock.recv(1)
                pytest.fail("a connection holding half a message got %r" % data)
            except BlockingIOError:
                pass
            raw.sock.setblocking(True)
    finally:
        for raw in raws:
            raw.close()


def calls_queued_behind_streams(daemon, well):
    """Eight presenters whose Subscribe stream occupies their connection, each pipelining
    large calls behind it (250 KiB, under the message limit). The calls cannot start before
    the stream ends, so the daemon must stop reading them instead of holding them: eight
    clients may not make it hold 128 MiB (at this rate, 1,024 connections of one uid could
    make it hold 16 GiB)."""
    big = b'{"method":"org.varlink.service.GetInfo","pad":"' + b"q" * (250 * 1024) + b'"}\0'
    blob = big * 100
    raws, results = [], []

    def flood(raw):
        sent, stalled, _ = send_until_stalled(raw, blob, well)
        results.append((sent, stalled))

    try:
        for _ in range(8):
            raw = Connection(daemon.socket)
            raw.call("org.island.Presenter.Subscribe", {}, more=True)
            raws.append(raw)
        threads = [threading.Thread(target=flood, args=(raw,)) for raw in raws]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=LIVENESS + 10)
        assert len(results) == 8 and all(stalled for _, stalled in results), results
        well.served_while("eight streams hold calls queued behind them")
        rss, _ = memory(daemon.process.pid)
        held = sum(sent for sent, _ in results)
        assert rss < RSS_BOUND or SANITIZED, \
            "islandd holds %.0f MiB with %.0f MiB of calls queued behind 8 streams" % (rss / 2**20, held / 2**20)
        # Each stream still works: its snapshot arrived first, whole.
        for raw in raws:
            raw.sock.setblocking(True)
            update = raw.read()["parameters"]["update"]
            assert update["kind"] == "snapshot", update
    finally:
        for raw in raws:
            raw.close()


CASES = [
    ("", truncated_then_half_closed),
    ("", truncated_then_vanished),
    ("", message_at_and_over_the_limit),
    ("", oversized_stream_without_nul),
    ("", invalid_utf8),
    ("", deeply_nested),
    ("", not_a_varlink_call),
    ("", wrong_types),
    ("", unknown_methods_and_interfaces),
    ("", thousand_connections),
    ("[Daemon]\nMaxConnectionsPerUser=100\n", connections_over_the_limit("user")),
    ("[Daemon]\nMaxConnections=100\n", connections_over_the_limit("total")),
    ("", never_reading_presenters),
    ("", never_reading_caller),
    ("", flooding_producer),
    ("", partial_messages_held_open),
    ("", calls_queued_behind_streams),
]


@pytest.mark.parametrize("config,case", CASES, ids=[case.__name__ for _, case in CASES])
def test_bad_clients_while_a_good_one_is_served(make_daemon, config, case):
    daemon = make_daemon(config)
    well = WellBehaved(daemon)
    try:
        case(daemon, well)
        summary = well.check()
        print("%s: %s" % (case.__name__, summary))
    finally:
        well.close()
