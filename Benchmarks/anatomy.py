#!/usr/bin/env python3
"""Where an update's time goes, step by step, from the kernel's own trace.

The rates of Benchmarks/bench.py say how fast; this says what an update waited for. It starts
islandd (release, as scripts/build-release.sh builds it) on a temporary socket and state with
Benchmarks/islandd-bench.conf, and the floor relay of the shared harness for comparison, with
one presenter (the harness's vl-sub) and the harness's producer (vl-pub), as the latency and
throughput runs of bench.py do, and records the scheduler's wake-ups and switches and the
system calls of those processes in a tracefs instance of its own (the kernel's ring buffer,
read after the run: `perf record` would keep a CPU busy, and the runs have two).

--mode latency (the default): one call in flight (`--producer oneway` or `reply`) at
2,000 updates/s. For each update that came alone, the microseconds after the producer's
write(2) at which the daemon's loop (the relay) was woken, ran, read the call, and wrote the
presenter's delta, and the presenter was woken, ran and had the delta; printed as the 10th,
50th and 90th percentiles, for islandd and the floor. Then where the presenter waited once
woken: on which CPU (the one that woke it, or the other), and what ran there before it.

--mode throughput: a window of 64 calls (`reply`), as fast as they are answered. The
commits (one `fdatasync` each) and the updates per commit; the `fdatasync`'s duration; the
share of the run that the event loop spent asleep in `epoll_wait` and that the store's
writer spent in its `fdatasync`; the rate. A loop asleep through the writer's syncs, and a
writer asleep through the loop's turns, is a pipeline that does one thing at a time.

    sudo Benchmarks/anatomy.py [--islandd BIN] [--harness DIR] [--mode latency|throughput]
                               [--producer oneway|reply] [--count N] [--no-floor] [--keep DIR]

Needs root (tracefs). Only processes it started are ever signalled.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the benchmark's processes, harness and template)

TRACEFS = '/sys/kernel/tracing'
SYSCALL_EVENTS = ('sys_enter_write', 'sys_enter_writev', 'sys_enter_read', 'sys_exit_read', 'sys_enter_epoll_wait',
                  'sys_exit_epoll_wait', 'sys_exit_recvfrom', 'sys_enter_futex', 'sys_enter_pwrite64',
                  'sys_enter_fdatasync', 'sys_exit_fdatasync')
LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): ([a-z_0-9]+)[:(]? ?(.*)$')


def log(message):
    print('anatomy: ' + message, file=sys.stderr, flush=True)


class Trace:
    """A tracefs instance of our own: the processes given (and the threads they start), the
    scheduler's wake-ups and switches, and SYSCALL_EVENTS; timestamps on CLOCK_MONOTONIC."""

    def __init__(self):
        self.path = os.path.join(TRACEFS, 'instances', 'island-anatomy-%d' % os.getpid())
        os.mkdir(self.path)
        self.set('buffer_size_kb', '65536')
        self.set('trace_clock', 'mono')
        self.set('options/event-fork', '1')

    def set(self, name, value):
        with open(os.path.join(self.path, name), 'w') as f:
            f.write(value)

    def start(self, pids):
        self.set('set_event_pid', ' '.join(str(p) for p in pids))
        for event in SYSCALL_EVENTS:
            self.set('events/syscalls/%s/enable' % event, '1')
        self.set('events/sched/sched_switch/enable', '1')
        self.set('events/sched/sched_waking/enable', '1')
        self.set('tracing_on', '1')

    def stop(self):
        self.set('tracing_on', '0')
        events = []
        with open(os.path.join(self.path, 'trace')) as f:
            for line in f:
                m = LINE.match(line)
                if m:
                    events.append((float(m.group(4)) * 1e6, int(m.group(2)), int(m.group(3)), m.group(5), m.group(6)))
        return events

    def close(self, keep=None):
        try:
            self.set('tracing_on', '0')
            if keep:
                shutil.copy(os.path.join(self.path, 'trace'), keep)
            os.rmdir(self.path)
        except OSError as error:
            log('could not remove %s: %s' % (self.path, error))


def woken(rest):
    return int(re.search(r'\bpid=(\d+)', rest).group(1))


def switched_to(rest):
    return int(re.search(r'next_pid=(\d+)', rest).group(1))


def percentiles(values):
    values = sorted(values)
    if not values:
        return '–'
    return '%6.1f %6.1f %6.1f' % (values[len(values) // 10], statistics.median(values), values[9 * len(values) // 10])


def latency_steps(events, producer, loop, presenter):
    """For each update the producer's write began alone (none in the 300 µs before), the µs
    after that write of each step's first occurrence; and where the presenter waited."""
    starts = [i for i, e in enumerate(events) if e[1] == producer and e[3] == 'sys_write']
    steps, waits = [], {}
    for n, i in enumerate(starts):
        t0 = events[i][0]
        if n and t0 - events[starts[n - 1]][0] < 300:
            continue
        end = starts[n + 1] if n + 1 < len(starts) else len(events)
        seen, loop_cpu, woke_at = {}, None, None
        for t, pid, cpu, name, rest in events[i:end]:
            key = None
            if name == 'sched_waking' and woken(rest) == loop:
                key = 'loop woken'
            elif name == 'sched_switch' and switched_to(rest) == loop:
                key = 'loop runs'
            elif pid == loop and name == 'sys_read' and '->' in rest:
                key = 'call read'
            elif pid == loop and name in ('sys_write', 'sys_writev') and 'delta written' not in seen:
                key, loop_cpu = 'delta written', cpu
            elif name == 'sched_waking' and woken(rest) == presenter and woke_at is None:
                key, woke_at = 'presenter woken', t
            elif name == 'sched_switch' and switched_to(rest) == presenter and woke_at is not None:
                if 'presenter runs' not in seen:
                    # The CPU it ran on (sched_waking's target_cpu is the one it last ran on).
                    before = re.search(r'prev_comm=(.*?) prev_pid', rest).group(1)
                    kind = ('the loop\'s CPU' if cpu == loop_cpu else 'the other CPU', before)
                    waits.setdefault(kind, []).append(t - woke_at)
                key = 'presenter runs'
            elif pid == presenter and name == 'sys_recvfrom':
                key = 'delta received'
            if key and key not in seen:
                seen[key] = t - t0
        steps.append(seen)
    return steps, waits


def print_latency(title, steps, waits, p50):
    print('%s: %d updates that came alone; the presenter\'s own p50 %s µs' % (title, len(steps), p50))
    print('  µs after the producer\'s write(2)      p10    p50    p90')
    for key in ('loop woken', 'loop runs', 'call read', 'delta written', 'presenter woken', 'presenter runs', 'delta received'):
        print('  %-36s %s' % (key, percentiles([s[key] for s in steps if key in s])))
    print('  where the presenter ran once woken, and what ran there before it (updates; median µs waited):')
    for (cpu, before), values in sorted(waits.items(), key=lambda kv: -len(kv[1]))[:6]:
        print('    on %-16s after %-18s %5d; %6.1f' % (cpu, before[:18], len(values), statistics.median(values)))


def print_throughput(title, events, loop, count, seconds):
    t0, t1 = events[0][0], events[-1][0]
    syncs, asleep, sync_time, entered = [], 0.0, 0.0, {}
    for t, pid, cpu, name, rest in events:
        if pid == loop and name == 'sys_epoll_wait':
            if '->' in rest and pid in entered:
                asleep += t - entered.pop(pid)
            elif '->' not in rest:
                entered[pid] = t
        if pid != loop and name == 'sys_fdatasync':
            if '->' not in rest:
                entered[('sync', pid)] = t
            elif ('sync', pid) in entered:
                d = t - entered.pop(('sync', pid))
                syncs.append(d)
                sync_time += d
    span = t1 - t0
    print('%s: %d updates in %.2f s, %.0f acknowledged/s' % (title, count, seconds, count / seconds))
    if syncs:
        print('  commits (fdatasync): %d, %.1f updates each; fdatasync µs p10/p50/p90 %s' % (
            len(syncs), count / len(syncs), percentiles(syncs)))
    else:
        print('  commits (fdatasync): none')
    print('  share of the traced %.0f ms: the loop asleep in epoll_wait %.0f%%, the writer in fdatasync %.0f%%' % (
        span / 1000, 100 * asleep / span, 100 * sync_time / span))


def run(name, cmd, socket_path, harness, a, tmp, trace, pub_method, sub_method, pub_params):
    env = bench.base_env(tmp)
    daemon = bench.spawn(cmd, os.path.join(tmp, name + '.log'), env=env)
    try:
        bench.wait_for(lambda: bench.accepting(socket_path), 60, name + "'s socket")
        bin_dir = os.path.join(harness, 'bin')
        ready = os.path.join(tmp, name + '.ready')
        sub = bench.spawn([os.path.join(bin_dir, 'vl-sub'), '--socket', socket_path, '--method', sub_method,
                           '--timeout', '600', '--ready', ready, '--warmup', '0', '--label', 'sub'],
                          os.path.join(tmp, name + '-sub.out'))
        bench.wait_for(lambda: os.path.exists(ready), 30, 'the presenter')
        if pub_params:
            # One update first: the store's writer thread is there before the trace starts.
            warm = bench.Conn(socket_path)
            bench.call(warm, pub_method, json.loads(pub_params.replace('@PAYLOAD@', '{"phase":"warm"}')))
            warm.close()
        time.sleep(0.5)  # whatever subscribing and the first update set off is over
        threads = [int(t) for t in os.listdir('/proc/%d/task' % daemon.pid)]
        loop = next((t for t in threads if open('/proc/%d/task/%d/comm' % (daemon.pid, t)).read().startswith('NIO-ELT')),
                    daemon.pid)
        throughput = a.mode == 'throughput'
        pub = [os.path.join(bin_dir, 'vl-pub'), '--socket', socket_path, '--method', pub_method,
               '--mode', 'reply' if throughput else a.producer, '--window', '64' if throughput else '1',
               '--rate', '1000000' if throughput else '2000', '--count', str(a.count),
               '--duration', '600', '--warmup', '0', '--drain-timeout', '10', '--label', 'pub']
        if pub_params:
            pub += ['--params', pub_params]
        producer = subprocess.Popen(pub, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        trace.start(threads + [sub.pid, producer.pid])
        started = time.monotonic()
        producer.wait(600)
        seconds = time.monotonic() - started
        events = trace.stop()
        sub.wait(60)
        with open(os.path.join(tmp, name + '-sub.out')) as f:
            summary = [json.loads(line) for line in f if line.startswith('{')][-1:]
        p50 = summary[0].get('p50_us', '–') if summary else '–'
        if throughput:
            print_throughput(name, events, loop, a.count, seconds)
        else:
            steps, waits = latency_steps(events, producer.pid, loop, sub.pid)
            print_latency('%s, %s' % (name, a.producer), steps, waits, p50)
    finally:
        bench.stop(daemon)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--islandd', help='the islandd to trace (default: build it with scripts/build-release.sh)')
    ap.add_argument('--harness', default=os.path.join(REPO, '..', 'shared', 'bench'), help='the shared harness (default ../shared/bench)')
    ap.add_argument('--mode', choices=('latency', 'throughput'), default='latency',
                    help='one call in flight at 2,000/s (default), or a window of 64 as fast as answered')
    ap.add_argument('--producer', choices=('oneway', 'reply'), default='oneway', help='the latency run\'s calls (default oneway)')
    ap.add_argument('--count', type=int, help='updates (default 4,000 for latency, 100,000 for throughput)')
    ap.add_argument('--no-floor', action='store_true', help='trace islandd only')
    ap.add_argument('--keep', help='copy the raw traces into this directory')
    a = ap.parse_args()
    a.count = a.count or (100000 if a.mode == 'throughput' else 4000)
    if os.geteuid() != 0 or not os.path.isdir(os.path.join(TRACEFS, 'instances')):
        sys.exit('anatomy: needs root and tracefs at %s (the kernel\'s trace)' % TRACEFS)
    binary = a.islandd
    if not binary:
        bindir = subprocess.run([os.path.join(REPO, 'scripts', 'build-release.sh'), 'islandd'], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        binary = os.path.join(bindir, 'islandd')
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='island-anatomy-')
    try:
        islandd = os.path.join(tmp, 'islandd')
        shutil.copy2(binary, islandd)
        harness = bench.build_harness(os.path.abspath(a.harness), tmp)
        template, activity = bench.prepare_template(islandd, tmp, bench.base_env(tmp))
        sides = [] if a.no_floor else ['floor']
        for side in sides + ['islandd']:
            trace = Trace()
            try:
                if side == 'floor':
                    socket_path = os.path.join(tmp, 'floor.sock')
                    run('floor relay', [os.path.join(harness, 'bin', 'floor-relay'), '--socket', socket_path], socket_path,
                        harness, a, tmp, trace, 'org.bench.Broker.Update', 'org.bench.Broker.Subscribe', None)
                else:
                    state = os.path.join(tmp, 'state')
                    shutil.copytree(template, state)
                    socket_path = os.path.join(tmp, 'islandd.sock')
                    params = '{"app":"%s","id":"%s","content":{"state":@PAYLOAD@}}' % (bench.APP, activity)
                    run('islandd', [islandd, '--socket', socket_path, '--state-dir', state, '--config', bench.CONF],
                        socket_path, harness, a, tmp, trace, 'org.island.Producer.Update', 'org.island.Presenter.Subscribe',
                        params)
            finally:
                trace.close(os.path.join(a.keep, '%s-%s.trace' % (side, a.mode)) if a.keep else None)
    finally:
        bench.cleanup_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
