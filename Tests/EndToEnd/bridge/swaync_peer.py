#!/usr/bin/python3
"""SwayNotificationCenter's control interface as small as the bridge reads it, with Debian's
python3-dbus: it owns org.erikreider.swaync.cc and serves /org/erikreider/swaync/cc with
swaync's `GetDnd`, `SetDnd(state)` and the `SubscribeV2(count, dnd, cc_open, inhibited)` signal
swaync sends on every change (swaync-client --dnd-on calls SetDnd). Prints `ready` once it owns
the name; runs until stopped."""

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()

CC = "org.erikreider.swaync.cc"


class ControlCenter(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, "/org/erikreider/swaync/cc")
        self.dnd = False

    @dbus.service.method(CC, in_signature="", out_signature="b")
    def GetDnd(self):
        return self.dnd

    @dbus.service.method(CC, in_signature="b", out_signature="")
    def SetDnd(self, state):
        self.dnd = bool(state)
        self.SubscribeV2(dbus.UInt32(0), self.dnd, False, False)

    @dbus.service.signal(CC, signature="ubbb")
    def SubscribeV2(self, count, dnd, cc_open, inhibited):
        pass


center = ControlCenter()
owned = dbus.service.BusName(CC, bus)
print("ready", flush=True)
GLib.MainLoop().run()
