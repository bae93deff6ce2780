"""The overlay's benchmark (Benchmarks/overlay.py, `scripts/bench.sh --overlay`) must not rot: a
tiny run against the binaries under test measures every phase of the overlay and of Waybar and
writes them all. No number is asserted beyond being there: timings of a debug build on a busy
machine mean nothing. About 20 s."""

import json
import os
import subprocess
import sys

import pytest

from harness import desktop
from harness.paths import REPO as ROOT

BENCH = os.path.join(ROOT, "Benchmarks", "overlay.py")
REASON = desktop.why_not("sway", "swaybg") or desktop.overlay_missing()


def test_help():
    r = subprocess.run([sys.executable, BENCH, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    for option in ("--bin-dir", "--seconds", "--morphs", "--requests", "--out", "--clients"):
        assert option in r.stdout


@pytest.mark.skipif(bool(REASON), reason=REASON or "")
def test_a_tiny_run_reports_every_measurement(tmp_path):
    clients = ["island-overlay"] + ([] if desktop.missing_programs("waybar") else ["waybar"])
    r = subprocess.run([sys.executable, BENCH, "--bin-dir", desktop.bin_dir(), "--seconds", "1", "--requests", "1",
                        "--morphs", "1", "--clients", ",".join(clients), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    report = json.loads((tmp_path / "overlay-bench.json").read_text())
    for client in clients:
        result = report["results"][client]
        for phase in ("idle", "timer"):
            assert set(result[phase]) >= {"cpu_percent", "wakeups_per_s", "redraws_per_s"}, result[phase]
        # A Request reached the screen: a commit and the compositor's frame-done were seen.
        assert result["request"]["to_commit"]["n"] == 1 and result["request"]["on_screen"]["n"] == 1
        assert result["rss_mib"] > 0 and result["hwm_mib"] >= result["rss_mib"]
    # The ticking timer was drawn at least once in its second; the expand/collapse was
    # measured: frames the frame clock drove, and the overlay's paints while animating. How many
    # is the benchmark's figure, not this test's: the spring runs on the wall clock, so a busy
    # machine draws fewer frames of it (4 of one expand and collapse beside five end-to-end
    # workers, against the 6 this test once asked for), and a frame whose commit came later
    # than a frame after its callback is not one the benchmark counts.
    assert report["results"]["island-overlay"]["timer"]["redraws_per_s"] > 0
    morphs = report["results"]["island-overlay"]["morphs"]
    assert morphs["frames"] >= 1 and morphs["paint"]["frames"] >= 1, morphs
    assert "| morph frame work" in (tmp_path / "overlay-bench.md").read_text()
