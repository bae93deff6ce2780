"""Layouts installed with an app in share/island/layouts/<app>/<type>.json."""

import json
import os
import signal

from harness.processes import wait_for
from harness.varlink import subscribe_presenter

COFFEE = "org.example.Coffee"

LAYOUT = {
    "chip": "Coffee",
    "url": "https://example.org/orders/{{attributes.order}}",
    "compactLeading": {"type": "symbol", "name": "{{state.stage}}"},
    "compactTrailing": {"type": "text", "template": "{{state.minutes}} min"},
}


def install(daemon, app, type_name, layout):
    directory = os.path.join(daemon.share, "island", "layouts", app)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, type_name + ".json"), "w") as f:
        f.write(layout if isinstance(layout, str) else json.dumps(layout))


def coffee_item(daemon):
    stream, snapshot = subscribe_presenter(daemon)
    stream.close()
    items = snapshot["items"]
    return next(item for item in items if item["app"] == COFFEE)


def test_installed_layouts_are_served_and_reread_on_sighup(daemon):
    with daemon.connect("org.island.Producer") as p, daemon.connect("org.island.Presenter") as presenter:
        a = p.Request(app=COFFEE, type="Coffee", attributes={"order": "17"},
                      content={"state": {"stage": "brewing", "minutes": 3}})["activity"]
        assert coffee_item(daemon)["defaultLayout"] is True

        install(daemon, COFFEE, "Coffee", LAYOUT)
        install(daemon, COFFEE, "Broken", "{not json")
        daemon.process.send_signal(signal.SIGHUP)
        item = wait_for(lambda: (lambda i: i if not i["defaultLayout"] else None)(coffee_item(daemon)),
                        interval=0.05, message="the installed layout after SIGHUP")
        assert item["defaultLayout"] is False
        assert item["layout"] == LAYOUT
        # The tap URL is the layout's template filled from the activity.
        assert presenter.Interact(action="tap", id=a["id"])["url"] == "https://example.org/orders/17"
    assert "skipping an installed layout" in daemon.log()
