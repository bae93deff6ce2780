"""scripts/check-wire-names.py, the test command's guard against a client, or the daemon,
spelling a name of an Island interface by hand: it finds each kind of hand-spelled name and lets
the generated ones, and names that are not Island's, through. Marked quick: it starts nothing."""

import contextlib
import importlib.util
import io
import pathlib
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CHECK = ROOT / "scripts" / "check-wire-names.py"

pytestmark = pytest.mark.quick


def load_check():
    """The check as a module: each case below runs it in this process, as its `main` would run
    from the command line (a Python started and the interfaces read per case cost ~0.3 CPU s,
    about ten seconds over this file's cases)."""
    spec = importlib.util.spec_from_file_location("check_wire_names", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECK_MODULE = load_check()


def check(tmp_path, swift, daemon=False):
    source = tmp_path / "Client.swift"
    source.write_text(swift)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        status = CHECK_MODULE.main((["--daemon"] if daemon else []) + [str(source)])
    return status, output.getvalue()


def test_the_clients_and_the_daemon_spell_no_name_by_hand():
    run = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout


@pytest.mark.parametrize("line, name", [
    ('let focus = reply["focus"]?.objectValue', '"focus" is a member'),
    ('let since = reply["focus"]?["since"]?.doubleValue', '"since" is a member'),
    ('for app in reply["apps"]?.arrayValue ?? [] {}', '"apps" is a member'),
    ('_ = try await call("org.island.Admin.SetFocus", [:])', '"org.island.Admin.SetFocus" is a generated name'),
    ('case "org.island.Denied": break', '"org.island.Denied" is a generated name'),
    ('_ = try await call(AdminNames.SetFocus.method, ["on": .bool(true)])', '"on" is a member'),
    ('if name.hasPrefix("org.island.Connection.") {}', '"org.island.Connection." is a generated name'),
    # An error's name alone, as a mapping to its qualified name spells it.
    ('case .denied: "Denied"', '"Denied" is an error of an Island interface'),
    ('var name: String { "org.island." + "StaleTimestamp" }', '"StaleTimestamp" is an error of an Island interface'),
    # A value of an interface's enum, compared or matched as a string, or sent in a call.
    ('switch update[Names.kind]?.stringValue { case "snapshot": break; default: break }', '"snapshot" is a value of an enum'),
    ('case "stale", "ended": text += " (stale)"', '"ended" is a value of an enum'),
    ('if item.activityState == "dismissed" {}', '"dismissed" is a value of an enum'),
    ('if "expanded" != island.mode {}', '"expanded" is a value of an enum'),
    ('_ = try await call(PresenterNames.Interact.method, [PresenterNames.Interact.action: "tap"])', '"tap" is a value of an enum'),
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
    'case .denied: ErrorNames.Denied.error',
    'case PresenterNames.Update.Kind.snapshot?: break',
    'if item.activityState == PresenterNames.Item.State.dismissed {}',
    # A value that is no enum's, and an enum's value that is not compared (a sentence, say).
    'if kind == "stop" {}',
    'let word = "stale"',
    # An error's name inside a sentence is no name.
    'let text = "Denied by the user"',
    # Said to be someone else's.
    'let on = dbus["on"]  // not Island\'s wire: a D-Bus property',
    'case "default": return .default  // not Island\'s wire: the CLI\'s own option values',
    '// reply["focus"] in a comment',
])
def test_generated_and_foreign_names_pass(tmp_path, line):
    status, output = check(tmp_path, line + "\n")
    assert status == 0, output


@pytest.mark.parametrize("line, name", [
    # A reply or an error made as a JSON object.
    ('return ["sharing": Wire.sharing(sharing, contentHidden: hidden)]', '"sharing" is a member'),
    ('guard let lock else { return ["on": false] }', '"on" is a member'),
    ('return ["skippedLayouts": .array(skipped.map { ["path": .string($0.path)] })]', '"path" is a member'),
    ('throw VarlinkError("org.island.Unentitled", [:])', '"org.island.Unentitled" is a generated name'),
    ('configuration.reservedInterfaces = ["org.island.Admin"]', '"org.island.Admin" is a generated name'),
    ('let on = parameters["on"]?.boolValue', '"on" is a member'),
])
def test_the_daemon_making_a_reply_by_hand_fails_the_check(tmp_path, line, name):
    status, output = check(tmp_path, line + "\n", daemon=True)
    assert status == 1
    assert name in output


@pytest.mark.parametrize("line", [
    'return [AdminNames.GetLock.lock: Wire.lock(await engine.sessionLock)]',
    # A log's metadata is no reply.
    'logger.info("reloaded", metadata: ["apps": "\\(count)"])',
    # JSONText's keys are StaticStrings, which no generated name can be.
    'text.member("state", string: activity.state.rawValue)',
    'WatchEvent(kind: .button, activity: activity, members: ["action": .string(action)])  // StaticString key: JSONText\'s',
])
def test_the_daemons_generated_names_and_writers_pass(tmp_path, line):
    status, output = check(tmp_path, line + "\n", daemon=True)
    assert status == 0, output


def check_rules(tmp_path, swift):
    """The check as it reads IslandCore: a file under Sources/IslandCore of a copy of the tree."""
    tree = pathlib.Path(tempfile.mkdtemp(dir=tmp_path))
    (tree / "scripts").mkdir()
    (tree / "scripts" / "check-wire-names.py").write_bytes(CHECK.read_bytes())
    (tree / "Protocol").symlink_to(ROOT / "Protocol")
    source = tree / "Sources" / "IslandCore" / "Refusal.swift"
    source.parent.mkdir(parents=True)
    source.write_text(swift)
    run = subprocess.run(
        [sys.executable, str(tree / "scripts" / "check-wire-names.py"), str(source)],
        capture_output=True, text=True, timeout=60)
    return run.returncode, run.stdout


def test_the_rules_are_checked_for_error_names_and_not_for_their_own_documents(tmp_path):
    # IslandCore makes org.island's errors: their names are the wire's.
    status, output = check_rules(tmp_path, 'case .expired: "org.island.PushExpired"\n')
    assert status == 1 and '"org.island.PushExpired" is a generated name' in output
    status, output = check_rules(tmp_path, 'case .denied: "Denied"\n')
    assert status == 1 and '"Denied" is an error of an Island interface' in output
    # Its layouts and APNs payloads are documents of its own, whose keys and words may be
    # an interface's by coincidence.
    status, output = check_rules(tmp_path, 'case "expanded": expanded = try layout["state"]\n')
    assert status == 0, output


def test_a_client_building_its_own_json_is_not_the_daemons_rule(tmp_path):
    # The same line in a client: a document of its own (a layout, an APNs payload), no reply.
    status, output = check(tmp_path, 'let view: JSON = ["title": .string(title)]\n')
    assert status == 0, output
    status, output = check(tmp_path, 'let view: JSON = ["title": .string(title)]\n', daemon=True)
    assert status == 1
