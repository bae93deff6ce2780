"""Presenter items carry the app's desktop-entry Name= and Icon= (docs/design.md §10), bounded."""

import os

from harness.paths import REPO
from harness.varlink import next_item, subscribe_presenter

APP = "org.example.Named"


def write_entry(daemon, app, lines):
    path = os.path.join(daemon.share, "applications", app + ".desktop")
    with open(path, "w") as f:
        f.write("[Desktop Entry]\nType=Application\nExec=/usr/bin/false\nX-Island-LiveActivities=true\n" + lines)


def reload(daemon):
    with daemon.connect("org.island.Admin") as admin:
        admin.Reload()


def test_items_carry_the_entry_name_and_icon(daemon):
    write_entry(daemon, APP, "Name=Pizza Place\nName[de]=Pizzeria\nIcon=emoji-food-symbolic\n")
    reload(daemon)
    stream, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=APP, type="Order", attributes={}, content={"state": {"step": 1}})["activity"]
        _, item = next_item(stream, a["id"])
        assert (item["appName"], item["appIcon"]) == ("Pizza Place", "emoji-food-symbolic")
        # Every delta carries them, not only those that carry the layout.
        p.Update(app=APP, id=a["id"], content={"state": {"step": 2}})
        _, item = next_item(stream, a["id"], lambda i: i["content"]["state"] == {"step": 2})
        assert "layout" not in item
        assert (item["appName"], item["appIcon"]) == ("Pizza Place", "emoji-food-symbolic")

    late, snapshot = subscribe_presenter(daemon)
    [item] = [i for i in snapshot["items"] if i["id"] == a["id"]]
    assert item["appName"] == "Pizza Place"
    late.close()
    stream.close()


def test_an_entry_without_them_leaves_them_out_and_long_ones_are_cut(daemon):
    # conftest's entries have a Name (the id) and no Icon.
    long_name = "É" * 100 + "x"  # 201 bytes: cut at a character, to 64 "É" (128 bytes)
    write_entry(daemon, APP, "Name=%s\nIcon=%s\n" % (long_name, "i" * 300))
    reload(daemon)
    stream, _ = subscribe_presenter(daemon)
    with daemon.connect("org.island.Producer") as p:
        a = p.Request(app=APP, type="Order", attributes={}, content={"state": {}})["activity"]
        _, item = next_item(stream, a["id"])
        assert item["appName"] == "É" * 64
        assert item["appIcon"] == "i" * 128
    with daemon.connect("org.island.Producer") as coffee:
        b = coffee.Request(app="org.example.Coffee", type="Coffee", attributes={}, content={"state": {}})["activity"]
        _, item = next_item(stream, b["id"])
        assert item["appName"] == "org.example.Coffee" and "appIcon" not in item
    stream.close()


def test_the_shipped_entries_name_icons_the_icon_theme_has():
    """The CLI's and the examples' Icon= are freedesktop names Adwaita (installed with the
    overlay's dependencies) draws, so presenters have something to show."""
    import glob

    import pytest
    themes = "/usr/share/icons"
    if not os.path.isdir(os.path.join(themes, "Adwaita")):
        pytest.skip("the Adwaita icon theme is not installed")
    entries = sorted(glob.glob(os.path.join(REPO, "packaging", "applications", "*.desktop")))
    assert entries
    for entry in entries:
        with open(entry) as f:
            icons = [line.split("=", 1)[1].strip() for line in f if line.startswith("Icon=")]
        assert len(icons) == 1, entry
        found = glob.glob(os.path.join(themes, "*", "*", "*", icons[0] + ".*"))
        assert found, (entry, icons[0])
