"""The benchmark script (scripts/bench.sh -> Benchmarks/bench.py) must not rot: its `--selftest`
runs every step at a tiny size against the binary under test and must produce the complete
report, with every update delivered to every presenter, in order. So must Benchmarks/anatomy.py
(where an update's time goes, from the kernel's trace; root and tracefs). No timing is
asserted: the numbers of a debug build on a busy machine mean nothing.

Needs the shared harness (the `shared/bench` folder beside the checkout, or ISLAND_BENCH_HARNESS), a C compiler, make and
systemd-socket-activate; skipped otherwise. About 25 s."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from harness.paths import ISLANDD
from harness.paths import REPO as ROOT

BENCH = os.path.join(ROOT, "Benchmarks", "bench.py")
HARNESS = os.environ.get("ISLAND_BENCH_HARNESS") or os.path.join(ROOT, "..", "shared", "bench")

missing = [what for what, ok in (
    ("the harness at %s" % HARNESS, os.path.isfile(os.path.join(HARNESS, "bench.py"))),
    ("make", shutil.which("make")), ("cc", shutil.which("cc")),
    ("systemd-socket-activate", shutil.which("systemd-socket-activate"))) if not ok]


def test_help():
    r = subprocess.run([sys.executable, BENCH, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    for option in ("--islandd", "--harness", "--out", "--quick", "--selftest"):
        assert option in r.stdout


def test_a_skipped_step_has_no_row_and_a_failed_one_says_so():
    """`--skip lat,thr` measures memory and start-up only: the table must not call the steps it
    did not run failed (it did, with a **missed** verdict each, until 2026-12-07)."""
    import argparse
    import importlib.util
    spec = importlib.util.spec_from_file_location("island_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    a = argparse.Namespace(subs_list=[1, 8])
    assert bench.harness_rows({}, a, skip={"lat", "thr"}) == []
    assert [r["key"] for r in bench.harness_rows({}, a, skip={"lat"})] == ["thr 1", "thr 8"]
    # Nothing measured although asked for: one failed row per step and N, each missed.
    rows = bench.harness_rows({}, a)
    assert len(rows) == 6 and all(r["failed"] and r["verdict"] is False for r in rows)


def selftest(harness, out, *options):
    """`bench.py --selftest` with `harness`, its results in `out`, run to its end."""
    return subprocess.run([sys.executable, BENCH, "--selftest", "--islandd", ISLANDD, "--harness", str(harness),
                           "--out", str(out), *options], capture_output=True, text=True, timeout=240)


def needs_the_harness(test):
    """Skips `test` without the harness and its tools, and under scripts/sanitize.sh: there the
    selftest's socket-activated daemon gets none of the sanitizer options (bench.py passes the
    activator only the variables it names), so it runs with the sanitizer's defaults,
    LeakSanitizer's false positives included, and exits 1. The benchmark is not a sanitizer test."""
    test = pytest.mark.skipif(bool(missing), reason="needs " + ", ".join(missing))(test)
    return pytest.mark.skipif(bool(os.environ.get("ISLAND_SANITIZER")),
                              reason="ISLAND_SANITIZER is set: the benchmark selftest is not a sanitizer test")(test)


@needs_the_harness
def test_selftest_reports_every_measurement(tmp_path):
    out = tmp_path / "out"
    r = selftest(HARNESS, out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    report = json.loads((out / "bench.json").read_text())
    assert report["failures"] == []

    # latency (oneway and reply) and pipelined throughput of islandd, the floor and the D-Bus
    # service (whose fire-and-forget calls the harness names `noreply`), N=1, in one run
    assert len(report["runs"]) == 1
    runs = {(x["baseline"], x["kind"], x["variant"], x["n"]): x
            for kind in ("lat", "thr") for x in report["runs"][0]["harness"][kind]["results"]}
    expected = {(b, "lat", v, 1) for b in ("islandd", "floor") for v in ("oneway", "reply")} | \
        {("dbus", "lat", v, 1) for v in ("noreply", "reply")} | \
        {(b, "thr", "reply", 1) for b in ("islandd", "floor", "dbus")}
    assert expected <= set(runs)
    for key in expected:
        assert "error" not in runs[key], (key, runs[key].get("error"))
        health = report["health"]["%s %s %s N=%d" % key]
        assert health["sent"] > 0
        # nothing out of order, no gap, no error reply
        assert health["ooo"] == health["lost_gaps"] == health["errors"] == 0, (key, health)
        if key[2] == "reply":
            # every acknowledged update reached every presenter
            assert health["complete"], (key, health)
    # Fire-and-forget (oneway) updates: the producer closes its connection right after its last
    # sends, and islandd currently drops the oneway calls it had read but not yet started when
    # the connection closes (the tail and the end marker; seen 2026-11-22). Gaps and reordering
    # are checked above; the lost tail is reported in the table as "incomplete", not failed here.
    for key in [k for k in expected if k[1] == "lat"]:
        assert runs[key]["samples"] > 0 and runs[key]["p50_us"] > 0
    # every latency and throughput row has its three figures and both ratios
    rows = {row["key"]: row for row in report["rows"][0]}
    for key in ("lat oneway 1 p50", "lat reply 1 p99", "thr 1"):
        assert not rows[key].get("failed"), rows[key]
        assert all(rows[key][x] > 0 for x in ("floor", "dbus", "islandd", "vs_floor", "vs_dbus")), rows[key]
    assert rows["thr 1"]["target"] == "≥ 0.33× floor, ≥ 4× D-Bus"

    loaded = report["rss"]["loaded"]
    assert loaded["activities"] == loaded["snapshot_items_min"] == 50
    assert loaded["presenters_live"] == loaded["presenters"] == 4
    assert report["rss"]["idle"]["rss_kb"] > 0 and loaded["hwm_kb"] > 0
    assert report["rss"]["floor_idle"]["rss_kb"] > 0
    ready = report["ready"]["islandd"]
    assert ready["reps"] == len(ready["ms"]) == 1
    # READY=1 came after the persisted activities were restored
    assert ready["status"].startswith("50 live activities"), ready["status"]
    assert report["ready"]["floor"]["ms"]

    table = (out / "table.md").read_text()
    assert "| measurement | floor | D-Bus | islandd | islandd / floor | islandd / D-Bus |" in table and "READY=1" in table


def harness_failing_once(tmp_path, start_of):
    """A copy of the harness whose baseline `start_of` (the class whose start() we break) fails the
    first time it starts, as dbus-daemon's service does when it is refused under load."""
    copy = tmp_path / "harness"
    shutil.copytree(HARNESS, copy, ignore=shutil.ignore_patterns("bin", "*.o"))
    source = (copy / "bench.py").read_text()
    anchor = "class %s(" % start_of
    start = "    def start(self, tmp, max_seconds):\n"
    at = source.index(start, source.index(anchor)) + len(start)
    marker = tmp_path / "failed-once"
    fail = ("        if not os.path.exists(%r):\n"
            "            open(%r, 'w').close()\n"
            "            raise RuntimeError('%s exited early (made to fail once)')\n") % (
        str(marker), str(marker), start_of)
    (copy / "bench.py").write_text(source[:at] + fail + source[at:])
    return copy, marker


def latency_selftest_failing_once(tmp_path, start_of):
    """The selftest's latency runs only, on a harness whose `start_of` fails once; (its
    CompletedProcess, its --out folder)."""
    harness, marker = harness_failing_once(tmp_path, start_of)
    out = tmp_path / "out"
    r = selftest(harness, out, "--skip", "thr,rss,ready")
    assert marker.exists(), "the broken start never ran"
    return r, out


@needs_the_harness
def test_a_comparison_baseline_that_fails_to_start_is_started_again_and_said_so(tmp_path):
    r, out = latency_selftest_failing_once(tmp_path, "DBus")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    results = json.loads((out / "bench.json").read_text())["runs"][0]["harness"]["lat"]["results"]
    dbus = {x["variant"]: x for x in results if x["baseline"] == "dbus"}
    assert dbus["noreply"]["retried_after"] == "DBus exited early (made to fail once)"
    assert "error" not in dbus["noreply"] and dbus["noreply"]["samples"] > 0
    assert "retried_after" not in dbus["reply"]
    assert "The harness failed to start dbus noreply N=1 (DBus exited early (made to fail once)); it was " \
        "started again." in (out / "table.md").read_text()


@needs_the_harness
def test_islandd_failing_in_the_harness_is_never_run_again(tmp_path):
    r, _ = latency_selftest_failing_once(tmp_path, "VarlinkExt")
    kept = re.search(r"kept the temporary directory for the logs: (\S+)", r.stderr)
    if kept:  # a failed benchmark keeps its logs for a person to read; this one was meant to fail
        shutil.rmtree(kept.group(1), ignore_errors=True)
    assert r.returncode == 1
    assert "FAILED: harness latency runs exit 1" in r.stdout
    assert "again (attempt" not in r.stderr

ANATOMY = os.path.join(ROOT, "Benchmarks", "anatomy.py")
STEPS = ("loop woken", "loop runs", "call read", "delta written", "presenter woken", "presenter runs", "delta received")

needs_tracefs = pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/kernel/tracing/instances"),
                                   reason="needs root and tracefs at /sys/kernel/tracing")


def anatomy(*options):
    return subprocess.run([sys.executable, ANATOMY, "--islandd", ISLANDD, "--harness", HARNESS, *options],
                          capture_output=True, text=True, timeout=240)


def test_help_says_what_it_needs():
    r = subprocess.run([sys.executable, ANATOMY, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    for words in ("--mode", "--producer", "--count", "--keep", "Needs root"):
        assert words in r.stdout


@needs_tracefs
@needs_the_harness
def test_latency_times_every_step_for_the_floor_and_islandd():
    r = anatomy("--count", "300")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    floor, islandd = r.stdout.split("islandd, oneway:")
    for side in (floor, islandd):
        for step in STEPS:
            # p10, p50 and p90, each a number: every update that came alone had the step
            assert re.search(r"%s\s+[\d.]+\s+[\d.]+\s+[\d.]+" % step, side), (step, side)
        assert "where the presenter ran once woken" in side
        assert re.search(r"on (the loop's|the other) CPU\s+after", side), side
    updates = int(re.search(r"(\d+) updates that came alone", islandd).group(1))
    assert 0 < updates <= 300
    # the tracefs instance of its own is gone
    assert not [name for name in os.listdir("/sys/kernel/tracing/instances") if name.startswith("island-anatomy-")]


@needs_tracefs
@needs_the_harness
def test_throughput_counts_the_commits(tmp_path):
    r = anatomy("--mode", "throughput", "--count", "3000", "--keep", str(tmp_path))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    floor, islandd = r.stdout.split("islandd: ")
    assert "commits (fdatasync): none" in floor, "the relay writes nothing"
    commits = re.search(r"commits \(fdatasync\): (\d+), ([\d.]+) updates each", islandd)
    assert commits and int(commits.group(1)) > 0, islandd
    assert re.search(r"the loop asleep in epoll_wait \d+%, the writer in fdatasync \d+%", islandd), islandd
    assert sorted(os.listdir(tmp_path)) == ["floor-throughput.trace", "islandd-throughput.trace"]
