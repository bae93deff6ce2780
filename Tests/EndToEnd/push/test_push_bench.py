"""Push's benchmark (scripts/bench.sh --push -> Benchmarks/push.py) must not rot: its `--selftest`
runs every part at a tiny size against the binaries under test — a token push's latency, the
fan-out to a few daemons, and one channel's publishes to a few daemons and as many plain
subscribers on mosquitto (and on the three-node nats-server cluster when it is installed) — and
must print the whole report and write its JSON, with every message received by every presenter
and subscriber, in order. No timing is asserted: a debug build's numbers on a busy machine mean
nothing.

Needs the shared harness (the `shared/bench` folder beside the checkout, or
ISLAND_BENCH_HARNESS), gcc, make, libmosquitto-dev and mosquitto; skipped otherwise. About 60 s."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from harness import broker as brokers
from harness import cluster as clusters
from harness.paths import ISLAND, ISLANDD, SANITIZER
from harness.paths import REPO as ROOT

SCRIPT = os.path.join(ROOT, "Benchmarks", "push.py")
HARNESS = os.environ.get("ISLAND_BENCH_HARNESS") or os.path.join(ROOT, "..", "shared", "bench")

missing = [what for what, ok in (
    ("the harness at %s" % HARNESS, os.path.isfile(os.path.join(HARNESS, "bench.py"))),
    ("make", shutil.which("make")), ("gcc", shutil.which("gcc")),
    ("libmosquitto-dev", os.path.exists("/usr/include/mosquitto.h")),
    ("mosquitto and its clients", brokers.available())) if not ok]


def test_help():
    r = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    for option in ("--islandd", "--island", "--harness", "--out", "--only", "--brokers", "--channel-devices",
                   "--publishes", "--storage", "--selftest"):
        assert option in r.stdout


@pytest.mark.skipif(bool(missing), reason="needs " + ", ".join(missing))
@pytest.mark.skipif(bool(SANITIZER), reason="the benchmark is not a sanitizer test")
def test_selftest_reports_every_part(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, SCRIPT, "--selftest", "--islandd", ISLANDD, "--island", ISLAND,
                        "--harness", HARNESS, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    report = json.loads((out / "push.json").read_text())

    [latency] = report["latency"]
    # the updates after the warm-up, on both sides
    assert latency["islandd"]["recv"] == latency["broker"]["recv"] > 0, latency
    fanout = report["fanout"]
    # every update and end marker was applied (or throttled) by its device, per its feedback
    assert fanout["delivered"] == fanout["published"], fanout

    runs = {run["broker"]: run for run in report["channel"]}
    assert "mosquitto" in runs and set(runs) <= {"mosquitto", "nats"}
    if clusters.available():
        assert "nats" in runs and not runs["nats"].get("skipped"), runs["nats"]
    for run in runs.values():
        if run.get("skipped"):
            continue
        pairs = run["publishes"] * run["devices"]
        for side in ("islandd", "plain"):
            health = run[side + "_health"]
            # every publish reached every presenter (and every plain subscriber), in order, and the
            # end marker after it
            assert health["subscribers"] == run["devices"], (side, health)
            assert health["received"] == pairs and run[side]["samples"] == pairs, (side, health, run[side])
            assert health["lost"] == health["out_of_order"] == health["timed_out"] == 0, (side, health)
            assert health["ended"] == run["devices"], (side, health)
        assert all(run["cpu_s"][part] >= 0 for part in ("broker", "islandd", "link")), run["cpu_s"]
    assert "| broker | pairs received, islandd / broker |" in r.stdout, r.stdout
