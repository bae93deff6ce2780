"""islandd under socket activation, the way systemd starts it: readiness only after the store is
restored, clients that connected before that, restarts that lose nothing, idle exit, STATUS=
and the watchdog.

PID 1 is not systemd on the test machines, so `systemd-socket-activate -l PATH` stands in for
the service manager and the test owns the notify socket. Unlike systemd, it execs the daemon
(so the daemon's pid is the activator's) and is gone with it: the listening socket dies when
the daemon exits. A restart is therefore a new activator on the same path, and "the next
connection starts it again" after an idle exit cannot be shown here; under systemd the socket
unit keeps the socket (and the connections queued on it) across both."""

import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest
import varlink

from harness.paths import ISLANDD, LIVENESS, SANITIZER_ENV
from harness.processes import read_log, stop_process, wait_for
from harness.varlink import Connection

SOCKET_ACTIVATE = shutil.which("systemd-socket-activate")
pytestmark = pytest.mark.skipif(SOCKET_ACTIVATE is None, reason="systemd-socket-activate is not installed")

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"
SHUTTING_DOWN = "org.island.Connection.ShuttingDown"
# What a client sees of a daemon going away or not there yet; anything else is a real failure.
CONNECTION_ERRORS = (OSError, EOFError)


def content(**state):
    return {"state": state}


def parse(message):
    """A notify datagram as a dict of its assignments."""
    return dict(line.split("=", 1) for line in message.split("\n") if "=" in line)


class NotifySocket:
    """An AF_UNIX datagram socket standing in for systemd's NOTIFY_SOCKET; keeps every message."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []
        self.cursor = 0

    def _receive(self, timeout):
        self.sock.settimeout(max(0.001, timeout))
        try:
            self.messages.append(self.sock.recv(4096).decode())
            return True
        except socket.timeout:
            return False

    def wait_for(self, predicate, timeout=LIVENESS, what="notification"):
        """The first message from the cursor on that satisfies `predicate` (a dict of its
        assignments); moves the cursor past it. Fails the test at the deadline."""
        deadline = time.time() + timeout
        while True:
            while self.cursor < len(self.messages):
                message = parse(self.messages[self.cursor])
                self.cursor += 1
                if predicate(message):
                    return message
            remaining = deadline - time.time()
            if remaining <= 0:
                pytest.fail("no %s within %ss; got %r" % (what, timeout, self.messages))
            self._receive(remaining)

    def pings(self, count, what):
        """Waits for `count` more WATCHDOG=1 messages, which the daemon sends every half of
        WATCHDOG_USEC by its own clock, and returns every message from the cursor up to the
        last of them: what the daemon said while that much of its own time went by, however
        slowly this machine runs it."""
        start = self.cursor
        for k in range(count):
            self.wait_for(lambda m: m.get("WATCHDOG") == "1", what="WATCHDOG=1 %d of %d (%s)" % (k + 1, count, what))
        return [parse(m) for m in self.messages[start:self.cursor]]

    def drain(self, duration):
        """Everything that arrives within `duration` seconds, from the cursor on."""
        deadline = time.time() + duration
        while time.time() < deadline:
            self._receive(deadline - time.time())
        new = [parse(m) for m in self.messages[self.cursor:]]
        self.cursor = len(self.messages)
        return new

    def close(self):
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


class Activated:
    """islandd behind systemd-socket-activate on the Daemon's socket, with its state, config and
    manifests. The daemon is given a different --socket: the inherited one must win."""

    def __init__(self, daemon, notify, environment=None, watchdog_pid_is_self=False, gate=None):
        self.daemon = daemon
        self.notify = notify
        self.environment = environment or {}
        self.watchdog_pid_is_self = watchdog_pid_is_self
        # A path: the activated process waits until it exists before it becomes islandd.
        self.gate = gate
        self.unused_socket = os.path.join(daemon.root, "not-used.sock")
        self.log_path = os.path.join(daemon.root, "activate.log")
        self.process = None

    def start(self, timeout=LIVENESS):
        """Starts the activator and waits until it listens; the daemon starts on the first
        connection."""
        d = self.daemon
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM",
                            "WATCHDOG_USEC", "WATCHDOG_PID")}
        env.update({"XDG_DATA_HOME": d.share, "XDG_DATA_DIRS": os.path.join(d.root, "none"),
                    "NOTIFY_SOCKET": self.notify.path})
        env.update(self.environment)
        # The activator passes on only what -E names: the sanitizer options too, under
        # scripts/sanitize.sh, so the daemon's reports land where the tests look for them.
        passed = ["NOTIFY_SOCKET", "XDG_DATA_HOME", "XDG_DATA_DIRS"] + sorted(self.environment) + sorted(SANITIZER_ENV)
        command = [SOCKET_ACTIVATE, "-l", d.socket, "--fdname=varlink"]
        for name in passed:
            command += ["-E", name]
        if self.watchdog_pid_is_self:
            command += ["-E", "WATCHDOG_PID"]
        if self.gate:
            # The activator execs this shell on the first connection; it becomes islandd (the
            # same process, so LISTEN_PID still names it) once the gate exists, or after a minute.
            command += ["/bin/sh", "-c", 'i=0; while [ ! -e "$1" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; '
                        'shift; exec "$@"', "sh", self.gate]
        command += [ISLANDD, "--socket", self.unused_socket, "--state-dir", d.state, "--config", d.config]
        if self.watchdog_pid_is_self:
            # The activator execs the daemon, so the shell's pid is the daemon's.
            command = ["/bin/sh", "-c", 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$@"', "sh"] + command
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(command, env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        wait_for(lambda: "Listening on" in self.log()[offset:] or self.process.poll() is not None,
                 timeout=timeout, message="systemd-socket-activate listening")
        assert self.process.poll() is None, self.log()
        return self

    @property
    def pid(self):
        return self.process.pid

    def running(self):
        return self.process is not None and self.process.poll() is None

    def wait(self, timeout=LIVENESS):
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail("islandd did not exit within %ss:\n%s" % (timeout, self.log()))

    def stop(self, sig=signal.SIGTERM):
        return stop_process(self.process, sig)

    def log(self):
        return read_log(self.log_path)


@pytest.fixture
def activation(unstarted_daemon):
    """Makes (Daemon, NotifySocket, make_activated) triples; stops every activator it made."""
    made = []
    sockets = []

    def make(config=""):
        d = unstarted_daemon(config)
        notify = NotifySocket(os.path.join(d.root, "notify"))
        sockets.append(notify)

        def activated(**kwargs):
            a = Activated(d, notify, **kwargs)
            made.append(a)
            return a

        return d, notify, activated

    yield make
    for a in made:
        a.stop()
    for s in sockets:
        s.close()


def ready(message):
    return message.get("READY") == "1"


def live_count(status):
    """The live activity count from a STATUS= line such as '2 live activities, 1 producers, …'."""
    return int(status.split(" live activities")[0])


def connect(address, interface):
    client = varlink.Client(address=address)
    return client, client.open(interface)


# (a) READY=1 only after the store is restored


def test_ready_comes_after_the_store_is_restored(activation):
    d, notify, activated = activation()
    d.start()
    with d.connect("org.island.Producer") as p:
        kept = [p.Request(app=COFFEE, type="T", attributes={}, content=content(n=i))["activity"]["id"] for i in range(2)]
        ended = p.Request(app=COFFEE, type="T", attributes={}, content=content(n=9))["activity"]["id"]
        p.End(app=COFFEE, id=ended)
    with d.connect("org.island.Producer") as p:
        kept.append(p.Request(app=TIMER, type="T", attributes={}, content=content(n=3))["activity"]["id"])
    assert d.stop() == 0

    a = activated().start()
    listed = {}
    with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
        message = notify.wait_for(ready, what="READY=1")
        # The counts in the READY=1 datagram are those of the restored store.
        assert live_count(message["STATUS"]) == 3, message
        listed.update({x["id"]: x["state"] for x in p.List(app=COFFEE)["activities"]})
    with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
        listed.update({x["id"]: x["state"] for x in p.List(app=TIMER)["activities"]})
    assert {i: listed.get(i) for i in kept} == {i: "active" for i in kept}
    assert listed.get(ended) == "ended"
    assert [m for m in notify.messages if parse(m).get("READY") == "1"] == [notify.messages[notify.cursor - 1]]
    # The inherited socket wins over --socket.
    assert not os.path.exists(a.unused_socket)
    assert "socket-activated" in a.log(), a.log()

    assert a.stop() == 0, a.log()
    notify.wait_for(lambda m: m.get("STOPPING") == "1", what="STOPPING=1")


# (b) clients that connected before the daemon was ready


def test_clients_that_connected_before_readiness_are_served(activation):
    d, notify, activated = activation()
    d.start()
    with d.connect("org.island.Producer") as p:
        restored = p.Request(app=COFFEE, type="T", attributes={}, content=content(n=1))["activity"]["id"]
    assert d.stop() == 0

    gate = os.path.join(d.root, "gate")
    a = activated(gate=gate).start()
    # The first connection starts the activated process, which becomes islandd only once the
    # gate is opened: every call is written before islandd runs, however fast it starts.
    early = [Connection(d.socket) for _ in range(3)]
    for s in early:
        s.call("org.varlink.service.GetInfo")
        s.call("org.island.Producer.List", {"app": COFFEE})
    with open("/proc/%d/cmdline" % a.pid, "rb") as f:
        program = os.path.basename(f.read().split(b"\0")[0])
    assert program != os.path.basename(ISLANDD).encode(), "islandd ran before the calls were written"
    open(gate, "w").close()
    try:
        for s in early:
            info = s.read()
            assert info["parameters"]["product"] == "islandd", info
            listed = s.read()
            assert [x["id"] for x in listed["parameters"]["activities"]] == [restored], listed
    finally:
        for s in early:
            s.close()
    notify.wait_for(ready, what="READY=1")


# (c) restarts on the same socket keep everything; clients only see connection errors


def hammer(address, app, acked, sent, outcomes, stop):
    """Requests and updates activities of `app` until `stop`, reconnecting whenever the
    daemon goes away. Records what was acknowledged and how every failed call failed."""
    n = 0
    ids = []
    while not stop.is_set():
        try:
            with varlink.Client(address=address) as client, client.open("org.island.Producer") as p:
                outcomes["connects"] += 1
                while not stop.is_set():
                    n += 1
                    if len(ids) < 8:
                        sent[("new", n)] = n
                        activity = p.Request(app=app, type="Load", attributes={}, content=content(n=n))["activity"]
                        ids.append(activity["id"])
                        acked[activity["id"]] = n
                    else:
                        target = ids[n % len(ids)]
                        sent[target] = n
                        p.Update(app=app, id=target, content=content(n=n))
                        acked[target] = n
                    outcomes["calls"] += 1
        except varlink.VarlinkError as error:
            # ShuttingDown is how a stopping daemon ends a connection: reconnect, like any client.
            if error.error() == SHUTTING_DOWN:
                outcomes["shutting down"] += 1
            else:
                outcomes["unexpected"].append((error.error(), error.parameters()))
        except CONNECTION_ERRORS as error:
            outcomes["connection errors"] += 1
            outcomes["kinds"].add(type(error).__name__)
            time.sleep(0.01)
        except Exception as error:  # noqa: BLE001 - anything else is the failure this test looks for
            outcomes["unexpected"].append(repr(error))
            time.sleep(0.01)


def test_restarts_on_the_same_socket_keep_every_acknowledged_change(activation):
    d, notify, activated = activation(
        "[Limits]\nMaxActivities=1000\nMaxActivitiesPerApp=500\nStartBudget=100000\n")
    activators = [activated().start()]
    stop = threading.Event()
    states = {}
    workers = []
    for app in (COFFEE, TIMER):
        acked, sent = {}, {}
        outcomes = {"calls": 0, "connects": 0, "connection errors": 0, "shutting down": 0,
                    "unexpected": [], "kinds": set()}
        states[app] = (acked, sent, outcomes)
        workers.append(threading.Thread(target=hammer, args=(d.address, app, acked, sent, outcomes, stop), daemon=True))
    for w in workers:
        w.start()
    try:
        notify.wait_for(ready, what="READY=1")
        restarts = 2
        for _ in range(restarts):
            before = {app: s[2]["calls"] for app, s in states.items()}
            wait_for(lambda: all(states[app][2]["calls"] >= before[app] + 50 for app in states),
                     message="calls on the running daemon")
            os.kill(activators[-1].pid, signal.SIGTERM)
            assert activators[-1].wait() == 0, activators[-1].log()
            notify.wait_for(lambda m: m.get("STOPPING") == "1", what="STOPPING=1")
            activators.append(activated().start())
            notify.wait_for(ready, what="READY=1 after the restart")
        before = {app: s[2]["calls"] for app, s in states.items()}
        wait_for(lambda: all(states[app][2]["calls"] >= before[app] + 50 for app in states),
                 message="calls after the last restart")
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=LIVENESS)
    assert not any(w.is_alive() for w in workers)

    for app, (acked, sent, outcomes) in states.items():
        assert outcomes["unexpected"] == [], outcomes
        # Every restart cost at least one reconnection, and the clients recovered each time.
        assert outcomes["connects"] >= restarts + 1, outcomes
        with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
            stored = {a["id"]: a for a in p.List(app=app)["activities"]}
        for activity_id, n in acked.items():
            assert activity_id in stored, "acknowledged activity %s is gone" % activity_id
            got = stored[activity_id]["content"]["state"]["n"]
            # The last acknowledged update, or a later one whose reply the stop cut off.
            assert got == n or got == sent.get(activity_id), (activity_id, got, n)
        print("%s: %d calls, %d connections, %d connection errors (%s), %d ShuttingDown replies, %d activities checked"
              % (app, outcomes["calls"], outcomes["connects"], outcomes["connection errors"],
                 ", ".join(sorted(outcomes["kinds"])), outcomes["shutting down"], len(acked)))


# (d) idle exit


def test_idle_exit_when_socket_activated_and_nothing_is_live(activation):
    d, notify, activated = activation("[Daemon]\nIdleExitSec=1\n")
    # The watchdog's pings (every 0.5 s of the daemon's own time) say how long it has run.
    a = activated(environment={"WATCHDOG_USEC": "1000000"}).start()
    with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
        notify.wait_for(ready, what="READY=1")
        # An open connection keeps it up, well past IdleExitSec=: seven pings, 3 s of its time.
        said = notify.pings(7, "with a connection open")
        assert not any(m.get("STOPPING") == "1" for m in said), said
        assert a.running(), a.log()
        activity = p.Request(app=COFFEE, type="T", attributes={}, content=content())["activity"]
    # So does a live activity with no one connected.
    said = notify.pings(7, "with a live activity")
    assert not any(m.get("STOPPING") == "1" for m in said), said
    assert a.running(), a.log()
    with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
        p.End(app=COFFEE, id=activity["id"], dismissalPolicy={"kind": "immediate"})
    # Nothing left: it stops by itself, cleanly.
    notify.wait_for(lambda m: m.get("STOPPING") == "1", what="STOPPING=1 after IdleExitSec=")
    assert a.wait() == 0, a.log()
    assert "IdleExitSec" in a.log(), a.log()

    # Under systemd the socket stays and the next connection starts the daemon again; here a
    # new activator plays that part, and the daemon comes back with its state.
    activated().start()
    with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
        notify.wait_for(ready, what="READY=1 after the idle exit")
        assert p.List(app=COFFEE)["activities"] == []


def test_no_idle_exit_without_socket_activation(unstarted_daemon):
    d = unstarted_daemon("[Daemon]\nIdleExitSec=1\n")
    # Not socket activated, but with a notify socket and a watchdog, whose pings (every 0.5 s
    # of the daemon's own time) say how long it has been idle.
    notify = NotifySocket(os.path.join(d.root, "notify"))
    d.prefix = ["env", "NOTIFY_SOCKET=" + notify.path, "WATCHDOG_USEC=1000000"]
    d.start()
    said = notify.pings(7, "idle, on a socket of its own")
    notify.close()
    assert not any(m.get("STOPPING") == "1" for m in said), said
    assert d.process.poll() is None, d.log()
    with d.connect("org.varlink.service") as s:
        assert s.GetInfo()["product"] == "islandd"


# (e) STATUS= carries live counts; RELOADING=1 on SIGHUP


def test_status_lines_carry_live_counts_and_sighup_reloads(activation):
    d, notify, activated = activation()
    a = activated().start()
    with varlink.Client(address=d.address) as client, client.open("org.island.Producer") as p:
        first = notify.wait_for(ready, what="READY=1")
        assert live_count(first["STATUS"]) == 0, first
        for i in range(2):
            p.Request(app=COFFEE, type="T", attributes={}, content=content(n=i))
        status = notify.wait_for(lambda m: m.get("STATUS", "").startswith("2 live activities"),
                                 what="STATUS= with 2 live activities")
        assert "1 producers" in status["STATUS"], status

        os.kill(a.pid, signal.SIGHUP)
        reloading = notify.wait_for(lambda m: m.get("RELOADING") == "1", what="RELOADING=1")
        assert int(reloading["MONOTONIC_USEC"]) > 0, reloading
        notify.wait_for(ready, what="READY=1 after the reload")
        assert len(p.List(app=COFFEE)["activities"]) == 2
    assert a.stop() == 0


# (f) the watchdog


@pytest.mark.parametrize("watchdog_pid", ["daemon", "unset"])
def test_watchdog_pings_when_asked(activation, watchdog_pid):
    d, notify, activated = activation()
    a = activated(environment={"WATCHDOG_USEC": "1000000"}, watchdog_pid_is_self=watchdog_pid == "daemon").start()
    with varlink.Client(address=d.address) as client, client.open("org.varlink.service") as s:
        s.GetInfo()
        notify.wait_for(ready, what="READY=1")
        # At half the interval: several pings while the connection is open.
        for _ in range(3):
            notify.wait_for(lambda m: m.get("WATCHDOG") == "1", what="WATCHDOG=1")
    assert a.stop() == 0


def test_no_watchdog_pings_for_another_process(activation):
    d, notify, activated = activation()
    # WATCHDOG_PID names someone else (pid 1): sd_watchdog_enabled says no.
    activated(environment={"WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"}).start()
    with varlink.Client(address=d.address) as client, client.open("org.varlink.service") as s:
        s.GetInfo()
        notify.wait_for(ready, what="READY=1")
        # The marker: the first STATUS= after READY=1 comes five seconds by the daemon's own
        # clock after the services started, the watchdog's among them, which pings as it starts
        # and then every 0.1 s. Every ping it sent by then is before it on the socket, READY=1's
        # time or not; a look after two seconds of this machine's would pass a daemon starved
        # for them.
        notify.wait_for(lambda m: "STATUS" in m and not ready(m), what="the first STATUS= after READY=1")
    said = [parse(m) for m in notify.messages[:notify.cursor]]
    assert not any(m.get("WATCHDOG") == "1" for m in said), said
