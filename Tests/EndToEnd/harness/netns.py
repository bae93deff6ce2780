"""Two network namespaces joined by a lossy, slow link, for tests that put a broker on one
side and islandd on the other.

The link is a veth pair with `tc netem` delay and loss on both ends when the kernel has the
netem qdisc. Where it has not (sch_netem is a module many minimal kernels leave out), the same
is made in user space: a TUN device in each namespace, and a thread that carries each packet
from one to the other after the delay, dropping the given share — a packet-level emulator, so
TCP sees real loss and retransmits, as it would on a bad network.

Needs root and `ip`; `Network.unavailable()` says why it cannot be made, for a skip."""

import ctypes
import fcntl
import heapq
import os
import random
import select
import struct
import subprocess
import threading
import time

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def _ip(*args, netns=None, check=True):
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return subprocess.run(prefix + ["ip", *args], capture_output=True, text=True, check=check)


def netem_available():
    """Whether the kernel has the netem qdisc: tried on a throwaway veth pair."""
    name = "isl-probe%d" % os.getpid()
    if _ip("link", "add", name, "type", "veth", "peer", "name", name + "p", check=False).returncode != 0:
        return False
    try:
        return subprocess.run(["tc", "qdisc", "add", "dev", name, "root", "netem", "delay", "1ms"],
                              capture_output=True).returncode == 0
    finally:
        _ip("link", "del", name, check=False)


class Network:
    """Namespaces `broker` (10.77.N.1) and `device` (10.77.N.2) with a link of `delay` seconds
    each way and `loss` (0–1) of the packets dropped each way."""

    def __init__(self, delay=0.02, loss=0.05):
        self.delay, self.loss = delay, loss
        n = os.getpid() % 200 + 20
        self.broker = "isl-b%d" % os.getpid()
        self.device = "isl-d%d" % os.getpid()
        self.broker_address = "10.77.%d.1" % n
        self.device_address = "10.77.%d.2" % n
        self.mode = None
        self._stop = threading.Event()
        self._thread = None
        self._fds = []
        # Packets the user-space relay carried and dropped (netem keeps its own counts).
        self.carried = 0
        self.dropped = 0

    @staticmethod
    def unavailable():
        if os.getuid() != 0:
            return "network namespaces need root"
        if subprocess.run(["which", "ip", "tc"], capture_output=True).returncode != 0:
            return "ip and tc (iproute2) are not installed"
        if not os.path.exists("/dev/net/tun") and not netem_available():
            return "the kernel has neither the netem qdisc nor /dev/net/tun"
        probe = "isl-probe-ns%d" % os.getpid()
        if _ip("netns", "add", probe, check=False).returncode != 0:
            return "ip netns add failed (no network namespaces here)"
        _ip("netns", "del", probe, check=False)
        return None

    def __enter__(self):
        for ns in (self.broker, self.device):
            _ip("netns", "add", ns)
            _ip("link", "set", "lo", "up", netns=ns)
        try:
            if netem_available():
                self._veth_with_netem()
            else:
                self._tun_relay()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _veth_with_netem(self):
        self.mode = "veth + tc netem"
        a, b = "isl-vb%d" % os.getpid(), "isl-vd%d" % os.getpid()
        _ip("link", "add", a, "type", "veth", "peer", "name", b)
        for name, ns, address in ((a, self.broker, self.broker_address), (b, self.device, self.device_address)):
            _ip("link", "set", name, "netns", ns)
            _ip("addr", "add", address + "/24", "dev", name, netns=ns)
            _ip("link", "set", name, "up", netns=ns)
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", name, "root", "netem",
                            "delay", "%dms" % (self.delay * 1000), "loss", "%g%%" % (self.loss * 100)], check=True)

    def _tun_relay(self):
        self.mode = "TUN relay in user space (this kernel has no netem qdisc)"
        ends = []
        for ns, address, peer in ((self.broker, self.broker_address, self.device_address),
                                  (self.device, self.device_address, self.broker_address)):
            name = "isl-t%d" % len(ends)
            fd = self._open_tun_in(ns, name)
            self._fds.append(fd)
            _ip("addr", "add", address, "peer", peer, "dev", name, netns=ns)
            _ip("link", "set", name, "up", netns=ns)
            ends.append(fd)
        self._thread = threading.Thread(target=self._relay, args=(ends[0], ends[1]), daemon=True)
        self._thread.start()

    @staticmethod
    def _open_tun_in(ns, name):
        """A TUN device made in namespace `ns`: setns(2) applies to the calling thread alone,
        so a thread of its own enters the namespace, attaches the device and ends; the
        descriptor keeps the device where it was made."""
        result = {}

        def attach():
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                with open("/run/netns/" + ns) as handle:
                    if libc.setns(handle.fileno(), CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns")
                fd = os.open("/dev/net/tun", os.O_RDWR)
                fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
                os.set_blocking(fd, False)
                result["fd"] = fd
            except BaseException as error:
                result["error"] = error

        thread = threading.Thread(target=attach)
        thread.start()
        thread.join()
        if "error" in result:
            raise result["error"]
        return result["fd"]

    def _relay(self, a, b):
        """Carries packets a→b and b→a after `delay`, dropping `loss` of them."""
        pending = []  # (due, sequence, destination, packet)
        sequence = 0
        while not self._stop.is_set():
            timeout = 0.05 if not pending else max(0.0, min(0.05, pending[0][0] - time.monotonic()))
            readable, _, _ = select.select([a, b], [], [], timeout)
            now = time.monotonic()
            for source in readable:
                while True:
                    try:
                        packet = os.read(source, 65536)
                    except BlockingIOError:
                        break
                    except OSError:
                        return
                    if random.random() < self.loss:
                        self.dropped += 1
                        continue
                    self.carried += 1
                    sequence += 1
                    heapq.heappush(pending, (now + self.delay, sequence, b if source == a else a, packet))
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                _, _, destination, packet = heapq.heappop(pending)
                try:
                    os.write(destination, packet)
                except OSError:
                    pass

    def packets(self):
        """(carried, dropped) on the broker's side of the link so far."""
        if self.mode and self.mode.startswith("veth"):
            out = subprocess.run(["ip", "netns", "exec", self.broker, "tc", "-s", "qdisc", "show"], capture_output=True,
                                 text=True).stdout
            sent = dropped = 0
            for line in out.splitlines():
                words = line.split()
                if words[:1] == ["Sent"]:
                    sent += int(words[3])
                    dropped += int(words[6].rstrip(","))
            return sent, dropped
        return self.carried, self.dropped

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)
        for fd in self._fds:
            os.close(fd)
        for ns in (self.broker, self.device):
            _ip("netns", "del", ns, check=False)
        return False
