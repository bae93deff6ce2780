#!/usr/bin/python3
"""org.freedesktop.ScreenSaver as a locker that can be woken serves it (KDE's kscreenlocker,
xfce4-screensaver), as small as island-overlay uses it, with Debian's python3-dbus: it owns the
name on the session bus and prints `woken by SENDER` for each `SimulateUserActivity` at
/org/freedesktop/ScreenSaver. Prints `ready` once it owns the name."""

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
INTERFACE = "org.freedesktop.ScreenSaver"


class ScreenSaver(dbus.service.Object):
    @dbus.service.method(INTERFACE, in_signature="", out_signature="", sender_keyword="sender")
    def SimulateUserActivity(self, sender=None):
        print("woken by %s" % sender, flush=True)


bus = dbus.SessionBus()
saver = ScreenSaver(bus, "/org/freedesktop/ScreenSaver")
name = dbus.service.BusName(INTERFACE, bus, do_not_queue=True)
print("ready", flush=True)
GLib.MainLoop().run()
