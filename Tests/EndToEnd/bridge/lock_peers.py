#!/usr/bin/python3
"""The desktop's lock reports as small as island-bridge reads them, with Debian's python3-dbus,
none of their services being installed here.

`lock_peers.py screensaver [NAME…]` serves GNOME Shell's org.gnome.ScreenSaver at
/org/gnome/ScreenSaver and org.freedesktop.ScreenSaver (as KDE's locker does) at
/org/freedesktop/ScreenSaver, each with `GetActive` and the `ActiveChanged(b)` signal, on the
session bus, and owns the NAMEs given: for an interface whose name it does not own, it is an
impostor sending what the owner sends. Reads `gnome lock`, `freedesktop unlock`… on stdin.

`lock_peers.py logind` owns org.freedesktop.login1 on the system bus (DBUS_SYSTEM_BUS_ADDRESS:
a test's own) with `Manager.GetSession(id)` and one session's `LockedHint`, sent in
`PropertiesChanged` as logind does. Reads `lock` / `unlock` on stdin.

Each answers a line with `ok`, and prints `ready` once it owns its names."""

import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
SESSION_PATH = "/org/freedesktop/login1/session/_31"
LOGIND_SESSION = "org.freedesktop.login1.Session"


def screensaver(bus, interface, path):
    """An object serving `interface` at `path`: dbus-python binds a method's interface when its
    class is made, so a class is made for each interface."""

    class ScreenSaver(dbus.service.Object):
        active = False

        @dbus.service.method(interface, in_signature="", out_signature="b")
        def GetActive(self):
            return self.active

        @dbus.service.signal(interface, signature="b")
        def ActiveChanged(self, active):
            pass

        def set(self, active):
            self.active = active
            self.ActiveChanged(active)

    return ScreenSaver(bus, path)


class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.login1.Manager", in_signature="s", out_signature="o")
    def GetSession(self, session_id):
        return dbus.ObjectPath(SESSION_PATH)


class Session(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, SESSION_PATH)
        self.locked = False

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == LOGIND_SESSION and name == "LockedHint":
            return dbus.Boolean(self.locked)
        raise dbus.exceptions.DBusException("no such property", name="org.freedesktop.DBus.Error.UnknownProperty")

    @dbus.service.signal(dbus.PROPERTIES_IFACE, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def set(self, locked):
        self.locked = locked
        self.PropertiesChanged(LOGIND_SESSION, {"LockedHint": dbus.Boolean(locked)}, [])


names = []
if sys.argv[1] == "screensaver":
    bus = dbus.SessionBus()
    savers = {
        "gnome": screensaver(bus, "org.gnome.ScreenSaver", "/org/gnome/ScreenSaver"),
        "freedesktop": screensaver(bus, "org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver"),
    }
    names = [dbus.service.BusName(name, bus, do_not_queue=True) for name in sys.argv[2:]]

    def apply(words):
        savers[words[0]].set(words[1] == "lock")
else:
    bus = dbus.SystemBus()
    manager = Manager(bus, "/org/freedesktop/login1")
    session = Session(bus)
    names = [dbus.service.BusName("org.freedesktop.login1", bus, do_not_queue=True)]

    def apply(words):
        session.set(words[0] == "lock")


def command(source, condition):
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    apply(line.split())
    bus.flush()
    print("ok", flush=True)
    return True


GLib.io_add_watch(sys.stdin, GLib.IO_IN, command)
print("ready", flush=True)
GLib.MainLoop().run()
