#!/usr/bin/env python3
"""Counts how often islandd's threads sleep and wake, and its system calls, per update.

A latency at low load is mostly the threads an update passes through: each one that sleeps
must be woken (a futex, an eventfd, a socket), and on a busy machine each wake-up can wait for
a CPU. Unlike a rate, these counts do not swing with the machine: this is how the hand-offs
on the update path are measured before and after a change.

It starts islandd (release, as scripts/build-release.sh builds it) on a temporary socket and
state with Benchmarks/islandd-bench.conf, and the floor relay of the shared harness beside it
for comparison; subscribes --presenters presenters (the harness's vl-sub) and sends --count
updates with the harness's vl-pub at --rate updates/s, `oneway` and `reply` (one call in
flight), as the latency runs of Benchmarks/bench.py do. Around the updates it reads every
thread's context switches from /proc (`voluntary_ctxt_switches`: the thread went to sleep
and was woken again) and CPU time and, where `perf` can count tracepoints, the system calls that sleep
or wake: `epoll_wait`, `poll`, `futex`, `read`, `write`, `sendto`, and the store's writes and syncs. Prints them
per update, per thread.

With --channel it counts what a device spends on a broadcast channel's message instead, in
islandd and in its link process (`islandd --mqtt-link`): a mosquitto of its own, one activity
listening to a channel (`island channel create`, from beside --islandd), one presenter, and
--count messages (priority 10, QoS 1, retained, as the push benchmark's backend sends them),
each published once the presenter has shown the one before and the commit after it is over —
one at a time, as a fan-out's device sees them.

    Benchmarks/wakeups.py [--islandd BIN] [--harness DIR] [--presenters N] [--rate R] [--count N]
    Benchmarks/wakeups.py --channel [--islandd BIN] [--count N]

Only processes it started are ever signalled.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the benchmark's processes, harness and template)

SYSCALLS = ('epoll_wait', 'epoll_pwait', 'poll', 'futex', 'read', 'write', 'writev', 'sendto', 'pwrite64', 'fdatasync', 'fsync')


def log(message):
    print('wakeups: ' + message, file=sys.stderr, flush=True)


TICK = os.sysconf('SC_CLK_TCK')


def threads(pid):
    """Every thread of `pid`: {tid: (name, voluntary switches, involuntary switches, CPU seconds)}."""
    found = {}
    for tid in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                name = f.read().strip()
            fields = {}
            with open('/proc/%d/task/%s/status' % (pid, tid)) as f:
                for line in f:
                    key, _, value = line.partition(':')
                    fields[key] = value.strip()
            with open('/proc/%d/task/%s/stat' % (pid, tid)) as f:
                stat = f.read().rsplit(')', 1)[1].split()
            cpu = (int(stat[11]) + int(stat[12])) / TICK  # utime + stime
            found[int(tid)] = (name, int(fields['voluntary_ctxt_switches']), int(fields['nonvoluntary_ctxt_switches']), cpu)
        except (OSError, KeyError):  # the thread ended meanwhile
            pass
    return found


def perf_events():
    """The syscall tracepoints perf can count here (none without perf or tracefs)."""
    if not shutil.which('perf'):
        return []
    events = ['syscalls:sys_enter_' + name for name in SYSCALLS]
    probe = subprocess.run(['perf', 'stat', '-x,', '-e', ','.join(events), 'true'], capture_output=True, text=True)
    return events if probe.returncode == 0 else []


def start_perf(pid, events, out):
    if not events:
        return None
    return subprocess.Popen(['perf', 'stat', '--per-thread', '-x,', '-o', out, '-e', ','.join(events), '-p', str(pid)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_perf(process, out):
    """{(thread, syscall): count} from perf's CSV (`comm-tid,count,,event,...`)."""
    if process is None:
        return {}
    process.send_signal(2)  # perf stat prints its counts on SIGINT
    process.wait(30)
    counts = {}
    with open(out) as f:
        for line in f:
            parts = line.strip().split(',')
            if len(parts) < 4 or not parts[3].startswith('syscalls:'):
                continue
            thread = parts[0].rsplit('-', 1)[0]
            syscall = parts[3].split('sys_enter_')[1]
            try:
                counts[(thread, syscall)] = counts.get((thread, syscall), 0) + int(parts[1])
            except ValueError:  # <not counted>
                pass
    return counts


def measure(name, broker_cmd, socket_path, harness, a, mode, tmp, events, sub_params=None):
    """One run: the broker's threads' switches and syscalls per update, and the presenters' p50."""
    env = bench.base_env(tmp)
    broker = bench.spawn(broker_cmd, os.path.join(tmp, name + '.log'), env=env)
    try:
        bench.wait_for(lambda: bench.accepting(socket_path), 60, name + "'s socket")
        bin_dir = os.path.join(harness, 'bin')
        subs = []
        for i in range(a.presenters):
            cmd = [os.path.join(bin_dir, 'vl-sub'), '--socket', socket_path, '--method', a.sub_method[name],
                   '--timeout', str(a.count / a.rate + 30), '--ready', os.path.join(tmp, '%s-ready.%d' % (name, i)),
                   '--warmup', '0', '--label', 'sub%d' % i]
            if sub_params:
                cmd += ['--params', sub_params]
            subs.append(bench.spawn(cmd, os.path.join(tmp, '%s-sub%d.out' % (name, i))))
        bench.wait_for(lambda: all(os.path.exists(os.path.join(tmp, '%s-ready.%d' % (name, i))) for i in range(a.presenters)),
                       30, 'the presenters')
        if name == 'islandd':
            # One update first, so the store's writer thread is there when perf attaches.
            warm = bench.Conn(socket_path)
            bench.call(warm, a.pub_method[name], json.loads(a.pub_params[name].replace('@PAYLOAD@', '{"phase":"warm"}')))
            warm.close()
        time.sleep(0.5)  # whatever subscribing and the first update set off is over
        before = threads(broker.pid)
        perf_out = os.path.join(tmp, '%s-%s.perf' % (name, mode))
        perf = start_perf(broker.pid, events, perf_out)
        time.sleep(0.3)  # perf attached
        pub = [os.path.join(bin_dir, 'vl-pub'), '--socket', socket_path, '--method', a.pub_method[name],
               '--mode', mode, '--window', '1', '--rate', str(a.rate), '--count', str(a.count),
               '--duration', str(a.count / a.rate * 10 + 5), '--warmup', '0', '--drain-timeout', '3', '--label', 'pub']
        if a.pub_params[name]:
            pub += ['--params', a.pub_params[name]]
        subprocess.run(pub, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=a.count / a.rate * 3 + 60)
        for sub in subs:
            sub.wait(a.count / a.rate + 40)
        syscalls = stop_perf(perf, perf_out)
        after = threads(broker.pid)
        p50 = []
        for i in range(a.presenters):
            with open(os.path.join(tmp, '%s-sub%d.out' % (name, i))) as f:
                lines = [json.loads(line) for line in f if line.startswith('{')]
            if lines and lines[-1].get('recv', 0) < a.count:
                raise RuntimeError('%s: a presenter received %d of %d updates' % (name, lines[-1].get('recv', 0), a.count))
            if lines and 'p50_us' in lines[-1]:
                p50.append(lines[-1]['p50_us'])
        per_thread = {}
        for tid, (thread, voluntary, involuntary, cpu) in after.items():
            _, v0, i0, c0 = before.get(tid, (thread, 0, 0, 0))
            v, i, c = per_thread.get(thread, (0, 0, 0))
            per_thread[thread] = (v + voluntary - v0, i + involuntary - i0, c + cpu - c0)
        return per_thread, syscalls, p50
    finally:
        bench.stop(broker)


def measure_channel(islandd, a, tmp, events):
    """One run of --channel: {process: (per_thread, syscalls)} for islandd and its link."""
    import push
    from profile import state
    broker = push.Broker(tmp)
    config = os.path.join(tmp, 'islandd.conf')
    with open(bench.CONF) as f, open(config, 'w') as c:
        c.write(f.read() + '\n' + broker.push_config('wakeups'))
    socket_path = os.path.join(tmp, 'islandd.sock')
    log_path = os.path.join(tmp, 'islandd.log')
    daemon = bench.spawn([islandd, '--socket', socket_path, '--state-dir', os.path.join(tmp, 'state'), '--config', config],
                         log_path, env=bench.base_env(tmp))
    feed = presenter = None
    try:
        bench.wait_for(lambda: bench.accepting(socket_path), 60, "islandd's socket")
        bench.wait_for(lambda: 'connected to the push broker' in bench.tail(log_path, 100000), 60, 'the broker connection')
        island = os.path.join(os.path.dirname(a.islandd_source), 'island')
        feed = push.ChannelFeed(island, broker, socket_path, 'wakeups')
        presenter = bench.Presenter(socket_path)
        presenter.start()

        def send(seq):
            feed.send(seq, state(seq), presenter, 60)
            # Shown before it is committed: the commit, and the link's `done`, are over well before.
            time.sleep(0.02)
        for seq in range(20):
            send(seq)
        links = push.children(daemon.pid)  # the link process
        processes = {'islandd': daemon.pid, **{'link process %d' % n: pid for n, pid in enumerate(links)}}
        before = {name: threads(pid) for name, pid in processes.items()}
        perfs = {name: start_perf(pid, events, os.path.join(tmp, 'perf-%d' % pid)) for name, pid in processes.items()}
        time.sleep(0.3)  # perf attached
        for seq in range(20, 20 + a.count):
            send(seq)
        syscalls = {name: stop_perf(perfs[name], os.path.join(tmp, 'perf-%d' % pid)) for name, pid in processes.items()}
        results = {}
        for name, pid in processes.items():
            per_thread = {}
            for tid, (thread, voluntary, involuntary, cpu) in threads(pid).items():
                _, v0, i0, c0 = before[name].get(tid, (thread, 0, 0, 0))
                v, i, c = per_thread.get(thread, (0, 0, 0))
                per_thread[thread] = (v + voluntary - v0, i + involuntary - i0, c + cpu - c0)
            results[name] = (per_thread, syscalls[name])
        return results
    finally:
        if feed:
            feed.close()
        if presenter:
            presenter.close()
        bench.stop(daemon)
        broker.stop()


def report(title, count, per_thread, syscalls, p50):
    print('%s — per update (%d updates)%s:' % (title, count, '; presenter p50 %s µs' % '/'.join('%.0f' % x for x in p50) if p50 else ''))
    woke = sum(v for v, _, _ in per_thread.values())
    print('  sleeps (voluntary switches), all threads   %6.2f' % (woke / count))
    for thread, (voluntary, involuntary, cpu) in sorted(per_thread.items(), key=lambda kv: -kv[1][0]):
        if voluntary or involuntary:
            print('    %-24s voluntary %6.2f  involuntary %6.2f  CPU %5.1f µs' % (
                thread, voluntary / count, involuntary / count, cpu / count * 1e6))
    if syscalls:
        totals = {}
        for (_, syscall), n in syscalls.items():
            totals[syscall] = totals.get(syscall, 0) + n
        print('  system calls: ' + ', '.join('%s %.2f' % (s, n / count) for s, n in sorted(totals.items()) if n))
        for thread in sorted({t for t, _ in syscalls}):
            row = ', '.join('%s %.2f' % (s, syscalls[(thread, s)] / count) for s in SYSCALLS if syscalls.get((thread, s)))
            if row:
                print('    %-24s %s' % (thread, row))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--islandd', help='the islandd to measure (default: build it with scripts/build-release.sh)')
    ap.add_argument('--harness', default=os.path.join(REPO, '..', 'shared', 'bench'), help='the shared harness (default ../shared/bench)')
    ap.add_argument('--presenters', type=int, default=1, help='presenters subscribed (default 1)')
    ap.add_argument('--rate', type=float, default=2000, help='updates/s (default 2000, as the latency runs)')
    ap.add_argument('--count', type=int, default=4000, help='updates counted (default 4000)')
    ap.add_argument('--modes', default='oneway,reply', help='producer modes (default oneway,reply)')
    ap.add_argument('--no-floor', action='store_true', help='measure islandd only')
    ap.add_argument('--channel', action='store_true',
                    help="count a broadcast channel's messages instead, one at a time, in islandd and its link process")
    a = ap.parse_args()
    binary = a.islandd
    if not binary:
        bindir = subprocess.run([os.path.join(REPO, 'scripts', 'build-release.sh'), 'islandd'], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        binary = os.path.join(bindir, 'islandd')
    tmp = tempfile.mkdtemp(prefix='island-wakeups-')
    try:
        islandd = os.path.join(tmp, 'islandd')
        shutil.copy2(binary, islandd)
        if a.channel:
            a.islandd_source = binary
            events = perf_events()
            if not events:
                log('perf cannot count system calls here: context switches only')
            for name, (per_thread, syscalls) in measure_channel(islandd, a, tmp, events).items():
                report('%s, channel messages one at a time' % name, a.count, per_thread, syscalls, [])
            return
        harness = bench.build_harness(os.path.abspath(a.harness), tmp)
        template, activity = bench.prepare_template(islandd, tmp, bench.base_env(tmp))
        a.sub_method = {'islandd': 'org.island.Presenter.Subscribe', 'floor': 'org.bench.Broker.Subscribe'}
        a.pub_method = {'islandd': 'org.island.Producer.Update', 'floor': 'org.bench.Broker.Update'}
        a.pub_params = {'islandd': '{"app":"%s","id":"%s","content":{"state":@PAYLOAD@}}' % (bench.APP, activity),
                        'floor': None}
        events = perf_events()
        if not events:
            log('perf cannot count system calls here: context switches only')
        for mode in a.modes.split(','):
            if not a.no_floor:
                socket_path = os.path.join(tmp, 'floor.sock')
                per_thread, syscalls, p50 = measure('floor', [os.path.join(harness, 'bin', 'floor-relay'), '--socket', socket_path],
                                                    socket_path, harness, a, mode, tmp, events)
                report('floor relay, %s, %d presenter(s), %g/s' % (mode, a.presenters, a.rate), a.count, per_thread, syscalls, p50)
            state = os.path.join(tmp, 'state-' + mode)
            shutil.copytree(template, state)
            socket_path = os.path.join(tmp, 'islandd.sock')
            per_thread, syscalls, p50 = measure(
                'islandd', [islandd, '--socket', socket_path, '--state-dir', state, '--config', bench.CONF],
                socket_path, harness, a, mode, tmp, events)
            report('islandd, %s, %d presenter(s), %g/s' % (mode, a.presenters, a.rate), a.count, per_thread, syscalls, p50)
    finally:
        bench.cleanup_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
