"""A real mosquitto broker for the push tests, set up as the developer guide's "Updating activities from
your server" says a production one should be: TLS with a CA, a server certificate and client
certificates made here with openssl, a password per device and per backend
(mosquitto_passwd), an acl_file that confines each device to its own tokens and each backend
to its own apps' topics, and persistence, so sessions and what they queued survive a restart.

Backends publish with mosquitto_pub and read feedback with mosquitto_sub, as a shell script of
an app's server would. Every process is started by pid and stopped by pid."""

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

from harness import artifacts
from harness.paths import LIVENESS

MOSQUITTO = "/usr/sbin/mosquitto"
TOOLS = [MOSQUITTO, "/usr/bin/mosquitto_pub", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_passwd", "/usr/bin/openssl"]


def feedback_topic(token):
    """Where the device answers pushes to `token`: the token's levels before its secret, the first
    32 hexadecimal digits of the secret's SHA-256, then `feedback` — as a backend works it out
    (`printf %s SECRET | sha256sum | cut -c1-32`). The name reveals no token."""
    prefix, secret = token.rsplit("/", 1)
    return "%s/%s/feedback" % (prefix, hashlib.sha256(secret.encode()).hexdigest()[:32])


def aps(event, timestamp, state=None, **fields):
    """A push's payload as a server publishes it: APNs' `aps` object as JSON text."""
    body = {"timestamp": timestamp, "event": event}
    if state is not None:
        body["content-state"] = state
    body.update(fields)
    return json.dumps({"aps": body})


def session_client(device, token, version="5"):
    """The client id of the session through which `device` receives pushes to `token`: one per
    app holding tokens on the device, `<device>/<app>` (the app is the token's third level from
    the end), so that each app's pushes wait in a queue of their own at the broker. Under MQTT
    3.1.1 `<device>-<app>` with every character of the app but letters and digits written `_XX`
    (NATS refuses `/` and `.` in a client id)."""
    app = token.split("/")[-2]
    if version == "3.1.1":
        return "%s-%s" % (device, "".join(c if c.isascii() and c.isalnum() else "".join("_%02X" % b for b in c.encode())
                                          for c in app))
    return "%s/%s" % (device, app)


def available():
    return all(os.access(tool, os.X_OK) for tool in TOOLS)


class HeldPorts:
    """Loopback ports for a server that binds them itself (mosquitto, nats-server), held from
    the moment they are chosen until `release`: each by a socket bound to it with SO_REUSEADDR
    that never listens. A port found free and closed again could be taken by another worker's
    server or an outgoing connection before ours binds it (or while ours restarts); Linux
    hands a bind to port 0 and a connection's ephemeral port only ports no socket is bound
    to, yet lets a server that sets SO_REUSEADDR on its listener, as mosquitto and Go's net
    package do, bind and listen beside a socket that does not listen."""

    def __init__(self, host="127.0.0.1"):
        self.host = host
        self.sockets = []

    def take(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, 0))
        self.sockets.append(s)
        return s.getsockname()[1]

    def release(self):
        for s in self.sockets:
            s.close()
        self.sockets = []


# The ACL of the developer guide's example, for the test apps of conftest.APPS: a device reads only the
# topics under its own user name and writes only their feedback; a backend writes only its
# app's topics and reads only their feedback.
ACL = """\
# Devices: user name = client id = the device level of their tokens.
pattern read island/%u/+/+
pattern write island/%u/+/+/feedback
# Every device reads every app's broadcast channels (their messages, not their records).
pattern read island/channels/+/+

# A backend writes its app's tokens and channels (island/channels/<app>/<id> matches the
# first line), reads their feedback, and alone reads and writes its channels' records: so only
# it creates them, and the per-app cap that `island channel create` counts holds.
user backend-coffee
topic write island/+/org.example.Coffee/+
topic read island/+/org.example.Coffee/+/feedback
topic readwrite island/channels/org.example.Coffee/#

user backend-flights
topic write island/+/org.example.Flights/+
topic read island/+/org.example.Flights/+/feedback
topic readwrite island/channels/org.example.Flights/#
"""


class Broker:
    """One mosquitto, restartable on the same ports and persistence."""

    def __init__(self, devices=("device-1",), backends=("backend-coffee", "backend-flights"), host="127.0.0.1",
                 netns=None, root=None, limits=""):
        """`limits`: global mosquitto options written before the listeners (the developer guide's
        `max_packet_size`, `max_queued_messages`, …)."""
        self.root = root or tempfile.mkdtemp(prefix="island-broker-", dir="/tmp")
        artifacts.keep(self.root)
        self.host = host
        self.netns = netns
        self.held = HeldPorts()
        self.port = self.held.take() if netns is None else 1883
        self.tls_port = self.held.take() if netns is None else 8883
        self.passwords = {name: "secret-" + name for name in list(devices) + list(backends)}
        self.process = None
        os.makedirs(os.path.join(self.root, "data"), exist_ok=True)
        self._certificates()
        passwd = self.path("passwd")
        open(passwd, "w").close()
        for user, password in sorted(self.passwords.items()):
            subprocess.run(["mosquitto_passwd", "-b", passwd, user, password], check=True, capture_output=True)
        for name in self.passwords:
            with open(self.password_file(name), "w") as f:
                f.write(self.passwords[name] + "\n")
            os.chmod(self.password_file(name), 0o600)
        with open(self.path("acl"), "w") as f:
            f.write(ACL)
        user = "root" if os.getuid() == 0 else os.environ.get("USER", "nobody")
        with open(self.path("mosquitto.conf"), "w") as f:
            f.write("""\
per_listener_settings true
user {user}
persistence true
persistence_location {root}/data/
autosave_interval 1
log_dest file {root}/mosquitto.log
log_type all
connection_messages true
{limits}
listener {port} {host}
allow_anonymous false
password_file {root}/passwd
acl_file {root}/acl

listener {tls_port} {host}
allow_anonymous false
password_file {root}/passwd
acl_file {root}/acl
cafile {root}/ca.crt
certfile {root}/server.crt
keyfile {root}/server.key
""".format(user=user, root=self.root, port=self.port, tls_port=self.tls_port, host=host, limits=limits))

    def path(self, name):
        return os.path.join(self.root, name)

    def password_file(self, user):
        return self.path("password-" + user)

    @property
    def ca(self):
        return self.path("ca.crt")

    @property
    def url(self):
        return "mqtts://%s:%d" % ("localhost" if self.host == "127.0.0.1" else self.host, self.tls_port)

    def _certificates(self):
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        run = lambda *args: subprocess.run(["openssl", *args], check=True, capture_output=True)
        run("req", "-x509", *key, "-keyout", self.path("ca.key"), "-out", self.path("ca.crt"), "-days", "2",
            "-subj", "/CN=Island test CA")
        with open(self.path("server.ext"), "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1,IP:%s\n" % self.host)
        run("req", *key, "-keyout", self.path("server.key"), "-out", self.path("server.csr"), "-subj", "/CN=localhost")
        run("x509", "-req", "-in", self.path("server.csr"), "-CA", self.path("ca.crt"), "-CAkey", self.path("ca.key"),
            "-CAcreateserial", "-out", self.path("server.crt"), "-days", "2", "-extfile", self.path("server.ext"))

    def push_config(self, device="device-1", keepalive=None):
        """The [Push] section of a device's islandd.conf."""
        text = ("[Push]\nBroker=%s\nClientID=%s\nCAFile=%s\nUsername=%s\nPasswordFile=%s\n"
                % (self.url, device, self.ca, device, self.password_file(device)))
        if keepalive:
            text += "KeepAliveSec=%s\n" % keepalive
        return text

    def device(self, make_daemon, name, config=""):
        """A daemon (from conftest's `make_daemon`) that is device `name` of this broker, once
        it says it is connected; `d.device` and `d.broker` name them."""
        from harness.processes import wait_for
        d = make_daemon(self.push_config(name) + config)
        d.device, d.broker = name, self
        wait_for(lambda: "connected to the push broker" in d.log(), timeout=LIVENESS,
                 message="the daemon's broker connection (%s)" % d.log()[-600:])
        return d

    def _prefix(self):
        return ["ip", "netns", "exec", self.netns] if self.netns else []

    def start(self, timeout=LIVENESS):
        log = open(self.path("stdout.log"), "a")
        self.process = subprocess.Popen(self._prefix() + [MOSQUITTO, "-c", self.path("mosquitto.conf")],
                                        stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("mosquitto exited: %s" % self.log())
            if self._listening():
                return self
            time.sleep(0.02)
        raise RuntimeError("mosquitto did not listen within %ss: %s" % (timeout, self.log()))

    def _listening(self):
        if self.netns:
            result = subprocess.run(["ip", "netns", "exec", self.netns, "ss", "-Hltn", "sport = :%d" % self.tls_port],
                                    capture_output=True, text=True)
            return bool(result.stdout.strip())
        try:
            with socket.create_connection((self.host, self.tls_port), timeout=0.2):
                return True
        except OSError:
            return False

    def set_acl(self, text):
        """Writes the acl_file anew; mosquitto reads it at its start and at `reload`."""
        with open(self.path("acl"), "w") as f:
            f.write(text)

    def reload(self):
        """SIGHUP: mosquitto reads its acl_file again and keeps its clients connected."""
        self.process.send_signal(signal.SIGHUP)

    def stop(self):
        """SIGTERM (mosquitto saves its sessions) and wait."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def remove(self):
        self.stop()
        self.held.release()
        artifacts.remove(self.root)

    def log(self, tail=4000):
        try:
            with open(self.path("mosquitto.log")) as f:
                return f.read()[-tail:] if tail else f.read()
        except OSError:
            return ""

    # A backend's tools.

    def island(self, user, *args, check=True, timeout=LIVENESS):
        """`island` as `user`'s backend (`island channel …`, `island push …`): through the plain
        listener, with the backend's password."""
        from harness.paths import ISLAND
        result = subprocess.run(self._prefix() + [ISLAND, *args, "--broker", "mqtt://%s:%d" % (self.host, self.port),
                                                  "--username", user, "--password-file", self.password_file(user)],
                                capture_output=True, text=True, timeout=timeout)
        if check:
            assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
        return result

    def credentials(self, user):
        return ["-u", user, "-P", self.passwords[user]]

    def publish(self, user, topic, payload, qos=1):
        """mosquitto_pub as `user`: returns once the broker acknowledged (QoS 1)."""
        port = self.port
        result = subprocess.run(self._prefix() + ["mosquitto_pub", "-h", self.host, "-p", str(port), *self.credentials(user),
                                                  "-q", str(qos), "-t", topic, "-m", payload, "-i", "%s-pub-%d" % (user, os.getpid())],
                                capture_output=True, text=True, timeout=LIVENESS)
        assert result.returncode == 0, result.stderr
        return result

    def publish_lines(self, user, topic, payloads, qos=1):
        """Several messages through one connection (mosquitto_pub -l), so they reach the
        broker in order; returns once all are acknowledged."""
        result = subprocess.run(self._prefix() + ["mosquitto_pub", "-h", self.host, "-p", str(self.port), *self.credentials(user),
                                                  "-q", str(qos), "-t", topic, "-l", "-i", "%s-lines-%d" % (user, os.getpid())],
                                input="".join(p + "\n" for p in payloads), capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result

    def subscriber(self, user, *topics, verbose=False, fresh=False):
        """With `verbose`, `wait_with_topics` also says on which topic each message came; with
        `fresh`, what the broker retained before (revocation notices) is not read."""
        return Subscriber(self, user, topics, verbose, fresh)

    def subscriptions(self, client, topic):
        """How many times the broker has logged `client` subscribing to `topic` (its
        `client qos topic` line, written as the subscription takes effect)."""
        return len(re.findall(r": %s [012] %s$" % (re.escape(client), re.escape(topic)), self.log(tail=None), re.M))

    def wait_subscribed(self, client, topic, count=1, timeout=LIVENESS):
        """Returns once the broker has taken `client`'s subscription to `topic` (`count` times):
        from then on what is published there reaches the client. A SUBSCRIBE is not waited
        for by whoever sends it (islandd's Request returns before its SUBACK), so a push
        published right after a token was made could otherwise arrive before it and be lost."""
        deadline = time.monotonic() + timeout
        while self.subscriptions(client, topic) < count:
            if time.monotonic() > deadline:
                raise TimeoutError("%s not subscribed to %s within %ss: %s" % (client, topic, timeout, self.log()))
            time.sleep(0.02)


class Subscriber:
    """mosquitto_sub as a backend reading feedback: every message, one JSON per line, collected
    by a thread; ready once the broker acknowledged the subscription (its log says so)."""

    def __init__(self, broker, user, topics, verbose=False, fresh=False):
        self.verbose = verbose
        self.messages = []
        self.lock = threading.Lock()
        client = "%s-sub-%d-%d" % (user, os.getpid(), id(self))
        self.process = subprocess.Popen(
            broker._prefix() + ["mosquitto_sub", "-h", broker.host, "-p", str(broker.port), *broker.credentials(user),
                                "-q", "1", *[a for t in topics for a in ("-t", t)], "-i", client, *(["-v"] if verbose else []), *(["-R"] if fresh else [])],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        for topic in topics:
            # The ACL may refuse it (then the broker still logs it, and sends nothing).
            broker.wait_subscribed(client, topic)

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.messages.append(line.rstrip("\n"))

    def wait(self, count=1, timeout=LIVENESS):
        return [message for _, message in self.wait_with_topics(count, timeout)]

    def wait_with_topics(self, count=1, timeout=LIVENESS):
        """(topic, message) pairs; the topic is None unless the subscriber is verbose."""
        import json
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    if not self.verbose:
                        return [(None, json.loads(m)) for m in self.messages]
                    return [(m.split(" ", 1)[0], json.loads(m.split(" ", 1)[1])) for m in self.messages]
            time.sleep(0.02)
        raise TimeoutError("%d of %d feedback messages within %ss: %s" % (len(self.messages), count, timeout, self.messages))

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _string(text):
    data = text.encode() if isinstance(text, str) else text
    return len(data).to_bytes(2, "big") + data


class Publisher:
    """A backend's MQTT 3.1.1 connection, made once and kept: each `publish` is one PUBLISH at QoS 1
    on it, returning once the broker acknowledged it — a server that pushes the moment it has a
    token, with no connection to set up in between (mosquitto_pub takes milliseconds to)."""

    def __init__(self, broker, user):
        self.sock = socket.create_connection((broker.host, broker.port), timeout=LIVENESS)
        body = (_string("MQTT") + bytes([4, 0xC2]) + (60).to_bytes(2, "big")  # user, password, clean session
                + _string("%s-kept-%d" % (user, os.getpid())) + _string(user) + _string(broker.passwords[user]))
        self.sock.sendall(b"\x10" + _varint(len(body)) + body)
        connack = self._read(4)
        assert connack[0] == 0x20 and connack[3] == 0, "the broker refused %s: %r" % (user, connack)
        self.packet_id = 0

    def publish(self, topic, payload):
        self.packet_id = self.packet_id % 0xFFFF + 1
        body = _string(topic) + self.packet_id.to_bytes(2, "big") + payload.encode()
        self.sock.sendall(b"\x32" + _varint(len(body)) + body)
        puback = self._read(4)
        assert puback[0] == 0x40 and int.from_bytes(puback[2:4], "big") == self.packet_id, puback

    def _read(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            data += chunk
        return data

    def close(self):
        self.sock.close()


class HostileBroker:
    """A hand-written MQTT broker on loopback (plain TCP, no credentials) that misbehaves as
    told: the first `oversized` connections of each client id get, right after their CONNACK,
    a PUBLISH whose header announces `oversized_bytes` (140 MiB by default: more than a device's
    whole memory budget) — streamed from one small buffer, never held here — whatever Maximum
    Packet Size the client asked for. Later connections get an honest broker's minimum: CONNACK,
    SUBACK, PUBACK, PINGRESP, and the messages `push` sends; what the device publishes (its
    feedback) is kept in `published`. MQTT 5 and 3.1.1, as each client connects."""

    def __init__(self, oversized=1, oversized_bytes=140 << 20):
        self.oversized = oversized
        self.oversized_bytes = oversized_bytes
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.lock = threading.Lock()
        self.connections = {}      # client id -> number of CONNECTs
        self.sent_oversized = {}   # client id -> oversized PUBLISHes begun
        self.subscriptions = {}    # topic -> (socket, protocol level)
        self.published = []        # (topic, payload bytes) from clients
        self.refusing = {}         # topic prefix -> SUBSCRIBEs still to refuse (None: all)
        self.refused = []          # topics refused, in order
        self.packet_id = 0
        self.send_locks = {}
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self):
        return "mqtt://127.0.0.1:%d" % self.port

    def push_config(self, device):
        return "[Push]\nBroker=%s\nClientID=%s\n" % (self.url, device)

    def close(self):
        self.closed = True
        self.server.close()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _read_exactly(conn, count):
        data = b""
        while len(data) < count:
            chunk = conn.recv(count - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _read_packet(self, conn):
        first = self._read_exactly(conn, 1)[0]
        length, shift = 0, 0
        for _ in range(4):
            byte = self._read_exactly(conn, 1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        # Clients' packets here are small (a CONNECT, a SUBSCRIBE, feedback).
        if length > 1 << 20:
            raise EOFError
        return first, self._read_exactly(conn, length)

    def _serve(self, conn):
        try:
            with conn:
                first, body = self._read_packet(conn)
                if first >> 4 != 1:
                    return
                level = body[6]
                index = 10
                if level == 5:
                    props, index = self._skip_varint_block(body, index)
                client = body[index + 2:index + 2 + int.from_bytes(body[index:index + 2], "big")].decode()
                with self.lock:
                    self.connections[client] = self.connections.get(client, 0) + 1
                    hostile = self.sent_oversized.get(client, 0) < self.oversized
                    if hostile:
                        self.sent_oversized[client] = self.sent_oversized.get(client, 0) + 1
                conn.sendall(b"\x20\x03\x00\x00\x00" if level == 5 else b"\x20\x02\x00\x00")
                if hostile:
                    self._send_oversized(conn, level)
                    return
                self._honest(conn, level)
        except (EOFError, OSError):
            pass

    @staticmethod
    def _skip_varint_block(body, index):
        length, shift = 0, 0
        while True:
            byte = body[index]
            index += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        return body[index:index + length], index + length

    def _send_oversized(self, conn, level):
        topic = _string("island/oversized")
        header = topic + (b"\x00" if level == 5 else b"")
        total = self.oversized_bytes
        conn.sendall(b"\x30" + _varint(total) + header)
        chunk = bytes(1 << 20)
        left = total - len(header)
        while left > 0:
            conn.sendall(chunk[:min(left, len(chunk))])
            left -= min(left, len(chunk))

    def _send(self, conn, data):
        with self.lock:
            lock = self.send_locks.setdefault(id(conn), threading.Lock())
        with lock:
            conn.sendall(data)

    def _honest(self, conn, level):
        while True:
            first, body = self._read_packet(conn)
            kind = first >> 4
            if kind == 8:  # SUBSCRIBE
                packet_id = body[:2]
                index = 2
                if level == 5:
                    _, index = self._skip_varint_block(body, index)
                topics = []
                while index < len(body):
                    n = int.from_bytes(body[index:index + 2], "big")
                    topics.append(body[index + 2:index + 2 + n].decode())
                    index += 2 + n + 1
                codes = b""
                with self.lock:
                    for topic in topics:
                        prefix = next((p for p in self.refusing if topic.startswith(p)), None)
                        if prefix is not None and self.refusing[prefix] != 0:
                            if self.refusing[prefix] is not None:
                                self.refusing[prefix] -= 1
                            self.refused.append(topic)
                            # MQTT 5 says why (0x87: not authorized); 3.1.1 has 0x80 alone.
                            codes += b"\x87" if level == 5 else b"\x80"
                        else:
                            self.subscriptions[topic] = (conn, level)
                            codes += b"\x01"
                rest = packet_id + (b"\x00" if level == 5 else b"") + codes
                self._send(conn, b"\x90" + _varint(len(rest)) + rest)
            elif kind == 10:  # UNSUBSCRIBE
                rest = body[:2] + (b"\x00" + b"\x00" * 1 if level == 5 else b"")
                self._send(conn, b"\xb0" + _varint(len(rest)) + rest)
            elif kind == 3:  # PUBLISH from the client
                qos = (first >> 1) & 3
                n = int.from_bytes(body[:2], "big")
                topic = body[2:2 + n].decode()
                index = 2 + n
                packet_id = None
                if qos:
                    packet_id = body[index:index + 2]
                    index += 2
                if level == 5:
                    _, index = self._skip_varint_block(body, index)
                with self.lock:
                    self.published.append((topic, body[index:]))
                if qos == 1:
                    self._send(conn, b"\x40\x02" + packet_id)
            elif kind == 12:  # PINGREQ
                self._send(conn, b"\xd0\x00")
            elif kind == 14:  # DISCONNECT
                return

    def subscribed(self, topic):
        with self.lock:
            return topic in self.subscriptions

    def refuse(self, prefix, times=None):
        """Refuses SUBSCRIBEs to topics starting with `prefix`: the next `times`, or all."""
        with self.lock:
            self.refusing[prefix] = times

    def drop(self, topic):
        """Closes the connection subscribed to `topic`, forgetting its subscriptions: its client
        reconnects and subscribes again."""
        with self.lock:
            conn, _ = self.subscriptions[topic]
            for t in [t for t, (c, _) in self.subscriptions.items() if c is conn]:
                del self.subscriptions[t]
        conn.shutdown(socket.SHUT_RDWR)

    def push(self, topic, payload):
        """A QoS 1 PUBLISH of `payload` to the client subscribed to `topic`."""
        with self.lock:
            conn, level = self.subscriptions[topic]
            self.packet_id = self.packet_id % 65535 + 1
            packet_id = self.packet_id
        data = payload.encode() if isinstance(payload, str) else payload
        body = _string(topic) + packet_id.to_bytes(2, "big") + (b"\x00" if level == 5 else b"") + data
        self._send(conn, b"\x32" + _varint(len(body)) + body)

    def feedback(self, topic):
        import json
        with self.lock:
            return [json.loads(p) for t, p in self.published if t == topic]
