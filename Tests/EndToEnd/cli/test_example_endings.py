"""An ended activity reads as ended: the example apps' layouts, rendered with the final content
scripts/demo.sh ends them with (as ActivityKit's end(content:) does), no longer say the order is
on its way, in any form the island or the lock screen shows it."""

import json
import os
import re
import subprocess

import pytest

from harness.paths import ISLAND, REPO

MODES = ("compact", "minimal", "expanded", "lockscreen")


def demo_story():
    """Each activity demo.sh ends: its app, type, attributes, last in-progress state and final state."""
    with open(os.path.join(REPO, "scripts", "demo.sh")) as f:
        script = f.read().replace("\\\n", " ")
    starts = {m.group(1): (m.group(2), m.group(3), m.group(4))
              for m in re.finditer(r"^(\w+)=\$\(island start --app (\S+) (\w+) +--attributes '([^']*)'", script, re.M)}
    states = {}
    for m in re.finditer(r"^island (update|end) --app \S+ \"\$(\w+)\" --state '([^']*)'", script, re.M):
        states.setdefault(m.group(2), []).append((m.group(1), json.loads(m.group(3))))
    story = []
    for name, steps in states.items():
        if steps and steps[-1][0] == "end":
            app, type, attributes = starts[name]
            updates = [state for kind, state in steps if kind == "update"]
            story.append((app, type, json.loads(attributes), updates[-1], steps[-1][1]))
    return story


def preview(app, type, attributes, state, mode):
    layout = os.path.join(REPO, "packaging", "layouts", app, type + ".json")
    result = subprocess.run([ISLAND, "preview", layout, "--attributes", json.dumps(attributes),
                             "--state", json.dumps(state), "--mode", mode, "--json"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return " | ".join(v for v in json.loads(result.stdout)["regions"].values() if v)


ENDED = demo_story()


def test_the_demo_ends_the_deliveries():
    assert sorted(app for app, *_ in ENDED) == ["org.island.example.Coffee", "org.island.example.FoodDelivery"]


@pytest.mark.parametrize("app,type,attributes,before,final", ENDED, ids=[e[0] for e in ENDED])
@pytest.mark.parametrize("mode", MODES)
def test_an_ended_delivery_reads_as_delivered(app, type, attributes, before, final, mode):
    during = preview(app, type, attributes, before, mode)
    after = preview(app, type, attributes, final, mode)
    # The in-progress wording (where a form has any) is gone once delivered.
    in_progress = r"on the way|\bmin\b|′"
    if mode == "lockscreen":
        assert re.search(in_progress, during, re.I), during
    assert not re.search(in_progress, after, re.I), after
    if mode in ("compact", "lockscreen"):
        assert "Delivered" in after or "✅" in after, after
