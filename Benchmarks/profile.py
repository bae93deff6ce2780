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

Needs valgrind (a developer tool, not a build dependency). Only the islandd it started is
ever signalled.

    Benchmarks/profile.py [--islandd BIN] [--presenters N] [--updates N] [--oneway] [--keep DIR]
"""
import argparse
import glob
import os
import re
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
    with open(path, errors='replace') as f:
        return any('SelectableEventLoop' in line for line in f if line.startswith('fn='))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--islandd', help='the islandd to profile (default: build it with scripts/build-release.sh)')
    ap.add_argument('--presenters', type=int, default=1, help='presenters subscribed (default 1)')
    ap.add_argument('--updates', type=int, default=6000, help='updates counted (default 6000)')
    ap.add_argument('--keep', help='keep the callgrind files in this directory, for callgrind_annotate')
    ap.add_argument('--oneway', action='store_true',
                    help='the counted updates are `oneway` calls (no reply), followed by one call answered once they are committed')
    a = ap.parse_args()
    if not shutil.which('valgrind'):
        sys.exit('profile: valgrind is needed (apt-get install valgrind)')
    if a.presenters < 0 or a.updates < 1:
        sys.exit('profile: --presenters must be 0 or more and --updates 1 or more')
    binary = a.islandd
    if not binary:
        bindir = subprocess.run([os.path.join(REPO, 'scripts', 'build-release.sh'), 'islandd'], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        binary = os.path.join(bindir, 'islandd')

    tmp = tempfile.mkdtemp(prefix='island-profile-')
    daemon = None
    try:
        # valgrind 3.19 cannot read the DWARF 5 that swiftc writes; the symbols are enough.
        profiled = os.path.join(tmp, 'islandd')
        subprocess.run(['strip', '--strip-debug', '-o', profiled, binary], check=True)
        out = os.path.join(tmp, 'callgrind.out')
        socket_path = os.path.join(tmp, 'islandd.sock')
        log('profiling %s with %d presenter(s), %d updates' % (binary, a.presenters, a.updates))
        daemon = subprocess.Popen(
            ['valgrind', '--tool=callgrind', '--separate-threads=yes', '--compress-strings=no', '--demangle=no',
             '--callgrind-out-file=' + out, profiled,
             '--socket', socket_path, '--state-dir', os.path.join(tmp, 'state'), '--config', bench.CONF],
            env=bench.base_env(tmp), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
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
        control(daemon.pid, '-z', socket_path)
        started = time.monotonic()
        if a.oneway:
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

        dumps = sorted(glob.glob(out + '.*-*'))
        if not dumps:
            sys.exit('profile: callgrind wrote no dump (%s)' % bench.tail(os.path.join(tmp, 'log')))
        counts = {path: totals(path) for path in dumps}
        loops = [path for path in dumps if runs_event_loop(path)]
        loop = max(loops, key=counts.get) if loops else None
        others = sorted((path for path in dumps if path != loop), key=counts.get, reverse=True)
        writer = others[0] if others else None
        per_update = lambda path: counts[path] / a.updates if path else 0  # noqa: E731
        print('instructions per update (%d %supdates, %d presenter(s), callgrind):' % (
            a.updates, 'oneway ' if a.oneway else '', a.presenters))
        print('  event loop      %9.0f' % per_update(loop))
        print('  writer thread   %9.0f' % per_update(writer))
        print('  all threads     %9.0f' % (sum(counts.values()) / a.updates))
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for path in dumps:
                shutil.copy(path, a.keep)
            log('callgrind files in %s (the loop: %s)' % (a.keep, os.path.basename(loop or '-')))
    finally:
        if daemon and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(120)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
