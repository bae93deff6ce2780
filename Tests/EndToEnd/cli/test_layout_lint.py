"""What a valid layout probably gets wrong is said before and when it is registered, and never
refuses it."""

import json

from harness.cli import island, ok

LAYOUT = {
    "compactTrailing": {"type": "text", "template": "{{state.percnt}}%"},
    "expanded": {"bottom": {"type": "progress", "value": "40%", "priority": 1}},
}
MEASURE = "expanded.bottom.value: '40%' can never be a number"
NAME = "compactTrailing.template: {{state.percnt}}: the sample state has no 'percnt' (did you mean percent?)"


def test_preview_lint_and_register_warn_but_accept(cli_daemon, tmp_path):
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(LAYOUT))
    lint = ok(island(None, "preview", "--lint", str(path), "--state", '{"percent": 40}'))
    lines = lint.stdout.splitlines()
    assert [line.startswith("%s: " % path) for line in lines] == [True, True], lines
    assert NAME in lines[0] and MEASURE in lines[1], lines
    # Without a sample state, names are not checked.
    assert [w["path"] for w in json.loads(ok(island(None, "preview", "--lint", str(path), "--json")).stdout)["warnings"]] \
        == ["expanded.bottom.value"]
    # The daemon registers it, and says what the measure gets wrong.
    registered = ok(island(cli_daemon, "extension", "register", str(path), "--type", "Copy"))
    assert MEASURE in registered.stderr, registered.stderr


def test_a_plain_preview_warns_on_stderr_too(tmp_path):
    """A misspelt key rendered as nothing, and said nothing, without --lint."""
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(LAYOUT))
    result = ok(island(None, "preview", str(path), "--state", '{"percent": 40}'))
    assert "island: warning: %s: %s" % (path, NAME) in result.stderr, result.stderr
    assert "compact" in result.stdout and "percnt" not in result.stdout


def test_a_near_miss_layout_key_names_the_key_meant(tmp_path):
    path = tmp_path / "layout.json"
    path.write_text(json.dumps({"compactLeding": {"type": "text", "template": "x"}}))
    result = island(None, "preview", str(path))
    assert result.returncode == 1
    assert "compactLeding: unknown key 'compactLeding'; did you mean 'compactLeading'?" in result.stderr, result.stderr
