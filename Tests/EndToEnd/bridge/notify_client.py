#!/usr/bin/python3
"""A notification client that keeps one connection to the session bus, as an app does (and
notify-send, which connects anew each time, does not): org.freedesktop.Notifications calls on
commands from stdin, one per line, with Debian's python3-dbus.

  notify {"app": …, "replaces": N, "icon": …, "summary": …, "body": …, "hints": {…}}
      prints `id N` (the server's answer). Hints: `value` is sent as int32, every other as a
      string.
  close N       CloseNotification(N); prints `closed N`
  name          prints `name UNIQUE-NAME`
  quit

It prints `ready` once connected. Run it with another interpreter binary (a copy of python3
named as an app's executable) to stand for that app."""

import json
import sys

import dbus

bus = dbus.SessionBus()
server = dbus.Interface(bus.get_object("org.freedesktop.Notifications", "/org/freedesktop/Notifications"),
                        "org.freedesktop.Notifications")
print("ready", flush=True)

for line in sys.stdin:
    command, _, argument = line.strip().partition(" ")
    if command == "notify":
        spec = json.loads(argument)
        hints = dbus.Dictionary({}, signature="sv")
        for key, value in spec.get("hints", {}).items():
            hints[key] = dbus.Int32(value) if key == "value" else dbus.String(value)
        id = server.Notify(spec.get("app", ""), dbus.UInt32(spec.get("replaces", 0)), spec.get("icon", ""),
                           spec.get("summary", ""), spec.get("body", ""), dbus.Array([], signature="s"), hints,
                           dbus.Int32(spec.get("timeout", 0)))
        print("id", int(id), flush=True)
    elif command == "close":
        server.CloseNotification(dbus.UInt32(int(argument)))
        print("closed", argument, flush=True)
    elif command == "name":
        print("name", bus.get_unique_name(), flush=True)
    elif command == "quit":
        break
