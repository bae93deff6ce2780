#!/usr/bin/env python3
"""island-overlay's benchmark (docs/design.md §9, the overlay's targets), next to Waybar showing the
same island through `island-presenter waybar`, measured the same way.

In a headless sway (pixman: software rendering, a 60 Hz output) run as the unprivileged test
user with that user's islandd (Tests/EndToEnd/harness/desktop.py), for each client in turn:
  idle      nothing live, N seconds: CPU, wake-ups (context switches of all its threads, from
            /proc), redraws (wl_surface.commit)                         target 0/s
  timer     one ticking timer in the compact island (the Pomodoro example): the same
                                                                         target <= 1 redraw/s
  request   Request -> the first commit after it, and -> the compositor's frame-done for that
            frame (the frame is on screen), in 60 Hz frames              target <= 3 frames
  morphs    (overlay) expand/collapse repeatedly; the work of each animation frame is the time
            from the frame callback's `done` to the commit it triggers   target p99 <= 8 ms
            (and the paint time the overlay logs, ISLAND_OVERLAY_FRAME_LOG=1)
  RSS       VmRSS and VmHWM at the end                                   target <= 60 MiB
Redraws and frame times come from the clients' own Wayland traffic (WAYLAND_DEBUG=client,
whose stamps are CLOCK_REALTIME microseconds modulo 2^32), so nothing in the programs is
instrumented. Waybar's numbers include its island-presenter child.

Needs root (the session runs as the user `island-test`, scripts/install-deps.sh), sway, swaybg,
and waybar for the comparison. Prints a Markdown table and writes the raw numbers as JSON to
--out. Not a test: nothing here asserts a time.

Usage: Benchmarks/overlay.py [--bin-dir DIR] [--seconds N] [--morphs N] [--requests N]
                             [--out DIR] [--clients island-overlay,waybar]
"""

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "EndToEnd"))
from harness import desktop  # noqa: E402

FRAME_MS = 1000 / 60
CLK_TCK = os.sysconf("SC_CLK_TCK")
STAMP = re.compile(r"^\[\s*(\d+)\.(\d{3})\]\s+(->)?\s*(\S+?)@(\d+)\.(\w+)\((.*)\)$")
NEW_CALLBACK = re.compile(r"new id wl_callback@(\d+)")
PAINT = re.compile(r"frame (\d+) us (animating|settled)")


def log(message):
    print("[overlay-bench] " + message, file=sys.stderr, flush=True)


def now_stamp():
    """This moment on WAYLAND_DEBUG's clock: CLOCK_REALTIME microseconds modulo 2^32, in ms."""
    return (int(time.time() * 1e6) & 0xFFFFFFFF) / 1000


def since(later, earlier):
    """later - earlier on that clock, in ms, across its wrap (every ~71.6 minutes)."""
    return ((later - earlier) * 1000 % 2 ** 32) / 1000


class Traffic:
    """The Wayland requests and events a client logged (WAYLAND_DEBUG=client), read as it goes."""

    def __init__(self, path):
        self.path, self.offset, self.pending = path, 0, ""
        self.events = []  # (stamp ms, sent?, interface, id, message, new callback id or None)
        self.paints = []  # (µs, animating?) from ISLAND_OVERLAY_FRAME_LOG=1

    def read(self):
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.offset)
                text = f.read()
                self.offset = f.tell()
        except OSError:
            return self.events
        text = self.pending + text
        lines = text.split("\n")
        self.pending = lines.pop()
        for line in lines:
            paint = PAINT.search(line)
            if paint:
                self.paints.append((int(paint.group(1)), paint.group(2) == "animating"))
            match = STAMP.match(line)
            if match:
                stamp = int(match.group(1)) + int(match.group(2)) / 1000
                callback = NEW_CALLBACK.search(match.group(7))
                self.events.append((stamp, bool(match.group(3)), match.group(4), int(match.group(5)), match.group(6),
                                    int(callback.group(1)) if callback else None))
        return self.events

    def commits(self, start, end):
        return [e for e in self.read() if e[1] and e[2] == "wl_surface" and e[4] == "commit"
                and 0 <= since(e[0], start) <= since(end, start)]


def task_totals(pid):
    """(CPU seconds, {(pid, tid): context switches}) of `pid` and of its children. CPU comes from
    each process's stat, which keeps the time of threads that have exited; switches are per
    thread, so a thread that exits takes its count with it (see switches_between)."""
    cpu, switches = 0.0, {}
    for p in [pid] + sorted(desktop_children(pid)):
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK
            tasks = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for task in tasks:
            try:
                with open("/proc/%d/task/%s/status" % (p, task)) as f:
                    switches[(p, task)] = sum(int(line.split()[1]) for line in f
                                              if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
            except OSError:
                continue
    return cpu, switches


def switches_between(before, after):
    """Context switches between two task_totals: of threads alive at both ends, and all of those
    that started in between (undercounts threads that ended in between)."""
    return sum(count - before.get(task, 0) for task, count in after.items())


def switches_by_thread(before, after):
    """The same, by thread name ("process/thread"), for those that woke at all."""
    found = {}
    for (p, task), count in after.items():
        delta = count - before.get((p, task), 0)
        if delta:
            try:
                with open("/proc/%d/comm" % p) as f:
                    process = f.read().strip()
                with open("/proc/%d/task/%s/comm" % (p, task)) as f:
                    name = "%s/%s" % (process, f.read().strip())
            except OSError:
                name = "%d/%s" % (p, task)
            found[name] = found.get(name, 0) + delta
    return found


def desktop_children(pid):
    found, pending = set(), [pid]
    while pending:
        parent = pending.pop()
        try:
            for task in os.listdir("/proc/%d/task" % parent):
                with open("/proc/%d/task/%s/children" % (parent, task)) as f:
                    for child in f.read().split():
                        if int(child) not in found:
                            found.add(int(child))
                            pending.append(int(child))
        except OSError:
            continue
    return found


def memory(pid):
    """(VmRSS, VmHWM) in MiB of `pid` and its children, summed."""
    rss = hwm = 0
    for p in [pid] + sorted(desktop_children(pid)):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                    elif line.startswith("VmHWM:"):
                        hwm += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, hwm / 1024


def steady(pid, traffic, seconds):
    """CPU %, wake-ups/s and redraws/s of a client over `seconds`."""
    cpu0, switches0 = task_totals(pid)
    start = now_stamp()
    time.sleep(seconds)
    end = now_stamp()
    cpu1, switches1 = task_totals(pid)
    return {"cpu_percent": round(100 * (cpu1 - cpu0) / seconds, 2),
            "wakeups_per_s": round(switches_between(switches0, switches1) / seconds, 2),
            "redraws_per_s": round(len(traffic.commits(start, end)) / seconds, 2),
            "wakeups_by_thread": switches_by_thread(switches0, switches1)}


def request_latency(session, traffic, requests):
    """Request -> first commit, and -> the frame-done of the frame callback asked for with it."""
    to_commit, to_screen = [], []
    for _ in range(requests):
        with session.varlink("org.island.Producer") as producer:
            start = now_stamp()
            activity = producer.Request(app="org.island.example.Coffee", type="CoffeeOrder",
                                         attributes={"shop": "Blue Bottle", "order": "A17"},
                                         content={"state": {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7}})
        time.sleep(0.5)
        events = [e for e in traffic.read() if 0 <= since(e[0], start) < 500]
        commit = next((e for e in events if e[1] and e[2] == "wl_surface" and e[4] == "commit"), None)
        if commit:
            to_commit.append(since(commit[0], start))
            # The frame callback requested before that commit; its `done` says it was shown.
            callbacks = [e[5] for e in events if e[1] and e[2] == "wl_surface" and e[4] == "frame" and e[0] <= commit[0]]
            done = next((e for e in events if not e[1] and e[2] == "wl_callback" and e[4] == "done"
                         and e[3] in callbacks and e[0] >= commit[0]), None)
            if done:
                to_screen.append(since(done[0], start))
        with session.varlink("org.island.Producer") as producer:
            producer.End(app="org.island.example.Coffee", id=activity["activity"]["id"],
                         dismissalPolicy={"kind": "immediate"})
        time.sleep(0.6)

    def frames(values):
        return {"median_ms": round(statistics.median(values), 1), "max_ms": round(max(values), 1),
                "median_frames": round(statistics.median(values) / FRAME_MS, 2),
                "max_frames": round(max(values) / FRAME_MS, 2), "n": len(values)} if values else None
    return {"to_commit": frames(to_commit), "on_screen": frames(to_screen)}


def morph_frames(session, traffic, morphs):
    """Frame work (callback done -> commit) of every frame of `morphs` expand/collapse pairs."""
    with session.varlink("org.island.Producer") as producer:
        activity = producer.Request(app="org.island.example.Coffee", type="CoffeeOrder",
                                    attributes={"shop": "Blue Bottle", "order": "A17"},
                                    content={"state": {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7}})
    time.sleep(1.0)
    traffic.read()
    painted = len(traffic.paints)
    start = now_stamp()
    for _ in range(morphs):
        # As the user: presenting is theirs alone.
        session.call_as_user("org.island.Presenter.Interact", {"action": "expand", "id": activity["activity"]["id"]})
        time.sleep(0.7)
        session.call_as_user("org.island.Presenter.Interact", {"action": "collapse"})
        time.sleep(0.7)
    end = now_stamp()
    work, intervals, last_done, last_commit = [], [], None, None
    for stamp, sent, interface, _, message, _ in traffic.read():
        if not 0 <= since(stamp, start) <= since(end, start):
            continue
        if not sent and interface == "wl_callback" and message == "done":
            last_done = stamp
        elif sent and interface == "wl_surface" and message == "commit":
            # A frame the frame clock drove: its commit follows a done within one frame.
            if last_done is not None and since(stamp, last_done) < FRAME_MS:
                work.append(since(stamp, last_done))
                last_done = None
            if last_commit is not None and since(stamp, last_commit) < 3 * FRAME_MS:
                intervals.append(since(stamp, last_commit))
            last_commit = stamp
    with session.varlink("org.island.Producer") as producer:
        producer.End(app="org.island.example.Coffee", id=activity["activity"]["id"], dismissalPolicy={"kind": "immediate"})
    if not work:
        return None
    work.sort()
    # The overlay's own paint times of the animated frames (its frame log), beside what the
    # Wayland traffic shows.
    paints = sorted(us / 1000 for us, animating in traffic.paints[painted:] if animating)
    return {"frames": len(work), "p50_ms": round(statistics.median(work), 2),
            "p99_ms": round(percentile(work, 0.99), 2), "max_ms": round(work[-1], 2),
            "interval_p50_ms": round(statistics.median(intervals), 2) if intervals else None,
            "paint": {"frames": len(paints), "p50_ms": round(statistics.median(paints), 2),
                      "p99_ms": round(percentile(paints, 0.99), 2), "max_ms": round(paints[-1], 2)} if paints else None}


def percentile(ordered, fraction):
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def start_timer(session):
    now = time.time()
    with session.varlink("org.island.Producer") as producer:
        return producer.Request(app="org.island.example.Pomodoro", type="Pomodoro",
                                attributes={"task": "Write the report", "rounds": 4},
                                content={"state": {"phase": "Focus", "round": 1, "startedAt": now, "endsAt": now + 1500}})["activity"]["id"]


def end(session, app, activity):
    with session.varlink("org.island.Producer") as producer:
        producer.End(app=app, id=activity, dismissalPolicy={"kind": "immediate"})


def measure(session, name, process, args):
    # The binary measured is the one asked for (the overlay; Waybar's presenter is its child).
    if name == "island-overlay":
        exe = os.readlink("/proc/%d/exe" % process.pid)
        if os.path.dirname(exe) != os.path.realpath(desktop.bin_dir()):
            sys.exit("overlay-bench: measuring %s, not the build in %s" % (exe, desktop.bin_dir()))
    traffic = Traffic(os.path.join(session.logs, name + ".log"))
    time.sleep(2)  # started and settled
    result = {"idle": steady(process.pid, traffic, args.seconds)}
    log("%s idle: %s" % (name, result["idle"]))
    timer = start_timer(session)
    time.sleep(2)
    result["timer"] = steady(process.pid, traffic, args.seconds)
    log("%s timer: %s" % (name, result["timer"]))
    end(session, "org.island.example.Pomodoro", timer)
    time.sleep(1)
    result["request"] = request_latency(session, traffic, args.requests)
    log("%s request: %s" % (name, result["request"]))
    if name == "island-overlay":
        result["morphs"] = morph_frames(session, traffic, args.morphs)
        log("%s morphs: %s" % (name, result["morphs"]))
    result["rss_mib"], result["hwm_mib"] = (round(v, 1) for v in memory(process.pid))
    return result


WAYBAR_CONFIG = {
    "layer": "top", "position": "top", "height": 30,
    "modules-left": [], "modules-right": [],
    "modules-center": ["custom/island"],
    "custom/island": {"exec": "%s waybar", "return-type": "json", "escape": False},
}


def row(label, target, overlay, waybar, fmt):
    def cell(value):
        return "—" if value is None else fmt(value)
    return "| %s | %s | %s | %s |" % (label, cell(overlay), cell(waybar), target)


def dig(result, *keys):
    for key in keys:
        if result is None:
            return None
        result = result.get(key)
    return result


def table(results):
    o, w = results.get("island-overlay"), results.get("waybar")
    lines = ["| measurement | island-overlay | Waybar + island-presenter | target (design.md §9) |",
             "|---|---|---|---|"]
    for phase, label in (("idle", "nothing live"), ("timer", "one ticking timer")):
        lines.append(row("%s: wake-ups/s" % label, "0/s" if phase == "idle" else "—",
                         dig(o, phase, "wakeups_per_s"), dig(w, phase, "wakeups_per_s"), str))
        lines.append(row("%s: redraws/s" % label, "0/s" if phase == "idle" else "≤ 1/s",
                         dig(o, phase, "redraws_per_s"), dig(w, phase, "redraws_per_s"), str))
        lines.append(row("%s: CPU" % label, "—", dig(o, phase, "cpu_percent"), dig(w, phase, "cpu_percent"),
                         lambda v: "%s%%" % v))
    lines.append(row("Request → first commit (median / max)", "—", dig(o, "request", "to_commit"),
                     dig(w, "request", "to_commit"), lambda v: "%s / %s ms" % (v["median_ms"], v["max_ms"])))
    lines.append(row("Request → frame on screen (median / max)", "≤ 3 frames", dig(o, "request", "on_screen"),
                     dig(w, "request", "on_screen"),
                     lambda v: "%s / %s frames (%s ms)" % (v["median_frames"], v["max_frames"], v["median_ms"])))
    lines.append(row("morph frame work p50 / p99 / max", "p99 ≤ 8 ms", dig(o, "morphs"), None,
                     lambda v: "%s / %s / %s ms (%d frames, every %s ms)" % (
                         v["p50_ms"], v["p99_ms"], v["max_ms"], v["frames"], v["interval_p50_ms"])))
    lines.append(row("morph paint time p50 / p99 / max (its frame log)", "—", dig(o, "morphs", "paint"), None,
                     lambda v: "%s / %s / %s ms (%d frames)" % (v["p50_ms"], v["p99_ms"], v["max_ms"], v["frames"])))
    lines.append(row("RSS (VmRSS / VmHWM)", "≤ 60 MiB", o and (o["rss_mib"], o["hwm_mib"]),
                     w and (w["rss_mib"], w["hwm_mib"]), lambda v: "%s / %s MiB" % v))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", default=os.path.join(REPO, ".build-package", "release"),
                        help="where islandd, island-presenter and island-overlay are (default: the release build)")
    parser.add_argument("--seconds", type=float, default=10, help="length of the idle and timer phases (default 10)")
    parser.add_argument("--morphs", type=int, default=10, help="expand/collapse pairs (default 10)")
    parser.add_argument("--requests", type=int, default=5, help="Request -> screen repetitions (default 5)")
    parser.add_argument("--out", default=None, help="directory for overlay-bench.json and .md (default: a new temp dir)")
    parser.add_argument("--clients", default="island-overlay,waybar",
                        help="what to measure, in order (default: island-overlay,waybar)")
    args = parser.parse_args()

    # The harness took its binaries' folder from the environment when it was imported (the
    # debug build unless ISLAND_BIN_DIR said otherwise): point it at the build measured.
    bin_dir = os.path.abspath(args.bin_dir)
    os.environ["ISLAND_BIN_DIR"] = desktop.BIN_DIR = bin_dir
    clients = [c for c in args.clients.split(",") if c]
    reason = desktop.why_not("sway", "swaybg") or ("island-overlay" in clients and desktop.overlay_missing())
    if reason:
        sys.exit("overlay-bench: " + reason)
    if "waybar" in clients and desktop.missing_programs("waybar"):
        log("waybar is not installed: it is left out")
        clients.remove("waybar")
    out = args.out or tempfile.mkdtemp(prefix="island-overlay-bench-")
    os.makedirs(out, exist_ok=True)

    results = {}
    for client in clients:
        session = desktop.UserSession()
        try:
            session.start_bus()
            sway = desktop.Sway(session)
            session.start_islandd()
            debug = {"WAYLAND_DEBUG": "client", "ISLAND_OVERLAY_FRAME_LOG": "1"}
            if client == "island-overlay":
                process = desktop.Overlay(session, dict(sway.env, **debug), name=client).process
            else:
                config = dict(WAYBAR_CONFIG)
                config["custom/island"] = dict(config["custom/island"],
                                               exec=os.path.join(os.path.abspath(args.bin_dir), "island-presenter") + " waybar")
                path = os.path.join(session.config, "waybar", "config")
                session.write(path, json.dumps(config))
                process = session.spawn(client, ["waybar", "-c", path], env=dict(sway.env, **debug))
            log("measuring %s (pid %d)" % (client, process.pid))
            results[client] = measure(session, client, process, args)
        finally:
            session.close()

    report = {"machine": os.uname().nodename, "cpus": os.cpu_count(), "results": results,
              "seconds": args.seconds, "morphs": args.morphs, "requests": args.requests}
    with open(os.path.join(out, "overlay-bench.json"), "w") as f:
        json.dump(report, f, indent=2)
    text = table(results)
    with open(os.path.join(out, "overlay-bench.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    log("raw numbers in %s" % out)


if __name__ == "__main__":
    main()
