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
