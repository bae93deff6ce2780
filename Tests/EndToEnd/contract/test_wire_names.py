"""scripts/check-wire-names.py, the test command's guard against a client spelling a name of an
Island interface by hand: it finds each kind of hand-spelled name and lets the generated ones,
and names that are not Island's, through. Marked quick: it starts nothing."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CHECK = ROOT / "scripts" / "check-wire-names.py"

pytestmark = pytest.mark.quick


def check(tmp_path, swift):
    source = tmp_path / "Client.swift"
    source.write_text(swift)
    run = subprocess.run([sys.executable, str(CHECK), str(source)], capture_output=True, text=True, timeout=60)
    return run.returncode, run.stdout


def test_the_clients_spell_no_name_by_hand():
    run = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout


@pytest.mark.parametrize("line, name", [
    ('let focus = reply["focus"]?.objectValue', '"focus" is a member'),
    ('_ = try await call("org.island.Admin.SetFocus", [:])', '"org.island.Admin.SetFocus" is a generated name'),
    ('case "org.island.Denied": break', '"org.island.Denied" is a generated name'),
    ('_ = try await call(AdminNames.SetFocus.method, ["on": .bool(true)])', '"on" is a member'),
    ('if name.hasPrefix("org.island.Connection.") {}', '"org.island.Connection." is a generated name'),
])
def test_a_hand_spelled_name_fails_the_check(tmp_path, line, name):
    status, output = check(tmp_path, line + "\n")
    assert status == 1
    assert name in output


@pytest.mark.parametrize("line", [
    'let focus = reply[AdminNames.GetFocus.focus]?.objectValue',
    '_ = try await call(AdminNames.SetFocus.method, [AdminNames.SetFocus.on: .bool(true)])',
    # Not a member of any Island interface, and a member name outside a call's parameters.
    'let path = environment["PATH"]',
    'logger.info("set", metadata: ["on": "\\(on)"])',
    # Said to be someone else's.
    'let on = dbus["on"]  // not Island\'s wire: a D-Bus property',
    '// reply["focus"] in a comment',
])
def test_generated_and_foreign_names_pass(tmp_path, line):
    status, output = check(tmp_path, line + "\n")
    assert status == 0, output
