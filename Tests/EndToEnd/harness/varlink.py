"""The end-to-end tests' one hand-written Varlink client, beside the reference implementation
(`python3 -m varlink`'s `varlink.Client`, which most tests use through `Daemon.connect`).

`Connection` speaks the wire directly — NUL-framed JSON, with a deadline on every read — for
what the reference client cannot do: read a `more` stream while doing other things (or never
read it), pipeline calls, send malformed or partial bytes, and notice the daemon closing."""

import json
import socket
import time

import pytest
import varlink

from harness.paths import LIVENESS


class ClosedMidMessage(EOFError):
    """The daemon closed the connection after part of a message: a defect, unless the test
    killed it on purpose."""


def frame(message):
    """One message on the wire: compact JSON and its NUL terminator."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\0"


class Connection:
    """One raw Varlink connection: bytes out, NUL-framed JSON in, with deadlines. Reads raise
    EOFError when the daemon closed the connection and TimeoutError at their deadline."""

    def __init__(self, path, rcvbuf=None):
        self.sock = socket.socket(socket.AF_UNIX)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        # Blocking: a Unix socket's connect with a timeout fails at once (EAGAIN) while the
        # daemon's backlog is full, where a client waits.
        self.sock.connect(path)
        self.sock.settimeout(LIVENESS)
        self.buffer = b""

    def send(self, data, may_be_cut=False):
        """Writes `data`; with `may_be_cut`, the daemon may close before taking all of it
        (it has seen enough to refuse the message)."""
        self.sock.settimeout(LIVENESS)
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            if not may_be_cut:
                raise

    def call(self, method, parameters=None, more=False, **flags):
        """Sends a call without waiting for its reply. `parameters=None` leaves the key out."""
        message = {"method": method}
        if parameters is not None:
            message["parameters"] = parameters
        if more:
            message["more"] = True
        message.update(flags)
        self.send(frame(message))

    def read(self, timeout=LIVENESS):
        """The next message."""
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no message within %ss" % timeout)
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                raise TimeoutError("no message within %ss" % timeout) from None
            except ConnectionResetError:
                # The daemon closed with input of ours unread (the rest of an oversized
                # message): Linux reports that as a reset once the data it sent is read.
                chunk = b""
            if not chunk:
                if self.buffer:
                    raise ClosedMidMessage("the daemon closed after half a message: %r" % self.buffer[:200])
                raise EOFError("connection closed")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def read_until(self, predicate, timeout=LIVENESS):
        """The next message that matches, skipping the others."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.01, deadline - time.monotonic()))
            if predicate(message):
                return message

    def read_through(self, predicate, timeout=LIVENESS):
        """Every message up to and including the next one that matches: what came before a
        marker, for a test that asserts something did not arrive (the marker, caused after
        it, came first) instead of waiting a while for it."""
        deadline = time.monotonic() + timeout
        messages = []
        while True:
            messages.append(self.read(max(0.01, deadline - time.monotonic())))
            if predicate(messages[-1]):
                return messages

    def ask(self, method, parameters=None, timeout=LIVENESS, **flags):
        """A call and its (first) reply."""
        self.call(method, parameters, **flags)
        return self.read(timeout)

    def expect_close(self, timeout=LIVENESS):
        """Asserts the daemon closes the connection with nothing more to say."""
        try:
            message = self.read(timeout)
        except ClosedMidMessage:
            raise
        except EOFError:
            return
        pytest.fail("expected the daemon to close, got %r" % message)

    def close(self):
        self.sock.close()


def error_of(call, *args, **kwargs):
    """The (name, parameters) of the Varlink error a reference-client call raises."""
    with pytest.raises(varlink.VarlinkError) as info:
        call(*args, **kwargs)
    return info.value.error(), info.value.parameters()


def error(reply):
    """(name, parameters) of a raw error reply; fails on a success."""
    assert "error" in reply, "expected an error, got %r" % reply
    return reply["error"], reply.get("parameters", {})


def subscribe_presenter(daemon):
    """A presenter's raw Subscribe stream and its first message, the snapshot."""
    stream = Connection(daemon.socket)
    stream.call("org.island.Presenter.Subscribe", {}, more=True)
    snapshot = stream.read()["parameters"]["update"]
    assert snapshot["kind"] == "snapshot"
    return stream, snapshot


def next_update(stream, predicate=lambda update: True, timeout=LIVENESS):
    """The next presenter update that matches."""
    return stream.read_until(lambda m: predicate(m["parameters"]["update"]), timeout)["parameters"]["update"]


def next_item(stream, activity_id, predicate=lambda item: True, timeout=LIVENESS):
    """The next presenter update carrying the activity, and its item, where the item matches."""
    def item_of(update):
        return next((i for i in update["items"] if i["id"] == activity_id and predicate(i)), None)
    update = next_update(stream, lambda u: item_of(u) is not None, timeout)
    return update, item_of(update)
