#!/usr/bin/python3
"""mako's D-Bus interface as small as the bridge reads it, with Debian's python3-dbus: it owns
org.freedesktop.Notifications and serves /fr/emersion/Mako with mako's `SetModes(modes)`, its
`Modes` property and the `PropertiesChanged` that invalidates it (without the value), as mako
does when `makoctl mode -a do-not-disturb` changes the modes. Prints `ready` once it owns the
name; runs until stopped."""

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()

MAKO = "fr.emersion.Mako"
PROPERTIES = "org.freedesktop.DBus.Properties"


class Mako(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, "/fr/emersion/Mako")
        self.modes = ["default"]

    @dbus.service.method(MAKO, in_signature="as", out_signature="")
    def SetModes(self, modes):
        self.modes = [str(mode) for mode in modes]
        self.PropertiesChanged(MAKO, dbus.Dictionary({}, signature="sv"), ["Modes"])

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == MAKO and name == "Modes":
            return dbus.Array(self.modes, signature="s")
        raise dbus.exceptions.DBusException("no property %s.%s" % (interface, name),
                                            name="org.freedesktop.DBus.Error.UnknownProperty")

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


mako = Mako()
owned = dbus.service.BusName("org.freedesktop.Notifications", bus)
print("ready", flush=True)
GLib.MainLoop().run()
