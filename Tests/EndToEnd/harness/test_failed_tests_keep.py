"""The harness keeps a failed test's evidence (harness/artifacts.py, conftest.py): pytest runs a
file of deliberately failing and passing tests here, with this suite's conftest, and the kept
folder then holds each failed test's logs — those of a session or daemon the test closed itself
in `finally`, before its failure was reported, too — and its last screenshots, while a passing
test leaves nothing, and no test's directories stay behind in /tmp."""

import os
import struct
import subprocess
import sys
import tempfile
import zlib

import pytest

from harness import artifacts, desktop
from harness.paths import LIVENESS

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.dirname(HERE)
DESKTOP = desktop.why_not("sway", "swaymsg", "swaybg", "grim")

# Each test writes the directory its session or daemon made to ROOTS/<name>, for the outer test
# to check that it is gone afterwards.
TESTS = '''
import os

import pytest

from harness import desktop
from harness.daemon import Daemons

ROOTS = os.environ["ROOTS"]


def noted(name, directory):
    with open(os.path.join(ROOTS, name), "w") as f:
        f.write(directory)


def session_with_screenshots(name, fail):
    """Six screenshots of a headless sway, the last after its background turned red."""
    session = desktop.UserSession()
    noted(name, session.root)
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        for _ in range(5):
            sway.screenshot()
        sway.swaymsg("output", "*", "bg", "#ff0000", "solid_color")
        desktop.wait_until(lambda: sway.screenshot().pixel(640, 360) == (255, 0, 0), 30, "the red background")
        assert not fail, "failed on purpose"
    finally:
        session.close()


@pytest.mark.skipif(bool(os.environ.get("NO_DESKTOP")), reason="no desktop here")
def test_a_desktop_session_closed_in_finally_fails():
    session_with_screenshots("desktop-failed", fail=True)


@pytest.mark.skipif(bool(os.environ.get("NO_DESKTOP")), reason="no desktop here")
def test_a_desktop_session_closed_in_finally_passes():
    session_with_screenshots("desktop-passed", fail=False)


def daemon_closed_in_finally(name, fail):
    daemons = Daemons()
    try:
        d = daemons.make()
        noted(name, d.root)
        assert not fail, "failed on purpose"
    finally:
        daemons.close()


def test_a_daemon_closed_in_finally_fails():
    daemon_closed_in_finally("daemon-failed", fail=True)


def test_a_daemon_closed_in_finally_passes():
    daemon_closed_in_finally("daemon-passed", fail=False)


def test_the_daemon_fixture_fails(daemon):
    noted("fixture-failed", daemon.root)
    assert False, "failed on purpose"


def test_the_daemon_fixture_passes(daemon):
    noted("fixture-passed", daemon.root)
'''


def png_size_and_pixel(path, x, y):
    """The size of a PNG as artifacts writes it (8-bit RGB, no filter) and one pixel of it."""
    with open(path, "rb") as f:
        data = f.read()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    offset, idat, size = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    row = 1 + size[0] * 3
    return size, tuple(raw[y * row + 1 + x * 3:y * row + 4 + x * 3])


def kept_files(folder):
    return {os.path.relpath(os.path.join(parent, name), folder)
            for parent, _, names in os.walk(folder) for name in names}


def test_a_failed_test_keeps_its_logs_and_last_screenshots_and_a_passing_one_nothing():
    with tempfile.TemporaryDirectory(prefix="island-kept-test-") as scratch:
        roots, kept = os.path.join(scratch, "roots"), os.path.join(scratch, "kept")
        os.makedirs(roots)
        with open(os.path.join(scratch, "test_evidence.py"), "w") as f:
            f.write(TESTS)
        # A pytest of its own: nothing of this run's (an xdist worker's, PYTEST_ADDOPTS).
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env.update(ROOTS=roots, ISLAND_TEST_LOGS=kept,
                   PYTHONPATH=os.pathsep.join(filter(None, [SUITE, os.environ.get("PYTHONPATH")])))
        env.pop("NO_DESKTOP", None)
        if DESKTOP:
            env["NO_DESKTOP"] = "1"
        # This suite's conftest as a plugin, for a file outside the suite.
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                              "--import-mode=importlib", "--rootdir", scratch, "-c", os.devnull,
                              os.path.join(scratch, "test_evidence.py")],
                             cwd=scratch, env=env, capture_output=True, text=True, timeout=4 * LIVENESS)
        output = run.stdout + run.stderr
        failed = 3 if not DESKTOP else 2
        assert run.returncode == 1 and "%d failed" % failed in output, output

        folders = {name: os.path.join(kept, name) for name in os.listdir(kept)}
        assert sorted(folders) == sorted(
            "test_evidence.py_" + name for name in ("test_a_daemon_closed_in_finally_fails", "test_the_daemon_fixture_fails")
            + (() if DESKTOP else ("test_a_desktop_session_closed_in_finally_fails",))), (sorted(folders), output)
        for name in ("test_a_daemon_closed_in_finally_fails", "test_the_daemon_fixture_fails"):
            files = kept_files(folders["test_evidence.py_" + name])
            assert any(f.endswith("/islandd.log") for f in files), (name, files)
            assert any(f.endswith("/islandd.conf") for f in files), (name, files)
            assert "kept ---" in output and folders["test_evidence.py_" + name] in output, output

        # Nothing a test made stays behind once its verdict is known, failed or passed.
        made = {name: open(os.path.join(roots, name)).read() for name in os.listdir(roots)}
        assert len(made) == (4 if DESKTOP else 6), made
        assert not [d for d in made.values() if os.path.exists(d)], made

        if DESKTOP:
            pytest.skip("the desktop half: %s" % DESKTOP)
        folder = folders["test_evidence.py_test_a_desktop_session_closed_in_finally_fails"]
        files = kept_files(folder)
        assert any(f.endswith("/logs/sway.log") for f in files), files
        shots = sorted(f for f in files if f.startswith("screenshot-"))
        assert shots == ["screenshot-%d.png" % n for n in range(1, artifacts.SCREENSHOTS + 1)], files
        # The last is the red one the test took last; the first of those kept, the blue before.
        size, pixel = png_size_and_pixel(os.path.join(folder, shots[-1]), 640, 360)
        assert size == (1280, 720) and pixel == (255, 0, 0), (size, pixel)
        assert png_size_and_pixel(os.path.join(folder, shots[0]), 640, 360)[1] == desktop.BACKGROUND
