#!/usr/bin/python3
"""A screen-cast client as OBS or a browser is, with Debian's python3-dbus: CreateSession,
SelectSources and Start on the portal, each awaited by its Request.Response on the request
path it predicts from its handle_token, as portal clients do. Prints `started <session>`, then
`close` on standard input calls the session's Close (`closed`); end of input exits without
closing, so the session ends with the client leaving the bus."""

import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
portal = bus.get_object("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop")
cast = dbus.Interface(portal, "org.freedesktop.portal.ScreenCast")
sender = bus.get_unique_name()[1:].replace(".", "_")


def awaited(call, token, *arguments):
    path = "/org/freedesktop/portal/desktop/request/%s/%s" % (sender, token)
    loop = GLib.MainLoop()
    answer = {}

    def responded(code, results):
        answer.update(code=int(code), results=results)
        loop.quit()
    match = bus.add_signal_receiver(responded, "Response", "org.freedesktop.portal.Request", path=path)
    options = dbus.Dictionary({"handle_token": token}, signature="sv")
    if token == "create":
        options["session_handle_token"] = "cast"
    call(*arguments, options)
    loop.run()
    match.remove()
    assert answer["code"] == 0, answer
    return answer["results"]


session = str(awaited(cast.CreateSession, "create")["session_handle"])
awaited(cast.SelectSources, "select", dbus.ObjectPath(session))
awaited(cast.Start, "start", dbus.ObjectPath(session), "")
print("started", session, flush=True)
for line in sys.stdin:
    if line.strip() == "close":
        dbus.Interface(bus.get_object("org.freedesktop.portal.Desktop", session), "org.freedesktop.portal.Session").Close()
        print("closed", flush=True)
