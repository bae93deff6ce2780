#!/usr/bin/python3
"""xdg-desktop-portal's ScreenCast as small as a client and the bridge see it, with Debian's
python3-dbus: it owns org.freedesktop.portal.Desktop and serves CreateSession, SelectSources and
Start of org.freedesktop.portal.ScreenCast at /org/freedesktop/portal/desktop. Each call is
answered with its request object, whose Request.Response (code 0, the user's "Share") follows
the answer, as the portal's does; the session object's Close ends it. `close-all` on standard
input makes the portal end every session itself (Session.Closed), as when the compositor stops
the cast. `hold` makes it hold its answer to the next Start of a session it made (printing
`held` when that Start arrives) until `release`, as a portal busy with other calls does; a
Start for a session it did not make is refused at once, as xdg-desktop-portal refuses it.
Prints `ready` once it owns the name; runs until stopped."""

import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()

PORTAL = "org.freedesktop.portal.Desktop"
ROOT = "/org/freedesktop/portal/desktop"
REQUEST = "org.freedesktop.portal.Request"
SESSION = "org.freedesktop.portal.Session"
SCREENCAST = "org.freedesktop.portal.ScreenCast"


def escaped(sender):
    return sender[1:].replace(".", "_")


class Request(dbus.service.Object):
    @dbus.service.signal(REQUEST, signature="ua{sv}")
    def Response(self, code, results):
        pass


class Session(dbus.service.Object):
    def __init__(self, path):
        super().__init__(bus, path)
        self.path = path

    @dbus.service.method(SESSION, in_signature="", out_signature="")
    def Close(self):
        sessions.pop(self.path, None)
        GLib.idle_add(self.remove_from_connection)

    @dbus.service.signal(SESSION, signature="a{sv}")
    def Closed(self, details):
        pass


sessions = {}
# `hold`: the next Start's answer waits for `release`.
holding = {"on": False, "answer": None}


def respond(sender, options, results):
    """The request object a call is answered with, and its Response once the answer is out."""
    path = "%s/request/%s/%s" % (ROOT, escaped(sender), options.get("handle_token", "t"))
    request = Request(bus, path)

    def emit():
        request.Response(dbus.UInt32(0), dbus.Dictionary(results, signature="sv"))
        request.remove_from_connection()
        return False
    GLib.idle_add(emit)
    return dbus.ObjectPath(path)


class ScreenCast(dbus.service.Object):
    @dbus.service.method(SCREENCAST, in_signature="a{sv}", out_signature="o", sender_keyword="sender")
    def CreateSession(self, options, sender):
        path = "%s/session/%s/%s" % (ROOT, escaped(sender), options.get("session_handle_token", "s"))
        sessions[path] = Session(path)
        return respond(sender, options, {"session_handle": dbus.String(path)})

    @dbus.service.method(SCREENCAST, in_signature="oa{sv}", out_signature="o", sender_keyword="sender")
    def SelectSources(self, session, options, sender):
        return respond(sender, options, {})

    @dbus.service.method(SCREENCAST, in_signature="osa{sv}", out_signature="o", sender_keyword="sender",
                         async_callbacks=("reply", "refuse"))
    def Start(self, session, parent, options, sender, reply, refuse):
        if str(session) not in sessions or not str(session).startswith("%s/session/%s/" % (ROOT, escaped(sender))):
            refuse(dbus.exceptions.DBusException("Invalid session", name="org.freedesktop.portal.Error.InvalidArgument"))
            return
        streams = dbus.Array([dbus.Struct((dbus.UInt32(42), dbus.Dictionary({}, signature="sv")))], signature="(ua{sv})")

        def answer():
            reply(respond(sender, options, {"streams": streams}))
        if holding["on"]:
            holding.update(on=False, answer=answer)
            print("held", flush=True)
        else:
            answer()


def command(source, condition):
    line = sys.stdin.readline()
    if not line:
        GLib.MainLoop().quit()
        return False
    if line.strip() == "close-all":
        for session in list(sessions.values()):
            session.Closed(dbus.Dictionary({}, signature="sv"))
            session.remove_from_connection()
        sessions.clear()
        print("closed-all", flush=True)
    elif line.strip() == "hold":
        holding["on"] = True
        print("holding", flush=True)
    elif line.strip() == "release":
        answer, holding["answer"] = holding["answer"], None
        answer()
        print("released", flush=True)
    return True


cast = ScreenCast(bus, ROOT)
owned = dbus.service.BusName(PORTAL, bus)
GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, command)
print("ready", flush=True)
GLib.MainLoop().run()
