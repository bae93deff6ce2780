"""The bridge's benchmark (scripts/bench.sh --bridge -> Benchmarks/bridge.py) must not rot: its
`--selftest` runs every measurement at a tiny size against the binaries under test and must
print the whole table and write its JSON. No timing is asserted (a debug build's numbers on a
busy machine mean nothing), but the idle wake-ups of the bridge's own loop must be zero, which
does not depend on speed. About 10 s."""

import json
import os
import subprocess

import pytest

from harness.bus import BRIDGE, MPRIS_PLUGIN, missing
from harness.paths import BIN_DIR, SANITIZER
from harness.paths import REPO as ROOT

SCRIPT = os.path.join(ROOT, "Benchmarks", "bridge.py")
PYTHON = "/usr/bin/python3"


def has_python_dbus():
    return os.path.exists(PYTHON) and subprocess.run([PYTHON, "-c", "import dbus"], capture_output=True).returncode == 0


@pytest.mark.skipif(bool(missing("dbus-daemon", "dbus-monitor", "mpv", MPRIS_PLUGIN, "dunst", "Xvfb"))
                    or not has_python_dbus() or not os.path.exists(BRIDGE),
                    reason="needs island-bridge built, dbus-daemon, mpv with mpv-mpris, dunst, Xvfb and python3-dbus")
@pytest.mark.skipif(bool(SANITIZER), reason="the benchmark is not a sanitizer test")
def test_selftest_prints_every_measurement(tmp_path):
    result = subprocess.run([PYTHON, SCRIPT, "--bin-dir", os.path.abspath(BIN_DIR), "--selftest", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    for row in ("MPRIS pause/play -> presenter delta, p99", "MPRIS PropertiesChanged on the bus -> presenter delta, p50",
                "Notify value -> presenter delta, p99", "idle wake-ups/s, the bridge's sd-bus loop", "RSS"):
        assert row in result.stdout, result.stdout
    with open(tmp_path / "bridge.json") as f:
        figures = json.load(f)
    assert len(figures["mpris"]) == 5 and len(figures["notifications"]) == 5
    # Every pause's PropertiesChanged was seen on the bus (the monitor is known to be listening
    # before the first and to have written all before the last: markers, not sleeps). Whether
    # dbus-monitor stamped it before the delta it caused is a matter of scheduling: reported, not
    # asserted.
    assert figures["mprisSignals"] >= 5, "every pause was seen on the bus: %s" % figures["mprisSignals"]
    assert len(figures["mprisFromSignal"]) <= 5 and all(t >= 0 for t in figures["mprisFromSignal"])
    assert figures["wakeups"].get("sd-bus") == 0, "the bridge's loop sleeps while nothing happens: %s" % figures["wakeups"]
