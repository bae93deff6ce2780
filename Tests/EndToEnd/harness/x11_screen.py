"""Screenshots of an X server's root window through the X11 protocol itself: one connection
kept open, one GetImage request a shot. ImageMagick's `import` did the same from a new process
every shot, ~45 ms of CPU each on the 2-vCPU machine, some 230 shots in the GNOME Shell's test
file alone; this costs the copy of the pixels and no process.

Only the standard library, as in the rest of desktop.py's harness. The server is the harness's
Xvfb, given no -auth: a local client connects without authorisation, as the programs the
tests start there do."""

import socket
import struct

from harness.paths import LIVENESS

GET_IMAGE = 73
Z_PIXMAP = 2


class XScreen:
    """A connection to display `number`'s server (its Unix socket); `grab()` reads the root
    window as an RGB PPM, as `import -window root -depth 8 ppm:-` writes it."""

    def __init__(self, number, timeout=LIVENESS):
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.settimeout(timeout)
        self.socket.connect("/tmp/.X11-unix/X%d" % number)
        # Little-endian, protocol 11.0, no authorisation.
        self.socket.sendall(struct.pack("<cxHHHHxx", b"l", 11, 0, 0, 0))
        head = self._read(8)
        if head[0] != 1:
            reason = self._read(struct.unpack_from("<H", head, 6)[0] * 4)[:head[1]]
            raise RuntimeError("the X server refused the connection: %s" % reason.decode(errors="replace"))
        setup = self._read(struct.unpack_from("<H", head, 6)[0] * 4)
        vendor_length, = struct.unpack_from("<H", setup, 16)
        formats_at = 32 + (vendor_length + 3) // 4 * 4  # after the fixed part and the vendor's name
        bits_per_pixel = {setup[formats_at + 8 * n]: setup[formats_at + 8 * n + 1] for n in range(setup[21])}
        screens_at = formats_at + 8 * setup[21]
        self.root, = struct.unpack_from("<I", setup, screens_at)
        self.width, self.height = struct.unpack_from("<HH", setup, screens_at + 20)
        depth = setup[screens_at + 38]
        bits = bits_per_pixel.get(depth)
        if depth != 24 or bits != 32 or setup[22] != 0:  # image byte order LSBFirst
            raise RuntimeError("an X screen of depth %d, %s bits a pixel, byte order %d: not the 24-bit "
                               "little-endian screen this reads" % (depth, bits, setup[22]))
        self.sequence = 0

    def _read(self, count):
        data = bytearray(count)
        view, done = memoryview(data), 0
        while done < count:
            n = self.socket.recv_into(view[done:])
            if not n:
                raise RuntimeError("the X server closed the connection")
            done += n
        return data

    def grab(self):
        """The root window as binary PPM bytes (P6, maxval 255)."""
        self.socket.sendall(struct.pack("<BBHIhhHHI", GET_IMAGE, Z_PIXMAP, 5, self.root, 0, 0,
                                        self.width, self.height, 0xFFFFFFFF))
        self.sequence += 1
        while True:
            head = self._read(32)
            if head[0] == 0:
                raise RuntimeError("GetImage failed: X error %d" % head[1])
            body = self._read(struct.unpack_from("<I", head, 4)[0] * 4) if head[0] == 1 else b""
            if head[0] == 1 and struct.unpack_from("<H", head, 2)[0] == self.sequence & 0xFFFF:
                break  # events (which nothing asked for) are skipped
        # Pixels of 32 bits, little-endian 0x00RRGGBB: bytes B, G, R, unused.
        rgb = bytearray(self.width * self.height * 3)
        rgb[0::3], rgb[1::3], rgb[2::3] = body[2::4], body[1::4], body[0::4]
        return b"P6\n%d %d\n255\n" % (self.width, self.height) + rgb

    def close(self):
        self.socket.close()
