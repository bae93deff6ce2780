"""The GNOME Shell extension's static checks, run by GNOMEShellExtension/check.sh: eslint with GNOME
Shell 43's own configuration, its schema compiled strictly, `gnome-extensions pack` of both families
(43–44 in the `imports` format, 45 and later as ES modules), and the unit tests of its pure module
(placement, monitor, standard-input lines, restart backoff) with plain gjs."""

import json
import os
import shutil
import subprocess

import pytest

from harness.paths import REPO

CHECK = os.path.join(REPO, "GNOMEShellExtension", "check.sh")
MISSING = [p for p in ("eslint", "gjs", "gnome-extensions", "glib-compile-schemas") if shutil.which(p) is None]
pytestmark = [pytest.mark.quick, pytest.mark.skipif(
    bool(MISSING), reason="%s not installed (scripts/install-deps.sh installs them)" % ", ".join(MISSING))]


def test_lint_pack_and_unit_tests_pass(tmp_path):
    result = subprocess.run([CHECK, "--pack-to", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "not ok" not in result.stdout
    for family in ("shell-43", "shell-45"):
        assert (tmp_path / family / "island@island.org.shell-extension.zip").exists(), family


def test_the_families_differ_only_in_their_entry_points(tmp_path):
    """One extension on every release: the two families share island.js, hosting.js,
    preferences.js and the schema byte for byte; only metadata.json and the entry points
    differ, and their shell-version lists do not overlap."""
    assemble = os.path.join(REPO, "GNOMEShellExtension", "assemble.sh")
    dirs = {}
    for shell in ("43", "45"):
        result = subprocess.run(["bash", assemble, "--shell", shell, str(tmp_path / shell)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        dirs[shell] = result.stdout.strip()
    for name in ("island.js", "hosting.js", "preferences.js", "schemas/org.gnome.shell.extensions.island.gschema.xml"):
        with open(os.path.join(dirs["43"], name), "rb") as a, open(os.path.join(dirs["45"], name), "rb") as b:
            assert a.read() == b.read(), name
    versions = {}
    for shell, path in dirs.items():
        with open(os.path.join(path, "metadata.json")) as f:
            versions[shell] = set(json.load(f)["shell-version"])
    assert versions["43"] == {"43", "44"}
    assert not versions["43"] & versions["45"] and min(int(v) for v in versions["45"]) == 45


def test_the_lock_screen_meets_the_review_rules(tmp_path):
    """gjs.guide's rules for an extension in the `unlock-dialog` session mode: both families ask
    for it; disable() says in a comment why it is needed; no key signal or keybinding is ever
    connected, and the keyboard's focus is followed only while unlocked (_followFocus)."""
    root = os.path.join(REPO, "GNOMEShellExtension")
    for family in ("shell-43", "shell-45"):
        with open(os.path.join(root, family, "metadata.json")) as f:
            assert json.load(f)["session-modes"] == ["user", "unlock-dialog"], family
    with open(os.path.join(root, "island", "island.js")) as f:
        source = f.read()
    comment = source[:source.index("    disable() {")].rsplit("\n\n", 1)[1]
    assert "unlock-dialog" in comment and "because" in comment, comment
    for keyboard in ("key-press-event", "key-release-event", "captured-event", "add_keybinding", "grab_accelerator"):
        assert keyboard not in source, keyboard
    connects = [line for line in source.splitlines() if "'focus'" in line or "notify::focus-window" in line]
    assert connects and all("_focusSignals" in line for line in connects), connects
    follow = source[source.index("    _sessionModeChanged() {"):]
    assert "this._followFocus(!locked)" in follow[:follow.index("\n    }\n")]
