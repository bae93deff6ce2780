"""Every method of every role interface is refused to a connection that took another role.

A connection takes one role for its life (design.md §4), and it is each handler that binds
its connection to its role before it does anything (`roles.bind` in RoleInterfaces.swift):
neither the build nor the wire contract notices a handler that forgets it, which would answer
any connection. The methods are read from the running daemon
(org.varlink.service.GetInterfaceDescription), so a method added to Protocol/ fails here until
it has a call below, and then fails if its handler does not bind.
"""

import re

import pytest

from harness.varlink import Connection, error

pytestmark = pytest.mark.quick  # part of scripts/test.sh --quick

COFFEE = "org.example.Coffee"
ROLES = {
    "org.island.Producer": "producer",
    "org.island.Extension": "extension",
    "org.island.Presenter": "presenter",
    "org.island.Admin": "admin",
}
# A call of each method that the interface's validation lets through to its handler.
CALLS = {
    "org.island.Producer.Request": {"app": COFFEE, "type": "T", "attributes": {}, "content": {"state": {}}},
    "org.island.Producer.Update": {"app": COFFEE, "id": "a1", "content": {"state": {}}},
    "org.island.Producer.End": {"app": COFFEE, "id": "a1"},
    "org.island.Producer.List": {"app": COFFEE},
    "org.island.Producer.Watch": {"app": COFFEE},
    "org.island.Producer.Authorization": {"app": COFFEE},
    "org.island.Producer.PushToken": {"app": COFFEE, "id": "a1"},
    "org.island.Producer.PushToStartToken": {"app": COFFEE, "type": "T"},
    "org.island.Extension.RegisterLayout": {"app": COFFEE, "type": "T", "layout": {}},
    "org.island.Extension.RemoveLayout": {"app": COFFEE, "type": "T"},
    "org.island.Extension.ListLayouts": {"app": COFFEE},
    "org.island.Presenter.Subscribe": {},
    "org.island.Presenter.Interact": {"action": "collapse"},
    "org.island.Admin.SetEnabled": {"enabled": False},
    "org.island.Admin.SetFrequentUpdates": {"app": COFFEE, "enabled": False},
    "org.island.Admin.ListApps": {},
    "org.island.Admin.Status": {},
    "org.island.Admin.SetFocus": {"on": True},
    "org.island.Admin.GetFocus": {},
    "org.island.Admin.SetSharing": {"on": True},
    "org.island.Admin.GetSharing": {},
    "org.island.Admin.SetLock": {"on": True},
    "org.island.Admin.GetLock": {},
    "org.island.Admin.SetDesktopLockScreen": {"everyAppSecret": True, "privateApps": [], "secretApps": []},
    "org.island.Admin.GetDesktopLockScreen": {},
    "org.island.Admin.Reload": {},
}
STREAMS = {"org.island.Producer.Watch", "org.island.Presenter.Subscribe"}
# How a connection takes a role other than the method's: as an app, or, for the app's own
# interfaces, as an admin.
AS_PRODUCER = ("org.island.Producer.List", {"app": COFFEE})
AS_ADMIN = ("org.island.Admin.GetFocus", {})


def test_every_method_served_has_a_call_here(daemon):
    connection = Connection(daemon.socket)
    served = set()
    for interface in ROLES:
        reply = connection.ask("org.varlink.service.GetInterfaceDescription", {"interface": interface})
        description = reply["parameters"]["description"]
        served |= {"%s.%s" % (interface, name) for name in re.findall(r"^method (\w+)", description, re.M)}
    connection.close()
    assert served == set(CALLS), "without a call here: %s; gone: %s" % (sorted(served - set(CALLS)), sorted(set(CALLS) - served))


@pytest.mark.parametrize("method", sorted(CALLS))
def test_a_connection_of_another_role_is_refused(daemon, method):
    interface = method.rsplit(".", 1)[0]
    other = AS_PRODUCER if interface == "org.island.Admin" else AS_ADMIN
    connection = Connection(daemon.socket)
    bound = connection.ask(*other)
    assert "error" not in bound, bound
    reply = connection.ask(method, CALLS[method], more=method in STREAMS)
    connection.close()
    name, parameters = error(reply)
    assert (name, parameters.get("role")) == ("org.island.PermissionDenied", ROLES[interface]), reply
    # Nothing it would have changed did change.
    with daemon.connect("org.island.Admin") as admin:
        assert admin.GetFocus()["focus"]["on"] is False
        assert admin.GetSharing()["sharing"]["on"] is False
        assert admin.GetLock()["lock"]["on"] is False
