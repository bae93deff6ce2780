#!/usr/bin/env python3
"""Gives a headless wlroots compositor's seat a pointer (and a keyboard), speaking the Wayland
wire protocol directly (wlr-protocols are not packaged on Debian 12, nor is wlrctl).

With WLR_LIBINPUT_NO_DEVICES=1 sway's seat has no pointer: clients get no wl_pointer and
`swaymsg seat - cursor …` reaches no surface. This client binds
zwlr_virtual_pointer_manager_v1, creates one virtual pointer on the default seat and keeps it
open until its stdin closes, so the seat has a pointer for as long as it runs. It prints
`ready` once the compositor has processed the request without a protocol error.

It also creates a virtual keyboard (zwp_virtual_keyboard_manager_v1) with a small XKB keymap
when the compositor offers one. It can move, click and type by itself, one command per stdin
line (pointer commands are sent as one frame):
  motion X Y WIDTH HEIGHT   absolute position X,Y within an extent of WIDTH×HEIGHT
  button CODE 1|0           press or release a Linux input button (BTN_LEFT is 272)
  key CODE 1|0              press or release a Linux key code (KEY_ESC is 1)

Usage: WAYLAND_DISPLAY=… XDG_RUNTIME_DIR=… virtual_pointer.py
"""

import array
import os
import select
import socket
import struct
import sys
import tempfile
import time

MANAGER = "zwlr_virtual_pointer_manager_v1"
KEYBOARDS = "zwp_virtual_keyboard_manager_v1"
# Evdev code + 8 is the XKB keycode; the rest comes from the system's XKB data.
KEYMAP = """xkb_keymap {
  xkb_keycodes "island" { minimum = 8; maximum = 255; <ESC> = 9; <RTRN> = 36; <SPCE> = 65; };
  xkb_types "island" { include "complete" };
  xkb_compat "island" { include "complete" };
  xkb_symbols "island" {
    key <ESC> { [ Escape ] }; key <RTRN> { [ Return ] }; key <SPCE> { [ space ] };
  };
};
"""


class Connection:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 2  # 1 is wl_display

    def new_id(self):
        self.next_id += 1
        return self.next_id - 1

    def send(self, obj, opcode, payload=b"", fd=None):
        message = struct.pack("=II", obj, (8 + len(payload)) << 16 | opcode) + payload
        if fd is None:
            self.sock.sendall(message)
        else:  # a file descriptor argument travels beside the bytes (SCM_RIGHTS)
            self.sock.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])

    def events(self, timeout):
        """The complete events received within `timeout` seconds: (object, opcode, payload)."""
        readable, _, _ = select.select([self.sock], [], [], timeout)
        if readable:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the compositor closed the connection")
            self.buffer += chunk
        found = []
        while len(self.buffer) >= 8:
            obj, word = struct.unpack("=II", self.buffer[:8])
            size = word >> 16
            if len(self.buffer) < size:
                break
            found.append((obj, word & 0xFFFF, self.buffer[8:size]))
            self.buffer = self.buffer[size:]
        return found


def string(text):
    data = text.encode() + b"\0"
    return struct.pack("=I", len(data)) + data + b"\0" * (-len(data) % 4)


def read_string(payload, offset):
    (length,) = struct.unpack_from("=I", payload, offset)
    text = payload[offset + 4:offset + 4 + length - 1].decode()
    return text, offset + 4 + length + (-length % 4)


def check_error(obj, opcode, payload):
    if obj == 1 and opcode == 0:  # wl_display.error(object, code, message)
        failed, code = struct.unpack_from("=II", payload)
        message, _ = read_string(payload, 8)
        raise RuntimeError("protocol error on object %d, code %d: %s" % (failed, code, message))


def roundtrip(connection, on_event=None, timeout=30.0):
    """wl_display.sync, handling events until its callback is done. The bound is the suite's
    liveness bound (harness/paths.py, LIVENESS; this script runs on its own, as the session's
    user): a compositor starved of CPU answers late, not never."""
    callback = connection.new_id()
    connection.send(1, 0, struct.pack("=I", callback))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for obj, opcode, payload in connection.events(max(0.0, deadline - time.monotonic())):
            check_error(obj, opcode, payload)
            if obj == callback:
                return
            if on_event:
                on_event(obj, opcode, payload)
    raise TimeoutError("the compositor did not answer wl_display.sync within %ss" % timeout)


def main():
    runtime = os.environ["XDG_RUNTIME_DIR"]
    display = os.environ.get("WAYLAND_DISPLAY", "wayland-0")
    connection = Connection(display if display.startswith("/") else os.path.join(runtime, display))

    registry = connection.new_id()
    connection.send(1, 1, struct.pack("=I", registry))  # wl_display.get_registry
    globals_ = {}

    def on_global(obj, opcode, payload):
        if obj == registry and opcode == 0:  # wl_registry.global(name, interface, version)
            (name,) = struct.unpack_from("=I", payload)
            interface, offset = read_string(payload, 4)
            (version,) = struct.unpack_from("=I", payload, offset)
            globals_[interface] = (name, version)

    roundtrip(connection, on_global)
    if MANAGER not in globals_:
        sys.exit("the compositor has no %s (globals: %s)" % (MANAGER, ", ".join(sorted(globals_))))
    name, version = globals_[MANAGER]
    manager = connection.new_id()
    # wl_registry.bind(name, new_id: interface, version, id)
    connection.send(registry, 0, struct.pack("=I", name) + string(MANAGER) + struct.pack("=II", 1, manager))
    pointer = connection.new_id()
    # create_virtual_pointer(seat: null = the default seat, id)
    connection.send(manager, 0, struct.pack("=II", 0, pointer))
    keyboard = None
    if KEYBOARDS in globals_ and "wl_seat" in globals_:
        seat = connection.new_id()
        seat_name, seat_version = globals_["wl_seat"]
        connection.send(registry, 0, struct.pack("=I", seat_name) + string("wl_seat")
                        + struct.pack("=II", min(seat_version, 5), seat))
        keyboards = connection.new_id()
        name, _ = globals_[KEYBOARDS]
        connection.send(registry, 0, struct.pack("=I", name) + string(KEYBOARDS) + struct.pack("=II", 1, keyboards))
        keyboard = connection.new_id()
        connection.send(keyboards, 0, struct.pack("=II", seat, keyboard))  # create_virtual_keyboard
        with tempfile.TemporaryFile() as keymap:
            data = KEYMAP.encode() + b"\0"
            keymap.write(data)
            keymap.flush()
            # keymap(format: XKB_V1, fd, size)
            connection.send(keyboard, 0, struct.pack("=II", 1, len(data)), fd=keymap.fileno())
    roundtrip(connection)
    print("ready", flush=True)

    started = time.monotonic()
    stdin = sys.stdin.fileno()
    pending = b""
    while True:
        readable, _, _ = select.select([stdin, connection.sock], [], [])
        if connection.sock in readable:
            for event in connection.events(0):
                check_error(*event)
        if stdin not in readable:
            continue
        chunk = os.read(stdin, 4096)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            words = line.decode().split()
            stamp = int((time.monotonic() - started) * 1000) & 0xFFFFFFFF
            if words[:1] == ["motion"] and len(words) == 5:
                x, y, width, height = (int(w) for w in words[1:])
                connection.send(pointer, 1, struct.pack("=IIIII", stamp, x, y, width, height))
            elif words[:1] == ["button"] and len(words) == 3:
                connection.send(pointer, 2, struct.pack("=III", stamp, int(words[1]), int(words[2])))
            elif words[:1] == ["key"] and len(words) == 3 and keyboard:
                connection.send(keyboard, 1, struct.pack("=III", stamp, int(words[1]), int(words[2])))
                roundtrip(connection)
                print("done", flush=True)
                continue
            else:
                print("unknown command: %s" % line.decode(), file=sys.stderr, flush=True)
                continue
            connection.send(pointer, 4)  # frame
            roundtrip(connection)
            print("done", flush=True)


if __name__ == "__main__":
    main()
