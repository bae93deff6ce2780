#!/usr/bin/python3
"""A hostile session-bus peer, with Debian's python3-dbus: it calls the portal's
ScreenCast.Start for a session it does not own (argv[1]) argv[2] times, 64 calls at a time as
fast as it can write, without waiting for the answers — each one the portal refuses.
Then one more Start, awaited: the bus keeps a connection's messages in order and the portal
answers in order, so once it is answered every call before it has been. Prints `flooded N`,
N the calls sent; then waits for end of input."""

import sys

import dbus
import dbus.lowlevel

bus = dbus.SessionBus()
PORTAL = "org.freedesktop.portal.Desktop"
ROOT = "/org/freedesktop/portal/desktop"
SCREENCAST = "org.freedesktop.portal.ScreenCast"
session, count = dbus.ObjectPath(sys.argv[1]), int(sys.argv[2])


def start_call():
    message = dbus.lowlevel.MethodCallMessage(PORTAL, ROOT, SCREENCAST, "Start")
    message.append(session, "", dbus.Dictionary({}, signature="sv"), signature="osa{sv}")
    return message


sent = 0
while sent < count:
    for _ in range(64):
        bus.send_message(start_call())
    sent += 64
    bus.flush()
try:
    bus.send_message_with_reply_and_block(start_call(), 600_000)
except dbus.exceptions.DBusException:
    pass  # refused, as every one before it
print("flooded", sent + 1, flush=True)
sys.stdin.read()
