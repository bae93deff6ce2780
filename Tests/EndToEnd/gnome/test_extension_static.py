"""The GNOME Shell extension's static checks (issue #28), run by GNOMEShellExtension/check.sh:
eslint with GNOME Shell 43's own configuration, its schema compiled strictly, `gnome-extensions
pack`, and the unit tests of its pure module (placement, monitor, standard-input lines,
restart backoff) with plain gjs."""

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
    assert (tmp_path / "island@island.org.shell-extension.zip").exists()
