"""kill -9 in the middle of a load, then a restart: every acknowledged change is there; and
SIGTERM loses no change nobody waited for (a `oneway` call's, whose commit may linger)."""

import random
import threading
import time

import varlink

from harness.paths import LIVENESS
from harness.processes import wait_for
from harness.varlink import Connection, next_item, subscribe_presenter

COFFEE = "org.example.Coffee"
TIMER = "org.example.Timer"


def load(daemon, app, acked, sent, stop):
    """Requests, updates and ends activities until the daemon dies, recording what was
    acknowledged and what was sent."""
    try:
        with daemon.connect("org.island.Producer") as p:
            live = []
            n = 0
            while not stop.is_set():
                n += 1
                choice = random.random()
                if len(live) < 3 or choice < 0.2:
                    sent[("new", n)] = True
                    a = p.Request(app=app, type="Load", attributes={"n": n}, content={"state": {"n": n}})["activity"]
                    live.append(a["id"])
                    acked[a["id"]] = ("active", n)
                elif choice < 0.9:
                    target = random.choice(live)
                    sent[target] = n
                    p.Update(app=app, id=target, content={"state": {"n": n}})
                    acked[target] = ("active", n)
                else:
                    target = live.pop(0)
                    sent[target] = n
                    p.End(app=app, id=target, content={"state": {"n": n}})
                    acked[target] = ("ended", n)
    except (varlink.VarlinkError, OSError, BrokenPipeError, ConnectionError, EOFError, ValueError):
        pass  # the daemon was killed


def test_kill9_during_load_loses_nothing_acknowledged(make_daemon):
    # Limits out of the way: every ended activity must still be there to be checked.
    daemon = make_daemon("[Limits]\nMaxActivities=1000\nMaxActivitiesPerApp=500\nStartBudget=100000\n"
                         "MaxEndedActivities=100000\nMaxEndedActivitiesPerApp=100000\n")
    kills = 0
    operations = 0
    for round_number in range(3):
        acked, sent = {}, {}
        stop = threading.Event()
        workers = [threading.Thread(target=load, args=(daemon, app, acked, sent, stop)) for app in (COFFEE, TIMER)]
        for w in workers:
            w.start()
        # Killed at a random moment once the load has made progress (a slow machine takes
        # longer to get there; the kill never comes before the first acknowledgement).
        wait_for(lambda: acked, message="the load's first acknowledged change")
        time.sleep(random.uniform(0, 0.7))
        daemon.kill()
        kills += 1
        stop.set()
        for w in workers:
            w.join(timeout=LIVENESS)
        operations += len(acked)
        daemon.start()
        with daemon.connect("org.island.Producer") as coffee, daemon.connect("org.island.Producer") as timer:
            stored = {a["id"]: a for a in coffee.List(app=COFFEE)["activities"] + timer.List(app=TIMER)["activities"]}
        assert acked, "the load made no progress before the kill"
        for activity_id, (state, n) in acked.items():
            assert activity_id in stored, "acknowledged activity %s is gone" % activity_id
            got = stored[activity_id]["content"]["state"]["n"]
            # Either the last acknowledged change, or one sent after it whose reply the kill cut off.
            assert got == n or got == sent.get(activity_id), (activity_id, got, n)
            if state == "ended":
                assert stored[activity_id]["state"] == "ended"
    print("kill -9 rounds: %d, acknowledged activities checked: %d" % (kills, operations))


def oneway_updates(daemon, count):
    """An activity, then `count` oneway updates of it, which nobody waits for (their commits
    may linger), seen by a presenter as they are decided. Returns the activity's id and the
    producer's connection, still open."""
    with daemon.connect("org.island.Producer") as p:
        activity = p.Request(app=COFFEE, type="Load", attributes={}, content={"state": {"n": 0}})["activity"]["id"]
    stream, _ = subscribe_presenter(daemon)
    producer = Connection(daemon.socket)
    for n in range(1, count + 1):
        producer.call("org.island.Producer.Update",
                      {"app": COFFEE, "id": activity, "content": {"state": {"n": n}}}, oneway=True)
    next_item(stream, activity, lambda item: item["content"]["state"] == {"n": count})
    stream.close()
    return activity, producer


def stored_states(daemon):
    """Each of Coffee's activities' content state, after a restart."""
    with daemon.connect("org.island.Producer") as p:
        return {a["id"]: a["content"]["state"] for a in p.List(app=COFFEE)["activities"]}


def test_sigterm_right_after_oneway_updates_loses_none_of_them(make_daemon):
    daemon = make_daemon()
    activity, producer = oneway_updates(daemon, 20)
    daemon.stop()
    producer.close()
    daemon.start()
    assert stored_states(daemon)[activity] == {"n": 20}


def test_a_call_answered_after_oneway_updates_commits_them_too(make_daemon):
    # Answered means committed, with every change decided before it: then kill -9.
    daemon = make_daemon()
    activity, producer = oneway_updates(daemon, 20)
    with daemon.connect("org.island.Producer") as p:
        other = p.Request(app=COFFEE, type="Load", attributes={}, content={"state": {"n": 21}})["activity"]["id"]
    daemon.kill()
    producer.close()
    daemon.start()
    stored = stored_states(daemon)
    assert stored[other] == {"n": 21}
    assert stored[activity] == {"n": 20}
