#!/usr/bin/python3
"""A notification server that inhibits as KDE Plasma's does, with Debian's python3-dbus: it owns
org.freedesktop.Notifications and serves /org/freedesktop/Notifications with Plasma's
inhibition, `Inhibit(desktop_entry, reason, hints) -> cookie` and `UnInhibit(cookie)`, its
`Inhibited` property (true while any inhibition holds) and the `PropertiesChanged` Plasma sends
when it changes. Prints `ready` once it owns the name; runs until stopped."""

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()

NOTIFICATIONS = "org.freedesktop.Notifications"
PROPERTIES = "org.freedesktop.DBus.Properties"


class Server(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.cookies = set()
        self.next_cookie = 1

    def inhibited(self):
        return dbus.Boolean(bool(self.cookies))

    @dbus.service.method(NOTIFICATIONS, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("Plasma", "KDE", "5.27", "1.2")

    @dbus.service.method(NOTIFICATIONS, in_signature="ssa{sv}", out_signature="u")
    def Inhibit(self, desktop_entry, reason, hints):
        was = bool(self.cookies)
        cookie = self.next_cookie
        self.next_cookie += 1
        self.cookies.add(cookie)
        if not was:
            self.PropertiesChanged(NOTIFICATIONS, {"Inhibited": self.inhibited()}, [])
        return dbus.UInt32(cookie)

    @dbus.service.method(NOTIFICATIONS, in_signature="u", out_signature="")
    def UnInhibit(self, cookie):
        if cookie in self.cookies:
            self.cookies.discard(cookie)
            if not self.cookies:
                self.PropertiesChanged(NOTIFICATIONS, {"Inhibited": self.inhibited()}, [])

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == NOTIFICATIONS and name == "Inhibited":
            return self.inhibited()
        raise dbus.exceptions.DBusException("no property %s.%s" % (interface, name),
                                            name="org.freedesktop.DBus.Error.UnknownProperty")

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


server = Server()
owned = dbus.service.BusName(NOTIFICATIONS, bus)
print("ready", flush=True)
GLib.MainLoop().run()
