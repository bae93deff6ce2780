#!/usr/bin/python3
"""A job tracker client, as KJobWidgets' KUiServerV2JobTracker (what KIO and Dolphin use) talks
to the job server: requestView(desktopEntry, capabilities, hints) on org.kde.JobViewServer,
then update(a{sv}) of the view with the job's progress, and on the view's signals what a KJob
does: suspendRequested and resumeRequested suspend and resume it (reported back with
`suspended`), cancelRequested kills it (terminate with KJob::KilledJobError, 1).

KIO itself is not packaged without KDE's libraries, so this stands in for it, with Debian's
python3-dbus. Commands on stdin, one per line: `update {json}`, `terminate CODE MESSAGE`,
`quit` (leaves the bus without terminating: the owner is gone). It prints `path PATH` once the
view exists, and `signal NAME` for each signal of its view."""

import json
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()

desktop_entry, capabilities = sys.argv[1], int(sys.argv[2])
hints = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
server = dbus.Interface(bus.get_object("org.kde.JobViewServer", "/JobViewServer"), "org.kde.JobViewServerV2")
path = server.requestView(desktop_entry, capabilities, dbus.Dictionary(hints, signature="sv"))
view = dbus.Interface(bus.get_object("org.kde.JobViewServer", path), "org.kde.JobViewV3")
print("path", path, flush=True)


def variant_map(values):
    typed = {}
    for key, value in values.items():
        if isinstance(value, bool):
            typed[key] = dbus.Boolean(value)
        elif isinstance(value, int):
            typed[key] = dbus.UInt64(value) if key.startswith(("processed", "total")) or key == "speed" else dbus.UInt32(value)
        else:
            typed[key] = dbus.String(value)
    return dbus.Dictionary(typed, signature="sv")


def on_signal(*args, member=None):
    print("signal", member, flush=True)
    if member == "suspendRequested":
        view.update(variant_map({"suspended": True}))
    elif member == "resumeRequested":
        view.update(variant_map({"suspended": False}))
    elif member == "cancelRequested":
        view.terminate(dbus.UInt32(1), "", dbus.Dictionary({}, signature="sv"))
        print("terminated 1", flush=True)
        loop.quit()


bus.add_signal_receiver(on_signal, dbus_interface="org.kde.JobViewV3", path=path, member_keyword="member")


def on_stdin(source, condition):
    line = sys.stdin.readline()
    if not line or line.strip() == "quit":
        loop.quit()
        return False
    command, _, rest = line.strip().partition(" ")
    if command == "update":
        view.update(variant_map(json.loads(rest)))
        print("updated", flush=True)
    elif command == "terminate":
        code, _, message = rest.partition(" ")
        view.terminate(dbus.UInt32(int(code)), message, dbus.Dictionary({}, signature="sv"))
        print("terminated", code, flush=True)
        loop.quit()
        return False
    return True


GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_stdin)
loop.run()
