"""The crash soak (docs/design.md §8): kill -9 the daemon at random moments during a mixed load of
Request/Update/End, restart it, and check after every restart that every acknowledged change is
there and nothing else is.

ISLAND_SOAK_KILLS sets the number of kills (20 by default, about half a minute in the debug
build); ISLAND_SOAK_SEED replays a run. A long soak by hand:

    ISLAND_SOAK_KILLS=200 ISLAND_BIN_DIR="$(swift build --show-bin-path)" \\
        python3 -m pytest -q -s -p no:cacheprovider Tests/EndToEnd/test_crash_soak.py

What may be asserted. Each producer thread makes one call at a time on its own connection,
so at the kill each thread has at most one call in flight: sent, its reply not received. The
daemon commits a change before it acknowledges it, so after the restart:

* every activity whose Request was acknowledged exists, unless an acknowledged End dismissed
  it at once (then it is gone), or the thread's in-flight call was that End;
* its content is that of its last acknowledged call, or of the call in flight on it;
* an acknowledged End means `ended` (or gone, for an immediate dismissal), with that End's
  content; only the in-flight End may have been applied without being acknowledged;
* the last acknowledged update timestamp is still enforced: replaying it is StaleTimestamp,
  naming the acknowledged timestamp or the in-flight one;
* no activity exists that no call asked for: anything unknown must be the one Request in
  flight of some thread (recognized by its attributes), and then it is adopted;
* a presenter's snapshot lists exactly the activities that are not dismissed.
"""

import os
import random
import threading
import time

from harness.paths import LIVENESS
from harness.processes import wait_for
from harness.varlink import Connection

APPS = ["org.example.Coffee", "org.example.Timer", "org.example.Flights"]
THREADS_PER_APP = 2
KILLS = int(os.environ.get("ISLAND_SOAK_KILLS", "20"))
SEED = int(os.environ.get("ISLAND_SOAK_SEED", str(random.randrange(1 << 30))))
# The limits out of the way of the model, which keeps every ended activity until its dismissal.
CONFIG = ("[Limits]\nMaxActivities=1000\nMaxActivitiesPerApp=500\nStartBudget=1000000\n"
          "MaxEndedActivities=100000\nMaxEndedActivitiesPerApp=100000\n")


class Model:
    """What the daemon acknowledged, per activity: {id: record}. A record holds the app, the
    owning thread, `state` (active, ended, dismissed), `n` (the content), `ts` (the last
    acknowledged update timestamp, None before the first)."""

    def __init__(self):
        self.activities = {}
        self.lock = threading.Lock()
        self.acked = {"Request": 0, "Update": 0, "End": 0}
        self.verified = 0
        self.in_flight = 0
        self.in_flight_applied = 0
        self.errors = []


class Producer:
    """One producer thread: a mixed load on its app, one call at a time, until the kill.
    Keeps its live activities across restarts."""

    def __init__(self, index, app, model, rng):
        self.index = index
        self.app = app
        self.model = model
        self.rng = rng
        self.live = []            # ids of its activities that are not ended
        self.n = 0
        self.pending = None       # the call in flight: (kind, id or None, n, ts, dismissal)

    def run(self, daemon):
        try:
            conn = Connection(daemon.socket)
        except OSError:
            return
        try:
            while True:
                self.step(conn)
        except (EOFError, OSError):
            pass  # the daemon was killed
        except BaseException as e:  # noqa: B036 — a wrong reply; the test fails on it
            self.model.errors.append("thread %d: %r" % (self.index, e))
        finally:
            conn.close()

    def step(self, conn):
        self.n += 1
        n = self.n
        choice = self.rng.random()
        if len(self.live) < 2 or (choice < 0.15 and len(self.live) < 6):
            self.pending = ("Request", None, n, None, None)
            reply = conn.ask("org.island.Producer.Request", dict(app=self.app, type="Soak",
                              attributes={"thread": self.index, "n": n}, content={"state": {"n": n}}))
            assert "error" not in reply, reply
            activity = reply["parameters"]["activity"]
            assert activity["content"]["state"] == {"n": n} and activity["state"] == "active", reply
            with self.model.lock:
                self.model.activities[activity["id"]] = {
                    "app": self.app, "thread": self.index, "state": "active", "n": n, "ts": None}
                self.model.acked["Request"] += 1
            self.live.append(activity["id"])
        elif choice < 0.85:
            target = self.rng.choice(self.live)
            ts = time.time()
            self.pending = ("Update", target, n, ts, None)
            reply = conn.ask("org.island.Producer.Update", dict(app=self.app, id=target,
                              content={"state": {"n": n}}, timestamp=ts))
            assert "error" not in reply, reply
            assert reply["parameters"]["activity"]["content"]["state"] == {"n": n}, reply
            with self.model.lock:
                record = self.model.activities[target]
                record["n"], record["ts"] = n, ts
                self.model.acked["Update"] += 1
        else:
            target = self.live[0]
            dismissal = self.rng.choice(["default", "immediate"])
            ts = time.time()
            self.pending = ("End", target, n, ts, dismissal)
            reply = conn.ask("org.island.Producer.End", dict(app=self.app, id=target, content={"state": {"n": n}},
                              dismissalPolicy={"kind": dismissal}, timestamp=ts))
            assert "error" not in reply, reply
            expected = "dismissed" if dismissal == "immediate" else "ended"
            assert reply["parameters"]["activity"]["state"] == expected, reply
            with self.model.lock:
                record = self.model.activities[target]
                record["state"], record["n"], record["ts"] = expected, n, ts
                self.model.acked["End"] += 1
            self.live.remove(target)
        self.pending = None


def presenter_load(daemon, stop):
    """A presenter reading the island during the load, as a real one would."""
    try:
        conn = Connection(daemon.socket)
        conn.call("org.island.Presenter.Subscribe", {}, more=True)
        while not stop.is_set():
            conn.read()
    except (EOFError, OSError):
        pass


def verify(daemon, model, producers):
    """After a restart: the daemon's state against the model (see the module docstring)."""
    stored = {}
    conns = {app: Connection(daemon.socket) for app in APPS}
    try:
        for app, conn in conns.items():
            reply = conn.ask("org.island.Producer.List", dict(app=app))
            assert "error" not in reply, reply
            for a in reply["parameters"]["activities"]:
                assert a["id"] not in stored
                stored[a["id"]] = a
        in_flight = {p.index: p.pending for p in producers if p.pending}
        model.in_flight += len(in_flight)
        # Anything the model does not know must be a Request in flight, at most one each.
        for activity_id, a in stored.items():
            if activity_id in model.activities:
                continue
            thread = a["attributes"].get("thread")
            pending = in_flight.get(thread)
            assert pending and pending[0] == "Request" and a["attributes"]["n"] == pending[2], \
                "an activity nobody acknowledged or asked for: %r" % a
            assert a["content"]["state"] == {"n": pending[2]} and a["state"] == "active", a
            model.in_flight_applied += 1
            del in_flight[thread]
            model.activities[activity_id] = {"app": a["app"], "thread": thread, "state": "active",
                                             "n": pending[2], "ts": None}
            next(p for p in producers if p.index == thread).live.append(activity_id)
        pending_on = {p[1]: p for p in in_flight.values() if p[0] != "Request"}
        stale_checks = []
        for activity_id, record in model.activities.items():
            pending = pending_on.get(activity_id)
            a = stored.get(activity_id)
            if record["state"] == "dismissed":
                assert a is None, "a dismissed activity is back: %r" % a
                continue
            if a is None:
                # Only an End with immediate dismissal in flight may have removed it.
                assert pending and pending[0] == "End" and pending[4] == "immediate", \
                    "acknowledged activity %s (%r) is gone" % (activity_id, record)
                model.in_flight_applied += 1
                record.update(state="dismissed", n=pending[2], ts=pending[3])
                producer = next(p for p in producers if p.index == record["thread"])
                producer.live.remove(activity_id)
                continue
            got_n = a["content"]["state"]["n"]
            if got_n == record["n"]:
                assert a["state"] == ("ended" if record["state"] == "ended" else "active"), (record, a)
            else:
                # Not the acknowledged content: then the in-flight call's, applied.
                assert pending and got_n == pending[2], \
                    "activity %s has n=%s; acknowledged n=%s, in flight %r" % (activity_id, got_n, record["n"], pending)
                model.in_flight_applied += 1
                record["n"], record["ts"] = pending[2], pending[3]
                if pending[0] == "End":
                    assert a["state"] == "ended" and a["endReason"] == "app", a
                    record["state"] = "ended"
                    producer = next(p for p in producers if p.index == record["thread"])
                    producer.live.remove(activity_id)
                else:
                    assert a["state"] == "active", a
            if record["state"] == "ended":
                assert a["state"] == "ended" and a["endReason"] == "app", a
            model.verified += 1
            if record["ts"] is not None and record["state"] == "active":
                stale_checks.append((activity_id, record, pending))
        # The last acknowledged timestamp survived: replaying it is refused.
        for activity_id, record, pending in stale_checks:
            conn = conns[record["app"]]
            reply = conn.ask("org.island.Producer.Update", dict(app=record["app"], id=activity_id,
                              content={"state": {"n": -1}}, timestamp=record["ts"]))
            assert reply.get("error") == "org.island.StaleTimestamp", (record, reply)
            allowed = {record["ts"]} | ({pending[3]} if pending and pending[3] else set())
            assert reply["parameters"]["last"] in allowed, (record, pending, reply)
        # A presenter sees exactly what is not dismissed.
        presenter = Connection(daemon.socket)
        presenter.call("org.island.Presenter.Subscribe", {}, more=True)
        snapshot = presenter.read()["parameters"]["update"]
        presenter.close()
        visible = {item["id"] for item in snapshot["items"]}
        assert visible == set(stored), (visible ^ set(stored))
    finally:
        for conn in conns.values():
            conn.close()
    for p in producers:
        p.pending = None


def test_kill9_soak_keeps_every_acknowledged_change(make_daemon):
    rng = random.Random(SEED)
    daemon = make_daemon(CONFIG)
    model = Model()
    producers = [Producer(i, app, model, random.Random(rng.random()))
                 for i, app in enumerate(a for a in APPS for _ in range(THREADS_PER_APP))]
    started = time.monotonic()
    for kill in range(KILLS):
        stop = threading.Event()
        threads = [threading.Thread(target=p.run, args=(daemon,), daemon=True) for p in producers]
        threads.append(threading.Thread(target=presenter_load, args=(daemon, stop), daemon=True))
        acked_before = sum(model.acked.values())
        for t in threads:
            t.start()
        # A random moment once this round's load has had a change acknowledged.
        wait_for(lambda: sum(model.acked.values()) > acked_before, message="an acknowledged change in round %d" % kill)
        time.sleep(rng.uniform(0, 0.75))
        daemon.kill()
        stop.set()
        for t in threads:
            t.join(timeout=LIVENESS)
            assert not t.is_alive(), "a load thread did not notice the kill"
        assert not model.errors, model.errors
        daemon.start()
        verify(daemon, model, producers)
    acked = sum(model.acked.values())
    assert model.acked["Request"] and model.acked["Update"] and model.acked["End"], model.acked
    print("\ncrash soak (seed %d): %d kills in %.1fs; %d operations acknowledged (%s); "
          "%d calls in flight at the kills, %d of them applied; %d activity states verified"
          % (SEED, KILLS, time.monotonic() - started, acked,
             ", ".join("%s %d" % kv for kv in model.acked.items()),
             model.in_flight, model.in_flight_applied, model.verified))
