#!/usr/bin/env python3
"""Writes packaging/islandd.order: the functions islandd runs as it starts, serves a presenter
and a producer's request, updates and end, and stops — sorted by name, which keeps each
module's functions side by side and the list the same from one profile to the next.

scripts/build-release.sh links them first and together (lld --symbol-ordering-file, every
function in its own section). Started, islandd then maps the few megabytes of code it runs
rather than a page here and there across the whole binary, each fault bringing its neighbours
in too (the kernel maps up to 64 KiB around a fault): idle RSS fell from 25.1–25.8 to 19.1–19.9 MiB. test_package.py
checks the shipped binary is laid out so.

Run it again when the start-up or the update path changes much; a stale list still links (lld
skips the names it does not find) but keeps less of the code together.

Needs valgrind (a developer tool, not a build dependency):

    scripts/make-order-file.py [--islandd BIN] [--out FILE]
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, 'Benchmarks'))
import bench  # noqa: E402  (the benchmark's raw Varlink client and environment)


def log(message):
    print('make-order-file: ' + message, file=sys.stderr, flush=True)


def session(socket_path):
    """What a desktop does with islandd in its first minute: a presenter and one activity."""
    presenter = bench.Presenter(socket_path)
    presenter.start()
    producer = bench.Conn(socket_path)
    activity = bench.call(producer, 'org.island.Producer.Request', bench.request_params(0))['activity']
    frames = [{'method': 'org.island.Producer.Update',
               'parameters': {'app': bench.APP, 'id': activity['id'],
                              'content': {'state': {'phase': 'step %d' % i, 'done': i}}}} for i in range(50)]
    bench.pipelined(producer, frames)
    bench.call(producer, 'org.island.Producer.End', {'app': bench.APP, 'id': activity['id'],
                                                     'dismissalPolicy': {'kind': 'immediate'}})
    producer.close()
    presenter.close()


def executed_functions(callgrind_out, binary):
    """Names of the functions of `binary` that ran."""
    names, seen, object_file, in_binary = [], set(), None, False
    with open(callgrind_out, errors='replace') as f:
        for line in f:
            if line.startswith('ob='):
                object_file = line[3:].strip()
                in_binary = os.path.realpath(object_file) == os.path.realpath(binary)
            elif line.startswith('fn=') and in_binary:
                # "name'2" is callgrind's name for a second level of recursion.
                name = line[3:].strip().split("'")[0]
                # Addresses without a symbol (0x...) cannot be ordered.
                if name and not name.startswith('0x') and name not in seen:
                    seen.add(name)
                    names.append(name)
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--islandd', help='the release islandd to profile (default: build it with scripts/build-release.sh)')
    ap.add_argument('--out', default=os.path.join(REPO, 'packaging', 'islandd.order'),
                    help='where to write the list (default: packaging/islandd.order)')
    a = ap.parse_args()
    if not shutil.which('valgrind'):
        sys.exit('make-order-file: valgrind is needed (apt-get install valgrind)')
    binary = a.islandd
    if not binary:
        bindir = subprocess.run([os.path.join(HERE, 'build-release.sh'), 'islandd'], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        binary = os.path.join(bindir, 'islandd')

    tmp = tempfile.mkdtemp(prefix='island-order-')
    try:
        # valgrind 3.19 cannot read the DWARF 5 that swiftc writes; the symbols are enough.
        profiled = os.path.join(tmp, 'islandd')
        subprocess.run(['strip', '--strip-debug', '-o', profiled, binary], check=True)
        out = os.path.join(tmp, 'callgrind.out')
        env = bench.base_env(tmp)
        socket_path = os.path.join(tmp, 'islandd.sock')
        log('profiling %s' % binary)
        daemon = subprocess.Popen(
            ['valgrind', '--tool=callgrind', '--demangle=no', '--compress-strings=no', '--callgrind-out-file=' + out,
             profiled, '--socket', socket_path, '--state-dir', os.path.join(tmp, 'state'), '--config', bench.CONF],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, 'log'), 'wb'))
        try:
            bench.wait_for(lambda: os.path.exists(socket_path) or daemon.poll() is not None, 120, 'the socket')
            if daemon.poll() is not None:
                sys.exit('make-order-file: islandd exited: ' + bench.tail(os.path.join(tmp, 'log')))
            time.sleep(1)
            session(socket_path)
            time.sleep(0.5)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(120)
        names = sorted(executed_functions(out, profiled))
        if len(names) < 1000:
            sys.exit('make-order-file: only %d functions ran; the profile looks wrong (%s)' % (len(names), out))
        with open(a.out, 'w') as f:
            f.write('# The functions islandd runs as it starts and serves its first activity, linked first\n'
                    '# and together. Written by scripts/make-order-file.py; see there.\n')
            f.write('\n'.join(names) + '\n')
        log('%d functions -> %s' % (len(names), os.path.relpath(a.out, REPO)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
