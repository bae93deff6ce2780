#!/usr/bin/python3
"""island-bridge's benchmark: how long a source's event takes to reach a presenter through the
bridge and islandd, how often the bridge wakes when nothing happens, and its memory.

Everything runs on a bus of its own with the real peers: mpv with mpv-mpris as the player
(driven through mpv's own IPC socket, so the event's time is known to the microsecond), dunst
under Xvfb as the notification server, and islandd with the bridge's packaged manifest and
layouts. A presenter subscribes on a raw socket. Measured:

* MPRIS: `cycle pause` sent to mpv -> the presenter's delta carrying the new status, p50/p99,
  and the bridge's part of it: mpv-mpris's PropertiesChanged on the bus (timestamped by
  `dbus-monitor --profile`) -> the delta;
* notification: `Notify` with a new `value` (python3-dbus, replacing the same notification)
  -> the presenter's delta carrying that percent, p50/p99;
* idle wake-ups: context switches of each of the bridge's threads over 10 s with nothing
  happening (mpv paused), per second; the sd-bus loop's are the bridge's own, IslandKit's NIO
  threads' come next, libdispatch's timer thread is reported apart (every process using Swift
  concurrency on Linux has it);
* RSS (VmRSS, VmHWM) of the bridge at the end.

islandd runs with Benchmarks/islandd-bench.conf plus the bridge's delivery rate uncapped, so
the figures are the pipeline's, not the 2/s budget's. Run it as `scripts/bench.sh --bridge`
(release binaries), or `Benchmarks/bridge.py --bin-dir DIR [--samples N] [--idle S] [--out DIR]`.
`--selftest` is a tiny run that checks the script works (no timing asserted).
Needs Debian's python3 with python3-dbus, mpv, mpv-mpris, dunst, Xvfb, dbus-daemon."""

import argparse
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import wave

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
APP = "org.island.bridge"
# How long a wait for something that must happen may take (a busy machine is slow, not broken):
# a wait returns as soon as it happens, so this is not part of any figure.
PATIENCE = 30


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(math.ceil(p / 100 * len(ordered))) - 1))
    return ordered[index]


class Run:
    def __init__(self, bin_dir, keep=False):
        self.bin_dir = bin_dir
        self.root = tempfile.mkdtemp(prefix="island-bridge-bench-", dir="/tmp")
        self.keep = keep
        self.processes = []
        self.bus = "unix:path=" + os.path.join(self.root, "bus")

    def spawn(self, argv, name, env=None, **kwargs):
        log = open(os.path.join(self.root, name + ".log"), "a")
        process = subprocess.Popen(argv, env=env or self.env(), stdout=log, stderr=log, stdin=subprocess.DEVNULL, **kwargs)
        self.processes.append(process)
        return process

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY",
                                                                 "NOTIFY_SOCKET", "JOURNAL_STREAM", "XDG_CURRENT_DESKTOP")}
        env["DBUS_SESSION_BUS_ADDRESS"] = self.bus
        env.update(extra)
        return env

    def wait(self, predicate, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(0.02)
        raise SystemExit("bridge.py: %s did not happen within %ss (logs in %s)" % (what, timeout, self.root))

    def start(self):
        bus_socket = os.path.join(self.root, "bus")
        self.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + self.bus], "dbus")
        self.wait(lambda: os.path.exists(bus_socket), PATIENCE, "the session bus")
        share = os.path.join(self.root, "share")
        os.makedirs(os.path.join(share, "applications"))
        shutil.copy(os.path.join(REPO, "packaging/applications", APP + ".desktop"), os.path.join(share, "applications"))
        shutil.copytree(os.path.join(REPO, "packaging/layouts", APP), os.path.join(share, "island/layouts", APP))
        config = os.path.join(self.root, "islandd.conf")
        with open(os.path.join(REPO, "Benchmarks/islandd-bench.conf")) as f, open(config, "w") as out:
            out.write(f.read() + "\n[App:%s]\nUpdatesPerSecond=infinity\nFrequentUpdatesPerSecond=infinity\n" % APP)
        self.socket = os.path.join(self.root, "islandd.sock")
        self.spawn([os.path.join(self.bin_dir, "islandd"), "--socket", self.socket, "--state-dir", os.path.join(self.root, "state"),
                    "--config", config], "islandd", env=self.env(XDG_DATA_HOME=share, XDG_DATA_DIRS=os.path.join(self.root, "none")))
        self.wait(lambda: os.path.exists(self.socket), PATIENCE, "islandd")

        display = ":%d" % (300 + os.getpid() % 300)
        self.spawn(["Xvfb", display, "-screen", "0", "320x240x24", "-nolisten", "tcp"], "xvfb")
        self.wait(lambda: os.path.exists("/tmp/.X11-unix/X" + display[1:]), PATIENCE, "Xvfb")
        dunstrc = os.path.join(self.root, "dunstrc")
        with open(dunstrc, "w") as f:
            f.write("[global]\n    monitor = 0\n[urgency_normal]\n    timeout = 0\n")
        self.spawn(["dunst", "-config", dunstrc], "dunst", env=self.env(DISPLAY=display))

        config_home = os.path.join(self.root, "config")
        os.makedirs(os.path.join(config_home, "island"))
        self.bridge = self.spawn([os.path.join(self.bin_dir, "island-bridge"), "--socket", self.socket], "bridge",
                                 env=self.env(XDG_CONFIG_HOME=config_home, XDG_DATA_HOME=share, XDG_DATA_DIRS="/usr/share"))
        self.wait(lambda: "connected to islandd" in self.log("bridge"), PATIENCE, "the bridge connecting")
        self.wait(lambda: "notification server" in self.log("bridge"), PATIENCE, "dunst on the bus")

    def log(self, name):
        try:
            with open(os.path.join(self.root, name + ".log")) as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


class Presenter:
    """A raw Subscribe stream; `wait_for` returns the arrival time of the first update whose
    bridged item satisfies the predicate."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.sock.sendall(json.dumps({"method": "org.island.Presenter.Subscribe", "parameters": {}, "more": True}).encode() + b"\0")
        self.buffer = b""
        self.read(PATIENCE)

    def read(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise TimeoutError
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        frame, self.buffer = self.buffer.split(b"\0", 1)
        return time.time(), json.loads(frame)["parameters"]["update"]

    def wait_for(self, predicate, timeout=PATIENCE):
        deadline = time.time() + timeout
        while True:
            arrived, update = self.read(max(0.001, deadline - time.time()))
            for item in update.get("items", []):
                if item["app"] == APP and predicate(item):
                    return arrived


def tone(path, seconds):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"".join(struct.pack("<h", int(2000 * math.sin(2 * math.pi * 440 * i / 8000))) for i in range(8000 * seconds)))


def mpris_latency(run, presenter, samples):
    ipc = os.path.join(run.root, "mpv.ipc")
    media = os.path.join(run.root, "tone.wav")
    tone(media, 600)
    run.spawn(["mpv", "--no-config", "--load-scripts=no", "--script=/usr/lib/mpv-mpris/mpris.so", "--no-video", "--ao=null",
               "--input-ipc-server=" + ipc, "--force-media-title=Bench", media], "mpv")
    run.wait(lambda: os.path.exists(ipc), PATIENCE, "mpv's IPC socket")
    presenter.wait_for(lambda i: i["type"] == "NowPlaying" and i["content"]["state"].get("status") == "playing", timeout=PATIENCE)
    control = socket.socket(socket.AF_UNIX)
    control.connect(ipc)
    # When mpv-mpris's signal was on the bus: the bridge's own share of the latency starts there.
    # The monitor also sees our markers: the first says it is listening, the last that it has
    # written everything the bus gave it before (the bus delivers to it in order).
    monitor = run.spawn(["dbus-monitor", "--address", run.bus, "--profile",
                         "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/mpris/MediaPlayer2'",
                         "type='signal',interface='%s',member='%s'" % MARKER], "monitor")
    marker_bus = marker(run)
    # Sent again until the monitor has one: until it has become a monitor, they reach nobody.
    run.wait(lambda: "Marker" in run.log("monitor") or not marker(run, marker_bus), PATIENCE, "dbus-monitor listening")
    seen = run.log("monitor").count("Marker")
    latencies = []
    events = []
    status = "playing"
    for _ in range(samples):
        time.sleep(0.05)
        status = "paused" if status == "playing" else "playing"
        sent = time.time()
        control.sendall(b'{"command": ["cycle", "pause"]}\n')
        arrived = presenter.wait_for(lambda i, s=status: i["type"] == "NowPlaying" and i["content"]["state"].get("status") == s)
        latencies.append(arrived - sent)
        events.append((sent, arrived))
    # End paused: nothing plays during the idle measurement.
    if status == "playing":
        control.sendall(b'{"command": ["set_property", "pause", true]}\n')
        presenter.wait_for(lambda i: i["type"] == "NowPlaying" and i["content"]["state"].get("status") == "paused")
    control.close()
    marker(run, marker_bus)
    run.wait(lambda: run.log("monitor").count("Marker") > seen, PATIENCE, "dbus-monitor's last marker")
    marker_bus.close()
    monitor.send_signal(signal.SIGTERM)
    monitor.wait()
    signals = []
    for line in run.log("monitor").splitlines():
        fields = line.split()
        if fields and fields[0] == "sig" and "PropertiesChanged" in fields:
            signals.append(float(fields[1]))
    # dbus-monitor stamps a signal when it reads it: on a busy machine that can be after the
    # delta it caused, and such a pause has no bridge-only figure. How many signals the monitor
    # saw does not depend on timing.
    bridge_part = []
    for sent, arrived in events:
        emitted = next((t for t in signals if sent <= t <= arrived), None)
        if emitted is not None:
            bridge_part.append(arrived - emitted)
    return latencies, bridge_part, len(signals)


MARKER = ("org.island.Bench", "Marker")


def marker(run, bus=None):
    """Emits the benchmark's marker signal on the run's bus (a connection of its own, returned)."""
    import dbus
    import dbus.lowlevel
    bus = bus or dbus.bus.BusConnection(run.bus)
    bus.send_message(dbus.lowlevel.SignalMessage("/org/island/Bench", *MARKER))
    bus.flush()
    return bus


def notification_latency(run, presenter, samples):
    import dbus
    bus = dbus.bus.BusConnection(run.bus)
    server = dbus.Interface(bus.get_object("org.freedesktop.Notifications", "/org/freedesktop/Notifications"),
                            "org.freedesktop.Notifications")
    latencies = []
    id = 0
    for n in range(samples):
        time.sleep(0.05)
        value = 1 + n % 98
        sent = time.time()
        id = server.Notify("Bench", dbus.UInt32(id), "", "Benchmark", "", [], {"value": dbus.Int32(value)}, 0)
        arrived = presenter.wait_for(lambda i, v=value: i["type"] == "Progress" and i["content"]["state"].get("percent") == v)
        latencies.append(arrived - sent)
    server.CloseNotification(dbus.UInt32(id))
    bus.close()
    return latencies


def threads(pid):
    found = {}
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, task)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/status" % (pid, task)) as f:
                counts = dict(line.split(":", 1) for line in f if "ctxt_switches" in line)
            found[task] = (name, sum(int(v) for v in counts.values()))
        except OSError:
            continue
    return found


def idle_wakeups(pid, seconds):
    before = threads(pid)
    time.sleep(seconds)
    after = threads(pid)
    per_thread = {}
    for task, (name, count) in after.items():
        per_thread.setdefault(name, 0)
        per_thread[name] += count - before.get(task, (name, count))[1]
    return {name: count / seconds for name, count in per_thread.items()}


def memory(pid):
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, help="where islandd and island-bridge are")
    parser.add_argument("--samples", type=int, default=200, help="events per source (default 200)")
    parser.add_argument("--idle", type=float, default=10, help="seconds of idle measurement (default 10)")
    parser.add_argument("--out", help="write bridge.json and table.md here")
    parser.add_argument("--keep", action="store_true", help="keep the run's directory and logs")
    parser.add_argument("--selftest", action="store_true", help="a tiny run: 5 samples, 2 s idle")
    arguments = parser.parse_args()
    if arguments.selftest:
        arguments.samples, arguments.idle = 5, 2
    for program in ("dbus-daemon", "mpv", "dunst", "Xvfb"):
        if shutil.which(program) is None:
            raise SystemExit("bridge.py: %s is not installed (scripts/install-deps.sh installs it)" % program)
    try:
        import dbus  # noqa: F401
    except ImportError:
        raise SystemExit("bridge.py: run it with Debian's python3, which has python3-dbus")

    run = Run(os.path.abspath(arguments.bin_dir), keep=arguments.keep)
    try:
        run.start()
        presenter = Presenter(run.socket)
        mpris, mpris_bridge, mpris_signals = mpris_latency(run, presenter, arguments.samples)
        notifications = notification_latency(run, presenter, arguments.samples)
        time.sleep(1)
        wakeups = idle_wakeups(run.bridge.pid, arguments.idle)
        rss = memory(run.bridge.pid)
    finally:
        run.close()

    ours = wakeups.get("sd-bus", 0.0)
    kit = sum(v for k, v in wakeups.items() if k.startswith("NIO-"))
    dispatch = sum(v for k, v in wakeups.items() if "qos" in k)
    rest = sum(wakeups.values()) - ours - kit - dispatch
    rows = [
        ("MPRIS pause/play -> presenter delta, p50 (ms)", "%.2f" % (percentile(mpris, 50) * 1000)),
        ("MPRIS pause/play -> presenter delta, p99 (ms)", "%.2f" % (percentile(mpris, 99) * 1000)),
        ("MPRIS PropertiesChanged on the bus -> presenter delta, p50 (ms; %d of %d pauses stamped before their delta, %d signals)"
         % (len(mpris_bridge), len(mpris), mpris_signals), "%.2f" % (percentile(mpris_bridge, 50) * 1000)),
        ("MPRIS PropertiesChanged on the bus -> presenter delta, p99 (ms)", "%.2f" % (percentile(mpris_bridge, 99) * 1000)),
        ("Notify value -> presenter delta, p50 (ms)", "%.2f" % (percentile(notifications, 50) * 1000)),
        ("Notify value -> presenter delta, p99 (ms)", "%.2f" % (percentile(notifications, 99) * 1000)),
        ("idle wake-ups/s, the bridge's sd-bus loop (target 0)", "%.1f" % ours),
        ("idle wake-ups/s, IslandKit's NIO threads", "%.1f" % kit),
        ("idle wake-ups/s, libdispatch's threads (any Swift process)", "%.1f" % dispatch),
        ("idle wake-ups/s, other threads (main)", "%.1f" % rest),
        ("RSS (VmRSS / VmHWM, MiB)", "%.1f / %.1f" % (rss["VmRSS"], rss["VmHWM"])),
    ]
    table = "| measurement (%d events per source, %.0f s idle) | island-bridge |\n|---|---:|\n" % (arguments.samples, arguments.idle)
    table += "".join("| %s | %s |\n" % row for row in rows)
    print(table)
    if arguments.out:
        os.makedirs(arguments.out, exist_ok=True)
        with open(os.path.join(arguments.out, "bridge.json"), "w") as f:
            json.dump({"mpris": mpris, "mprisFromSignal": mpris_bridge, "mprisSignals": mpris_signals, "notifications": notifications, "wakeups": wakeups, "rss": rss}, f, indent=1)
        with open(os.path.join(arguments.out, "table.md"), "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
