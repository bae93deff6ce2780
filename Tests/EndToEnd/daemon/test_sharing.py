"""Screen sharing in the real islandd, through the reference Python varlink client (docs/design.md
§13): the admin says the screen is shared, presenters are sent no content meanwhile, the state is
not kept across a restart or a crash, only the admin role sets it, and `HideWhileSharing=no` (the
user's alone) keeps content shown, a reload applying it at once."""

import pytest

from harness.varlink import Connection, next_update, subscribe_presenter

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"
SECRET = "SECRET-4711"


def start_secret(daemon):
    with daemon.connect("org.island.Producer") as p:
        return p.Request(app=COFFEE, type="Order", attributes={"title": "Bank transfer"},
                         content={"state": {"secret": SECRET}})["activity"]


def test_sharing_is_not_kept_across_a_restart_or_a_crash(daemon):
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetSharing()["sharing"] == {"on": False, "contentHidden": False}
        sharing = admin.SetSharing(on=True, source="portal")["sharing"]
        assert sharing["on"] is True and sharing["source"] == "portal" and sharing["contentHidden"] is True
    assert daemon.stop() == 0
    daemon.start()
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetSharing()["sharing"] == {"on": False, "contentHidden": False}
        admin.SetSharing(on=True)
    daemon.kill()
    daemon.start()
    presenter, snapshot = subscribe_presenter(daemon)
    presenter.close()
    assert snapshot["sharing"] == {"on": False, "contentHidden": False}


def test_only_the_admin_role_sets_sharing(daemon):
    """A producer's or a presenter's connection does not reach the admin's methods: nothing a
    producer sends turns the hiding off."""
    with daemon.connect("org.island.Admin") as admin:
        admin.SetSharing(on=True)
    for role_call in (("org.island.Producer.List", {"app": COFFEE}), ("org.island.Presenter.Interact", {"action": "collapse"})):
        connection = Connection(daemon.socket)
        assert "error" not in connection.ask(*role_call)
        reply = connection.ask("org.island.Admin.SetSharing", {"on": False})
        connection.close()
        assert reply.get("error") == "org.island.PermissionDenied", reply
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetSharing()["sharing"]["source"] == "manual"


def test_hide_while_sharing_no_keeps_content_and_a_reload_hides_it(make_daemon):
    daemon = make_daemon("[Daemon]\nHideWhileSharing=no\n")
    start_secret(daemon)
    presenter, snapshot = subscribe_presenter(daemon)
    try:
        with daemon.connect("org.island.Admin") as admin:
            assert admin.SetSharing(on=True, source="gnome")["sharing"]["contentHidden"] is False
        shared = next_update(presenter)
        assert shared["kind"] == "snapshot" and shared["sharing"]["on"] is True and shared["sharing"]["contentHidden"] is False
        assert SECRET in repr(shared["items"])

        with open(daemon.config, "w") as f:
            f.write("[Daemon]\nHideWhileSharing=yes\n")
        with daemon.connect("org.island.Admin") as admin:
            admin.Reload()
            assert admin.GetSharing()["sharing"]["contentHidden"] is True
        hidden = next_update(presenter, lambda update: update.get("sharing", {}).get("contentHidden") is True)
        assert SECRET not in repr(hidden) and "Bank transfer" not in repr(hidden)
        assert all(item["content"]["state"] == {} for item in hidden["items"])
    finally:
        presenter.close()
