"""The shipped Waybar module (packaging/waybar/island.jsonc and island.css) in a real Waybar on a
headless sway, run as the unprivileged test user: the island is a black pill in the bar showing
the live compact text, and a click on it expands the island (`on-click`), a second collapses it."""

import json
import os
import re

import pytest

from harness import desktop
from harness.paths import LIVENESS
from harness.presenters import wait_until_clickable

REPO = desktop.REPO
APP = "org.island.test.Bar"
LAYOUT = {
    "compactLeading": {"type": "symbol", "name": "☕"},
    "compactTrailing": {"type": "text", "template": "{{state.stage}} and a long tail of words"},
    "chip": "Order",
}
BAR_HEIGHT = 30
WHITE = (0xFF, 0xFF, 0xFF)

pytestmark = pytest.mark.skipif(desktop.why_not("sway", "waybar", "grim") is not None,
                                reason=desktop.why_not("sway", "waybar", "grim") or "")


def shipped_module(presenter):
    """packaging/waybar/island.jsonc, comments dropped, with this build's island-presenter."""
    with open(os.path.join(REPO, "packaging", "waybar", "island.jsonc")) as f:
        text = re.sub(r"^\s*//.*$", "", f.read(), flags=re.M)
    module = json.loads(text)["custom/island"]
    return {key: value.replace("island-presenter", presenter) if isinstance(value, str) else value
            for key, value in module.items()}


def test_waybar_draws_the_pill_and_a_click_expands_the_island():
    session = desktop.UserSession()
    try:
        session.write_manifest(APP, name="Bar test")
        session.write(os.path.join(session.data, "island", "layouts", APP, "Order.json"), json.dumps(LAYOUT))
        session.start_bus()
        session.start_islandd()
        sway = desktop.Sway(session)
        presenter = os.path.join(desktop.bin_dir(), "island-presenter")
        config = {
            "layer": "top", "position": "top", "height": BAR_HEIGHT,
            "modules-left": [], "modules-center": ["custom/island"], "modules-right": [],
            "custom/island": shipped_module(presenter),
        }
        waybar_dir = os.path.join(session.config, "waybar")
        session.write(os.path.join(waybar_dir, "config"), json.dumps(config))
        with open(os.path.join(REPO, "packaging", "waybar", "island.css")) as f:
            session.write(os.path.join(waybar_dir, "island.css"), f.read())
        # A white bar, so the pill's black stands out.
        session.write(os.path.join(waybar_dir, "style.css"),
                      '@import "island.css";\nwindow#waybar { background: #ffffff; }\n')
        waybar = session.spawn("waybar", ["waybar", "-c", os.path.join(waybar_dir, "config"),
                                          "-s", os.path.join(waybar_dir, "style.css")])

        with session.varlink("org.island.Producer") as producer:
            producer.Request(app=APP, type="Order", attributes={}, content={"state": {"stage": "brewing"}})

        def pill():
            """The black run of the bar's middle row: (left, right), or None."""
            session.alive(waybar)
            shot = sway.screenshot()
            y = BAR_HEIGHT // 2
            dark = [x for x in range(sway.width) if max(shot.pixel(x, y)) < 40]
            if len(dark) < 40:
                return None
            if os.environ.get("ISLAND_DESKTOP_SHOTS"):
                shot.save_png(os.path.join(os.environ["ISLAND_DESKTOP_SHOTS"], "waybar-island.png"))
            return dark[0], dark[-1]
        left, right = desktop.wait_until(pill, 30, "the island's pill in the bar", interval=0.5)
        # Centred, as wide as its (capped) text, not the whole bar.
        assert abs((left + right) / 2 - sway.width / 2) < 40, (left, right)
        assert 60 < right - left < sway.width / 2, (left, right)
        assert desktop.island_mode(session) == "compact"

        # Each click once what it acts on has stood still on the bar: observed in the
        # presenter's record of what it shows.
        wait_until_clickable(session.socket, session.runtime)
        sway.click((left + right) / 2, BAR_HEIGHT // 2)
        desktop.wait_until(lambda: desktop.island_mode(session) == "expanded", LIVENESS, "the island expanded by a click")
        wait_until_clickable(session.socket, session.runtime, action="collapse")
        sway.click((left + right) / 2, BAR_HEIGHT // 2)
        desktop.wait_until(lambda: desktop.island_mode(session) == "compact", LIVENESS, "the island collapsed by a second click")
    finally:
        session.close()
