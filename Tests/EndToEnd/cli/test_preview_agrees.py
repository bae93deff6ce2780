"""`island preview` prints what its SVG draws: a region the layout leaves out is drawn from the
default layout, as presenters do, and printed from it too (not `(none)`)."""

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest

from harness.paths import ISLAND

SVG_NS = "{http://www.w3.org/2000/svg}"
# Compact regions only: expanded, minimal and the lock screen fall back to the default layout.
LAYOUT = {"compactLeading": {"type": "symbol", "name": "☕"},
          "compactTrailing": {"type": "text", "template": "{{state.minutes}} min"}}


@pytest.mark.parametrize("mode", ["expanded", "minimal", "lockscreen"])
def test_text_and_svg_show_the_same_regions(tmp_path, mode):
    layout = tmp_path / "layout.json"
    layout.write_text(json.dumps(LAYOUT))
    svg = tmp_path / "preview.svg"
    args = [ISLAND, "preview", str(layout), "--attributes", '{"title":"Flat white"}',
            "--state", '{"stage":"brewing","minutes":4}', "--mode", mode, "--now", "0"]
    result = subprocess.run(args + ["--json", "--svg", str(svg)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    regions = json.loads(result.stdout)["regions"]
    shown = [text for text in regions.values() if text]
    assert shown, regions
    # The drawing is glyph outlines; its <desc> says the text it draws.
    drawn = ET.parse(svg).getroot().find(SVG_NS + "desc").text or ""
    for text in shown:
        for part in text.split(" · "):
            assert part in drawn, (part, drawn)
    plain = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert plain.returncode == 0 and all(text in plain.stdout for text in shown), plain.stdout
    if mode == "expanded":
        assert regions["center"] == "Flat white" and regions["trailing"] == "Brewing"
        assert "center:   Flat white" in plain.stdout, plain.stdout
