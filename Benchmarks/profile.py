#!/usr/bin/env python3
"""Counts the instructions islandd runs per update, per thread, under callgrind.

Where the benchmark's rates swing with the machine and its neighbours, an instruction count is
exact and repeatable: this is how a change to the update path is measured before and after.
It starts islandd (release, as scripts/build-release.sh builds it) under
`valgrind --tool=callgrind` on a temporary socket and state with Benchmarks/islandd-bench.conf,
subscribes the presenters, requests one activity and warms up with a few hundred updates,
zeroes the counters, sends --updates pipelined updates (64 in flight) whose state is the
benchmark harness's ~300-byte payload, and dumps the counters. It prints the instructions per
update of the event loop (reading, parsing, deciding, writing the presenters' deltas and the
replies) and of the store's writer thread (committing), and of all threads together.

With --paced the counted updates go one at a time instead: each sent once the presenter has the
one before and its commit is over (its reply came; a `oneway` one's commit, which lingers up to
a millisecond, is given a quarter of a second), so the loop sleeps between them and each update
pays for its own wake-ups, turn and commit — what an update that comes alone costs (a
presenter at a steady 2,000 updates/s), where the pipelined default shares a wake-up's fixed
costs among many. It needs a presenter; ten paced updates warm up after the pipelined ones.
With --paced it also prints the loop's instructions *before the delta's write*: what the
presenter waits for, from the loop's wake-up to the write(2) that hands it the delta. valgrind
dumps its counters as any thread enters epoll_wait, write or writev (`--dump-before`); each
stretch of the loop's thread from a sleep to a write that ran `PresenterHub.show` is one
update's wake-up, read of the call, decision and delta (see `segments`), and their mean,
median and range are printed. (The dumps of the warm-up are left out; the totals are the sums
of the stretches after the counters were zeroed, as before.)

With --channel it counts what a device spends on a broadcast channel's message instead: a
mosquitto of its own (no persistence), islandd connected to it with one activity listening to a
channel (`island channel create`, from beside --islandd or --island), a presenter, and
--updates messages (as the push benchmark's backend sends them: priority 10, QoS 1, retained),
each published once the presenter has the one before and its commit is over — one at a time,
each its own commit, as a fan-out's device sees them. The link process (`islandd --mqtt-link`) runs under callgrind
too, and is counted apart.

Needs valgrind (a developer tool, not a build dependency). Only the processes it started are
ever signalled.

    Benchmarks/profile.py [--islandd BIN] [--presenters N] [--updates N] [--oneway] [--paced] [--keep DIR]
    Benchmarks/profile.py --channel [--islandd BIN] [--island BIN] [--updates N] [--keep DIR]
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the benchmark's raw Varlink client and environment)

WINDOW = 64
WARM_UP = 300


def log(message):
    print('profile: ' + message, file=sys.stderr, flush=True)


def state(seq):
    """The shared harness's default payload (src/common.h), as vl-pub sends it."""
    return {'seq': seq, 't_ns': 1_000_000_000_000 + seq, 'kind': 'track-changed', 'source': 'org.example.Player',
            'title': 'Some Title', 'artist': 'Some Artist', 'album': 'Some Album', 'position_us': 123456789,
            'playing': True, 'pad': 'x' * 110}


def control(pid, flag, socket_path):
    """Runs `callgrind_control FLAG PID`. valgrind reads commands only while the program runs,
    so calls on another connection keep the daemon busy until the command is answered."""
    done = threading.Event()

    def wake():
        conn = bench.Conn(socket_path)
        try:
            while not done.wait(0.5):
                bench.call(conn, 'org.varlink.service.GetInfo', {})
        finally:
            conn.close()
    waker = threading.Thread(target=wake, daemon=True)
    waker.start()
    try:
        subprocess.run(['callgrind_control', flag, str(pid)], check=True, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        done.set()
        waker.join()


def totals(path):
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith(('summary:', 'totals:')):
                return int(line.split()[1])
    return 0


def runs_event_loop(path):
    """Whether the thread ran the event loop's ticks: the store's writer calls into the loop
    too (`execute`, to hand a commit's end back), and may run more instructions than it."""
    with open(path, errors='replace') as f:
        return any('SelectableEventLoop' in line and 'runOne' in line for line in f if line.startswith('fn='))


# Where --paced cuts the loop's work: as it enters epoll_wait (the end of a turn, the start of
# the next one's wake-up) and as any thread enters write(2)/writev(2) (NIO writes a socket
# with one or the other).
SPLIT_AT = ('epoll_wait', 'write', 'writev')


def trigger(path):
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('desc: Trigger:'):
                return line.split(':', 2)[2].strip()
            if line.startswith(('fn=', 'summary:', 'totals:')):
                break
    return ''


def shows(path):
    """Whether this stretch of the loop ran PresenterHub.show (the decision shown to the presenters)."""
    with open(path, errors='replace') as f:
        return any('PresenterHub' in line and '4show' in line for line in f if line.startswith('fn='))


def segments(paths):
    """The loop's instructions before the delta's write, one figure per paced update: the
    stretches of the loop's thread that begin as it goes to sleep (a dump before epoll_wait)
    and end at a write (a dump before write or writev), and that ran PresenterHub.show — the
    wake-up, the read of the call, the decision and the delta's writing, up to the write(2) that
    hands the delta to the kernel. The turn's rest, the linger's timer and the commit after it
    are other stretches. With one presenter each paced update has one such stretch; with more,
    the first presenter's write ends it (the later ones are counted after)."""
    numbered = sorted(paths, key=lambda path: int(os.path.basename(path).split('.')[-1].split('-')[0]))
    found = []
    previous = ''
    for path in numbered:
        why = trigger(path)
        if 'epoll_wait' in previous and 'write' in why and shows(path):
            found.append(totals(path))
        previous = why
    return found


def keep(a, dumps, loop):
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        for path in dumps:
            shutil.copy(path, a.keep)
        log('callgrind files in %s (the loop: %s)' % (a.keep, os.path.basename(loop or '-')))


def profile_channel(daemon, socket_path, island, broker, tmp, out, a):
    """Counts a.updates channel messages, each published (QoS 1, as on a `latest` channel) once
    the presenters have the one before: one message at a time, as a fan-out's device sees them
    (each its own commit), not a flood's group commits."""
    bench.wait_for(lambda: 'connected to the push broker' in bench.tail(os.path.join(tmp, 'log'), 100000), 120,
                   'the broker connection')
    import push
    feed = push.ChannelFeed(island, broker, socket_path, 'profiled')
    presenters = [bench.Presenter(socket_path) for _ in range(max(1, a.presenters))]
    for presenter in presenters:
        presenter.start()

    def send(seq):
        feed.send(seq, state(seq), presenters[0], 120)
        # Shown before it is committed: the next one only once this one's commit is surely over,
        # or a writer slowed down by callgrind groups several messages in one commit (a quicker
        # writer then counts twice as much per message as a slower one).
        time.sleep(0.25)
    for seq in range(WARM_UP // 10):
        send(seq)
    links = push.children(daemon.pid)  # the link process
    for pid in [daemon.pid] + links:
        control(pid, '-z', socket_path)
    for seq in range(WARM_UP // 10, WARM_UP // 10 + a.updates):
        send(seq)
    # Shown before it is committed: give the last commit its turn before the dump.
    bench.call(feed.producer, 'org.island.Producer.List', {'app': bench.APP})
    for pid in [daemon.pid] + links:
        control(pid, '-d', socket_path)
    feed.close()
    for presenter in presenters:
        presenter.close()
    # The dumps taken now (numbered), not those the processes write at their exit.
    dumps = sorted(path for pid in [daemon.pid] + links for path in glob.glob(out.replace('%p', str(pid)) + '.*-*'))
    if not dumps:
        sys.exit('profile: callgrind wrote no dump (%s)' % bench.tail(os.path.join(tmp, 'log')))
    return {path: totals(path) for path in dumps}, dumps, links


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--islandd', help='the islandd to profile (default: build it with scripts/build-release.sh)')
    ap.add_argument('--presenters', type=int, default=1, help='presenters subscribed (default 1)')
    ap.add_argument('--updates', type=int, default=6000, help='updates counted (default 6000)')
    ap.add_argument('--keep', help='keep the callgrind files in this directory, for callgrind_annotate')
    ap.add_argument('--oneway', action='store_true',
                    help='the counted updates are `oneway` calls (no reply), followed by one call answered once they are committed')
    ap.add_argument('--paced', action='store_true',
                    help='the counted updates go one at a time, each once the presenter has the one before and its commit is over')
    ap.add_argument('--channel', action='store_true',
                    help='count broadcast channel messages instead: islandd connected to a mosquitto of its own, one '
                         'activity listening to a channel, each message published once the one before is shown')
    ap.add_argument('--island', help='with --channel: the island CLI that creates the channel (default: beside --islandd)')
    a = ap.parse_args()
    if not shutil.which('valgrind'):
        sys.exit('profile: valgrind is needed (apt-get install valgrind)')
    if a.presenters < 0 or a.updates < 1:
        sys.exit('profile: --presenters must be 0 or more and --updates 1 or more')
    if a.paced and (a.channel or a.presenters < 1):
        sys.exit('profile: --paced counts producer updates, and needs a presenter')
    binary = a.islandd
    if not binary:
        bindir = subprocess.run([os.path.join(REPO, 'scripts', 'build-release.sh'), 'islandd'], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        binary = os.path.join(bindir, 'islandd')

    tmp = tempfile.mkdtemp(prefix='island-profile-')
    daemon = broker = None
    try:
        # valgrind 3.19 cannot read the DWARF 5 that swiftc writes; the symbols are enough.
        profiled = os.path.join(tmp, 'islandd')
        subprocess.run(['strip', '--strip-debug', '-o', profiled, binary], check=True)
        out = os.path.join(tmp, 'callgrind.out')
        socket_path = os.path.join(tmp, 'islandd.sock')
        config = bench.CONF
        if a.channel:
            import push
            broker = push.Broker(tmp)
            config = os.path.join(tmp, 'islandd.conf')
            with open(bench.CONF) as f, open(config, 'w') as c:
                c.write(f.read() + '\n' + broker.push_config('profiled'))
        log('profiling %s with %d presenter(s), %d updates' % (binary, a.presenters, a.updates))
        # With --channel the link process (islandd --mqtt-link) runs under callgrind too: valgrind
        # follows the exec of the file named here (under valgrind /proc/self/exe, islandd's
        # default, is valgrind's tool). Its data limit is lifted, as under a sanitizer:
        # valgrind's own memory counts against it.
        env = bench.base_env(tmp)
        follow = []
        if a.channel:
            env['ISLAND_SANITIZER'] = 'valgrind'
            env['ISLAND_MQTT_LINK_EXECUTABLE'] = profiled
            follow = ['--trace-children=yes']
            out += '.%p'
        if a.paced:
            # The split at the delta's write (see segments()): a dump as the loop goes to sleep
            # and one as any thread enters write(2) or writev(2).
            follow += ['--dump-before=' + name for name in SPLIT_AT]
        daemon = subprocess.Popen(
            ['valgrind', '--tool=callgrind', '--separate-threads=yes', '--compress-strings=no', '--demangle=no', *follow,
             '--callgrind-out-file=' + out, profiled,
             '--socket', socket_path, '--state-dir', os.path.join(tmp, 'state'), '--config', config],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, 'log'), 'wb'))
        def listening():
            if daemon.poll() is not None:
                sys.exit('profile: islandd exited: ' + bench.tail(os.path.join(tmp, 'log')))
            try:
                bench.Conn(socket_path).close()
                return True
            except OSError:  # not bound yet, or bound and not yet listening
                return False
        bench.wait_for(listening, 120, 'the socket', poll=0.1)

        if a.channel:
            log('%d channel messages counted' % a.updates)
            island = a.island or os.path.join(os.path.dirname(binary), 'island')
            counts, dumps, links = profile_channel(daemon, socket_path, island, broker, tmp, out, a)
            per_message = lambda paths: sum(counts[p] for p in paths) / a.updates  # noqa: E731
            linked = [p for p in dumps if any(('.%d.' % pid) in os.path.basename(p) for pid in links)]
            own = [p for p in dumps if p not in linked]
            loops = [path for path in own if runs_event_loop(path)]
            loop = max(loops, key=counts.get) if loops else None
            others = sorted((path for path in own if path != loop), key=counts.get, reverse=True)
            print('instructions per channel message (%d, one at a time, %d presenter(s), callgrind):' % (a.updates, a.presenters))
            print('  islandd event loop        %9.0f' % per_message([loop] if loop else []))
            for path in others[:3]:
                print('  islandd thread %-10s %9.0f' % (path.rsplit('-', 1)[-1], per_message([path])))
            print('  islandd, all threads      %9.0f' % per_message(own))
            print('  link process, all threads %9.0f' % per_message(linked))
            keep(a, dumps, loop)
            return
        presenters = [bench.Presenter(socket_path) for _ in range(a.presenters)]
        for presenter in presenters:
            presenter.start()
        producer = bench.Conn(socket_path)
        activity = bench.call(producer, 'org.island.Producer.Request', bench.request_params(0))['activity']['id']

        def updates(first, count):
            return [{'method': 'org.island.Producer.Update',
                     'parameters': {'app': bench.APP, 'id': activity, 'content': {'state': state(seq)}}}
                    for seq in range(first, first + count)]
        bench.pipelined(producer, updates(0, WARM_UP), window=WINDOW)

        def paced(first, count):
            for frame in updates(first, count):
                frames = presenters[0].frames
                producer.send(dict(frame, oneway=True) if a.oneway else frame)
                bench.wait_for(lambda: presenters[0].frames > frames, 120, 'an update shown', poll=0.002)
                if not a.oneway:
                    r = producer.recv()  # sent once the update is committed
                    if 'error' in r:
                        raise RuntimeError('Update: %s %s' % (r['error'], r.get('parameters')))
                # Its commit (and the loop's turn for the commit's end) is over before the next:
                # a `oneway` commit lingers up to a millisecond, and callgrind slows the writer.
                time.sleep(0.25)
        if a.paced:
            paced(WARM_UP, 10)
        # With --paced every write and every sleep dumps: the files written so far are the
        # warm-up's, and are not counted.
        warm = set(glob.glob(out + '.*-*'))
        control(daemon.pid, '-z', socket_path)
        started = time.monotonic()
        if a.paced:
            paced(WARM_UP + 10, a.updates)
        elif a.oneway:
            # Replies come in call order, and a mutation's after its commit, which follows
            # the commits of every call before it: the last call's reply means all are done.
            frames = updates(WARM_UP, a.updates)
            for frame in frames[:-1]:
                producer.send(dict(frame, oneway=True))
            bench.pipelined(producer, frames[-1:], window=1)
        else:
            bench.pipelined(producer, updates(WARM_UP, a.updates), window=WINDOW)
        log('%d updates in %.1f s under callgrind' % (a.updates, time.monotonic() - started))
        # The presenters have their deltas before the dump: the loop wrote them with the replies.
        control(daemon.pid, '-d', socket_path)
        producer.close()
        for presenter in presenters:
            presenter.close()

        files = [path for path in glob.glob(out + '.*-*') if path not in warm]
        if not files:
            sys.exit('profile: callgrind wrote no dump (%s)' % bench.tail(os.path.join(tmp, 'log')))
        # One entry per thread (the file name's suffix), its segments summed: without --paced
        # each thread has one dump, the final one.
        threads = {}
        for path in files:
            threads.setdefault(path.rsplit('-', 1)[-1], []).append(path)
        counts = {tid: sum(totals(path) for path in paths) for tid, paths in threads.items()}
        loops = [tid for tid, paths in threads.items() if any(runs_event_loop(path) for path in paths)]
        loop = max(loops, key=counts.get) if loops else None
        others = sorted((tid for tid in threads if tid != loop), key=counts.get, reverse=True)
        writer = others[0] if others else None
        per_update = lambda tid: counts[tid] / a.updates if tid else 0  # noqa: E731
        print('instructions per update (%d %s%supdates, %d presenter(s), callgrind):' % (
            a.updates, 'paced ' if a.paced else '', 'oneway ' if a.oneway else '', a.presenters))
        print('  event loop      %9.0f' % per_update(loop))
        if a.paced and loop:
            before = segments(threads[loop])
            if before:
                before.sort()
                print('    before the delta\'s write %9.0f  (median %d, %d–%d, %d of %d updates)' % (
                    sum(before) / len(before), before[len(before) // 2], before[0], before[-1], len(before), a.updates))
        print('  writer thread   %9.0f' % per_update(writer))
        print('  all threads     %9.0f' % (sum(counts.values()) / a.updates))
        keep(a, sorted(files), threads[loop][0] if loop else None)
    finally:
        if broker:
            broker.stop()
        if daemon and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(120)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
