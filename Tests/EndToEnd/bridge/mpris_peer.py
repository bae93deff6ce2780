#!/usr/bin/python3
"""An MPRIS player as small as the bridge reads one, with Debian's python3-dbus: it owns
org.mpris.MediaPlayer2.NAME and serves Properties.GetAll/Get of /org/mpris/MediaPlayer2,
playing one track. Arguments: NAME DESKTOP-ENTRY IDENTITY TITLE. Prints `ready` once it owns
the name; runs until stopped."""

import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

name, desktop_entry, identity, title = sys.argv[1:5]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()

ROOT = "org.mpris.MediaPlayer2"
PLAYER = "org.mpris.MediaPlayer2.Player"


class Player(dbus.service.Object):
    def properties(self, interface):
        if interface == ROOT:
            return dbus.Dictionary({"Identity": identity, "DesktopEntry": desktop_entry, "CanRaise": False}, signature="sv")
        if interface == PLAYER:
            metadata = dbus.Dictionary({"xesam:title": title, "mpris:trackid": dbus.ObjectPath("/org/island/test/track/1"),
                                        "mpris:length": dbus.Int64(60_000_000)}, signature="sv")
            return dbus.Dictionary({"PlaybackStatus": "Playing", "Metadata": metadata, "Rate": 1.0, "Position": dbus.Int64(0),
                                    "CanGoNext": False, "CanGoPrevious": False, "CanPlay": True, "CanPause": True},
                                   signature="sv")
        return dbus.Dictionary({}, signature="sv")

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties(interface)

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, property):
        return self.properties(interface)[property]


player = Player(bus, "/org/mpris/MediaPlayer2")
owned = dbus.service.BusName(ROOT + "." + name, bus)
print("ready", flush=True)
GLib.MainLoop().run()
