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

Everything runs on loopback with temporary files; only processes it started are signalled.
Needs mosquitto, libmosquitto-dev, gcc and the shared harness (../shared/bench, --harness).
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

    def stop(self):
        bench.stop(self.p)


class Device:
    """One islandd connected to the broker as its own device, with an activity and its token."""

    def __init__(self, binary, tmp, name, broker, env):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        self.socket = os.path.join(self.dir, 's.sock')
        self.log = os.path.join(self.dir, 'islandd.log')
        config = os.path.join(self.dir, 'islandd.conf')
        with open(bench.CONF) as f:
            base = f.read()
        with open(config, 'w') as f:
            f.write(base + '\n[Push]\nBroker=mqtt://127.0.0.1:%d\nClientID=%s\n' % (broker.port, name))
        self.p = bench.spawn([binary, '--socket', self.socket, '--state-dir', os.path.join(self.dir, 'state'),
                              '--config', config], self.log, env=env)
        bench.wait_for(lambda: os.path.exists(self.socket) and 'connected to the push broker' in bench.tail(self.log, 100000),
                       30, name + ' connected to the broker')
        self.name = name
        self.new_activity()

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

    def stop(self):
        bench.stop(self.p)


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
    p.add_argument('--quick', action='store_true', help='a smoke run: 1 latency run of 1 s, 5 devices for 2 s')
    a = p.parse_args()
    if a.quick:
        a.seconds, a.runs, a.devices, a.fanout_seconds = 1, 1, 5, 2
    for tool in ('mosquitto', 'mosquitto_sub', 'gcc'):
        if not shutil.which(tool) and not os.path.exists('/usr/sbin/' + tool):
            sys.exit('push.py needs %s (scripts/install-deps.sh)' % tool)
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
        broker = Broker(tmp)
        log('latency: %d runs of %.0f s at %.0f pushes/s' % (a.runs, a.seconds, a.rate))
        device = Device(islandd, tmp, 'latency-device', broker, env)
        result['latency'] = [latency_run(a, client, harness, broker, device, tmp, i) for i in range(a.runs)]
        device.stop()
        log('fan-out: %d devices, %.1f updates/s each for %.0f s' % (a.devices, a.fanout_rate, a.fanout_seconds))
        devices = [Device(islandd, tmp, 'device-%02d' % i, broker, env) for i in range(a.devices)]
        result['fanout'] = fanout_run(a, client, broker, devices, tmp)
        for d in devices:
            d.stop()
        broker.stop()
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
        m['date'], m['nproc'], m['cpu'], m['mem'], m['kernel'], r['load_before'], r['load_after'], r['islandd'], r['commit']), '',
        '| run | received (islandd / broker) | islandd p50 / p99 (µs) | broker p50 / p99 (µs) | ratio p50 / p99 | target ≤ 3× |',
        '|---|---|---|---|---|---|']
    for i, run in enumerate(r['latency']):
        isl, brk = run['islandd'], run['broker']
        r50 = isl['p50_us'] / brk['p50_us'] if brk['p50_us'] else float('nan')
        r99 = isl['p99_us'] / brk['p99_us'] if brk['p99_us'] else float('nan')
        met = 'met' if r50 <= 3 and r99 <= 3 else 'missed'
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
    return '\n'.join(lines)


if __name__ == '__main__':
    main()
