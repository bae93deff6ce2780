#!/usr/bin/env python3
"""What the median daemon's presenter waits for in a channel's fan-out (docs/benchmarks.md,
"Push: a channel's fan-out").

Reads a trace that `Benchmarks/push.py --only channel --brokers mosquitto --trace FILE` records
(`perf record -a` of the scheduler's events, `sched_switch` and `sched_waking`, on
CLOCK_MONOTONIC, while the messages are published; `FILE.roles.json` says which process is
which) and, for every publish to the daemons' channel:

* finds the publish (the backend's thread waking the broker, whose next wakings are the link
  processes'), and each daemon's delta: its event loop waking its presenter, and the moment
  the presenter then gets a CPU (it reads the delta and takes the time);
* orders the 50 daemons by that moment, takes the median one (nearest rank, as push.py's
  percentiles), and adds up the CPU time every thread ran on every CPU between the publish and
  the median daemon's delta, by kind: the broker, the backend, the link processes, each
  daemon's event loop before its own delta and after it (the rest of the delta's turn, then
  later wake-ups: the commit's end), the store's writers, the presenters, the plain
  subscribers, idle, and anything else on the machine (other sessions' work, perf);
* follows the median daemon's own chain (broker → link process → event loop → presenter): how
  long each was runnable before it ran.

It prints the medians over the publishes (and the means) as Markdown; the same for the plain
subscribers' publishes (the broker's own fan-out) for comparison. perf's own CPU is in "other".

    Benchmarks/critical-path.py TRACE [--json OUT]

Needs `perf` (the trace is read with `perf script`).
"""
import argparse
import bisect
import json
import re
import statistics
import subprocess
import sys

LINE = re.compile(r'^\s*(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:(sched_switch|sched_waking):\s+(.*)$')
SWITCH = re.compile(r'prev_comm=(.*) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+) next_prio=')
WAKING = re.compile(r'comm=(.*) pid=(\d+) prio=')
WINDOW = 0.09  # seconds after a publish in which its fan-out is looked for (publishes are 100 ms apart)


def read_trace(path):
    """(runs, wakings, comm, tgid, preempted): runs as (start, end, cpu, tid), wakings as
    (time, waker tid, wakee tid), both in time order; each thread's name and process; and the
    (tid, end) of every run that ended with its thread still runnable (preempted), not asleep."""
    out = subprocess.Popen(['perf', 'script', '-i', path, '--ns', '-F', 'pid,tid,cpu,time,event,trace'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    current = {}  # cpu -> (tid, since)
    runs, wakings, comm, tgid, preempted = [], [], {}, {}, set()
    for line in out.stdout:
        m = LINE.match(line)
        if not m:
            continue
        pid, tid, cpu = int(m.group(1)), int(m.group(2)), int(m.group(3))
        t = int(m.group(4)) + int(m.group(5).ljust(9, '0')) / 1e9
        if tid:
            tgid[tid] = pid
        if m.group(6) == 'sched_waking':
            w = WAKING.match(m.group(7))
            if w:
                wakings.append((t, tid, int(w.group(2))))
                comm.setdefault(int(w.group(2)), w.group(1))
            continue
        s = SWITCH.match(m.group(7))
        if not s:
            continue
        prev, nxt = int(s.group(2)), int(s.group(5))
        comm[prev], comm[nxt] = s.group(1), s.group(4)
        running = current.get(cpu)
        if running is not None and running[0] == prev:
            runs.append((running[1], t, cpu, prev))
            if s.group(3).startswith('R'):
                preempted.add((prev, t))
        current[cpu] = (nxt, t)
    out.wait()
    runs.sort()
    wakings.sort()
    return runs, wakings, comm, tgid, preempted


class Roles:
    """Which thread is which, from push.py's roles file and the threads' names."""

    def __init__(self, roles, comm, tgid):
        self.comm, self.tgid = comm, tgid
        self.device_of = {}  # pid of an islandd, a link process or a presenter -> device index
        self.kind_of_pid = {}
        for pid in roles['broker']:
            self.kind_of_pid[pid] = 'broker'
        for pid in roles['publisher']:
            self.kind_of_pid[pid] = 'backend (publisher)'
        for pid in roles['plain']:
            self.kind_of_pid[pid] = 'plain subscribers'
        for i, d in enumerate(roles['devices']):
            self.kind_of_pid[d['islandd']] = 'islandd'
            self.device_of[d['islandd']] = i
            for pid in d['link']:
                self.kind_of_pid[pid] = 'link processes'
                self.device_of[pid] = i
            self.kind_of_pid[d['presenter']] = 'presenters'
            self.device_of[d['presenter']] = i
        self.devices = len(roles['devices'])
        self.loop = {}  # device -> its event loop's tid
        for tid, pid in tgid.items():
            if self.kind_of_pid.get(pid) == 'islandd' and comm.get(tid, '').startswith('NIO-ELT'):
                self.loop[self.device_of[pid]] = tid

    def kind(self, tid):
        if tid == 0:
            return 'idle'
        pid = self.tgid.get(tid)
        kind = self.kind_of_pid.get(pid)
        if kind == 'islandd':
            name = self.comm.get(tid, '')
            return 'islandd: event loop' if name.startswith('NIO-ELT') else 'islandd: %s' % self.thread_kind(name)
        if kind:
            return kind
        return 'other: %s' % self.comm.get(tid, '?')

    @staticmethod
    def thread_kind(name):
        # The store's writer is a Dispatch queue's thread; islandd names its others.
        return 'other threads (%s)' % name if name in ('manifest-watch', 'mqtt', 'NIO-ELT') else 'writer (%s)' % name

    def device(self, tid):
        return self.device_of.get(self.tgid.get(tid))


def runs_between(runs, starts, t0, t1):
    """The runs that overlap [t0, t1), clipped."""
    i = bisect.bisect_left(starts, t0 - 1.0)  # no run of interest is longer than a second
    while i < len(runs) and runs[i][0] < t1:
        start, end, cpu, tid = runs[i]
        if end > t0:
            yield max(start, t0), min(end, t1), cpu, tid
        i += 1


def start_of(runs_of, tid, t):
    """The start of `tid`'s run that holds time `t` (or the last one before it)."""
    mine = runs_of.get(tid, ())
    i = bisect.bisect_right(mine, (t, float('inf'))) - 1
    return mine[i][0] if i >= 0 else None


def first_run_after(runs_of, tid, t):
    """When `tid` next got a CPU at or after `t`."""
    for start, end in runs_of.get(tid, ()):
        if end > t:
            return max(start, t)
    return None


def analyse(trace):
    with open(trace + '.roles.json') as f:
        roles_file = json.load(f)
    runs, wakings, comm, tgid, preempted = read_trace(trace)
    roles = Roles(roles_file, comm, tgid)
    starts = [r[0] for r in runs]
    runs_of = {}
    # Each thread's turns: a run that follows a preemption goes on with the turn before it; one
    # that follows a sleep starts a new one.
    turn_of = {}  # (tid, start) -> turn number
    for start, end, _, tid in runs:
        mine = runs_of.setdefault(tid, [])
        turn = turn_of[(tid, mine[-1][0])] + (0 if (tid, mine[-1][1]) in preempted else 1) if mine else 0
        turn_of[(tid, start)] = turn
        mine.append((start, end))
    wake_times = [w[0] for w in wakings]
    publisher = set(roles_file['publisher'])
    broker = set(roles_file['broker'])
    presenter_of = {d['presenter']: i for i, d in enumerate(roles_file['devices'])}
    plain = set(roles_file['plain'])

    # Publishes: the backend's thread waking the broker. Which channel: whom the broker wakes next.
    publishes = []
    for t, waker, wakee in wakings:
        if tgid.get(waker) in publisher and tgid.get(wakee) in broker:
            if publishes and t - publishes[-1] < 0.02:
                continue  # the same publish (libmosquitto's threads)
            publishes.append(t)
    daemon_rows, plain_rows, chains = [], [], []
    for n, t0 in enumerate(publishes):
        t_end = min(publishes[n + 1] if n + 1 < len(publishes) else t0 + WINDOW, t0 + WINDOW)
        lo, hi = bisect.bisect_left(wake_times, t0), bisect.bisect_left(wake_times, t_end)
        window = wakings[lo:hi]
        broker_wakes = [(t, wakee) for t, waker, wakee in window if tgid.get(waker) in broker]
        if not broker_wakes:
            continue
        to_links = sum(1 for _, w in broker_wakes if roles.kind_of_pid.get(tgid.get(w)) == 'link processes')
        to_plain = sum(1 for _, w in broker_wakes if tgid.get(w) in plain)
        if to_links > to_plain:
            # Each daemon's delta: its loop waking its presenter; the arrival: the presenter's next run.
            delta, arrival, link_woken, loop_woken = {}, {}, {}, {}
            for t, waker, wakee in window:
                device = roles.device(waker)
                if device is None:
                    if tgid.get(waker) in broker and roles.kind_of_pid.get(tgid.get(wakee)) == 'link processes':
                        link_woken.setdefault(roles.device(wakee), (t, wakee))
                    continue
                if waker == roles.loop.get(device) and presenter_of.get(tgid.get(wakee)) == device and device not in delta:
                    delta[device] = t
                    arrival[device] = first_run_after(runs_of, wakee, t)
                elif (roles.kind_of_pid.get(tgid.get(waker)) == 'link processes' and wakee == roles.loop.get(device)
                      and device not in loop_woken):
                    loop_woken[device] = (t, wakee)
            if len(arrival) < roles.devices or None in arrival.values():
                continue
            order = sorted(arrival, key=arrival.get)
            median = order[int(0.5 * (len(order) - 1) + 0.5)]
            t1 = arrival[median]
            row = {'window_ms': (t1 - t0) * 1e3}
            for start, end, cpu, tid in runs_between(runs, starts, t0, t1):
                kind = roles.kind(tid)
                if kind == 'islandd: event loop':
                    d = roles.device(tid)
                    cut = delta.get(d, t1)
                    if start < cut:
                        row['islandd: event loop, before its delta'] = row.get('islandd: event loop, before its delta', 0) + \
                            (min(end, cut) - start) * 1e3
                    if end > cut:
                        # The rest of the delta's turn, preempted or not, until the loop sleeps
                        # (with the commit's end if it came back meanwhile); or a later wake-up
                        # (the commit's end handed back; a timer).
                        same = turn_of.get((tid, start_of(runs_of, tid, start))) == turn_of.get((tid, start_of(runs_of, tid, cut)))
                        key = 'islandd: event loop, after its delta, until it next sleeps' if same else \
                            'islandd: event loop, after its delta: later wake-ups'
                        row[key] = row.get(key, 0) + (end - max(start, cut)) * 1e3
                else:
                    row[kind] = row.get(kind, 0) + (end - start) * 1e3
            row['daemons whose link process ran'] = sum(
                1 for tw, tid in link_woken.values() if (first_run_after(runs_of, tid, tw) or t1) < t1)
            row['daemons whose delta came before'] = sum(1 for d in delta if delta[d] < t1)
            daemon_rows.append(row)
            # The median daemon's own chain: when each hop was woken and when it ran.
            chain = {}
            if median in link_woken:
                tw, tid = link_woken[median]
                chain['broker wakes its link process'] = (tw - t0) * 1e3
                chain['the link process runs'] = ((first_run_after(runs_of, tid, tw) or tw) - t0) * 1e3
            if median in loop_woken:
                tw, tid = loop_woken[median]
                chain['the link process wakes the loop'] = (tw - t0) * 1e3
                chain['the loop runs'] = ((first_run_after(runs_of, tid, tw) or tw) - t0) * 1e3
            chain['the loop wakes the presenter (the delta)'] = (delta[median] - t0) * 1e3
            chain['the presenter runs'] = (t1 - t0) * 1e3
            chains.append(chain)
        elif to_plain:
            arrival = {}
            for t, wakee in broker_wakes:
                pid = tgid.get(wakee)
                if pid in plain and pid not in arrival:
                    arrival[pid] = first_run_after(runs_of, wakee, t)
            if len(arrival) < len(plain) or None in arrival.values():
                continue
            order = sorted(arrival.values())
            t1 = order[int(0.5 * (len(order) - 1) + 0.5)]
            row = {'window_ms': (t1 - t0) * 1e3}
            for start, end, cpu, tid in runs_between(runs, starts, t0, t1):
                kind = roles.kind(tid)
                row[kind] = row.get(kind, 0) + (end - start) * 1e3
            plain_rows.append(row)
    return {'publishes': len(publishes), 'daemons': daemon_rows, 'plain': plain_rows, 'chain': chains,
            'islandd_threads': sorted({comm.get(tid, '?') for tid, pid in tgid.items()
                                       if roles.kind_of_pid.get(pid) == 'islandd'})}


def summary(rows):
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != 'window_ms', k.startswith('other'), k))
    table = {}
    for k in keys:
        values = [r.get(k, 0) for r in rows]
        table[k] = (statistics.median(values), statistics.mean(values))
    return table


def markdown(result):
    lines = []
    for name, rows, what in (('daemons', result['daemons'], "the median daemon's delta"),
                             ('plain', result['plain'], "the median plain subscriber's message")):
        if not rows:
            lines.append('%s: no complete publish found' % name)
            continue
        table = summary(rows)
        lines += ['', 'Between a publish and %s (%d publishes; CPU ms on all CPUs, median / mean over the publishes):' % (
            what, len(rows)), '', '| | median | mean |', '|---|---:|---:|']
        others = 0.0, 0.0
        for k, (med, mean) in table.items():
            if k.startswith('other: ') and mean < 0.05:
                others = others[0] + med, others[1] + mean
                continue
            label = 'the window (ms, wall clock)' if k == 'window_ms' else k
            unit = '%.0f' if k.startswith('daemons') else '%.3f'
            lines.append('| %s | %s | %s |' % (label, unit % med, unit % mean))
        if others[1]:
            lines.append('| other: the rest (each < 0.05 ms) | %.3f | %.3f |' % others)
    if result['daemons']:
        # The same, grouped: the work on the message's way to the daemons' deltas, what earlier
        # daemons did after theirs, and the rest.
        groups = (('on the way to the deltas: broker, backend, link processes, loops before their delta, presenters',
                   lambda k: k in ('broker', 'backend (publisher)', 'link processes', 'presenters',
                                   'islandd: event loop, before its delta')),
                  ("after earlier daemons' deltas: their loops, their writers",
                   lambda k: k.startswith('islandd: event loop, after') or k.startswith('islandd: writer')),
                  ('the plain subscribers', lambda k: k == 'plain subscribers'),
                  ('anything else (other sessions, perf, idle)', lambda k: k.startswith('other') or k == 'idle'))
        lines += ['', "Grouped (CPU ms between a publish and the median daemon's delta, median / mean; share of the mean):", '',
                  '| | median | mean | share |', '|---|---:|---:|---:|']
        rows = result['daemons']
        total = statistics.mean(sum(v for k, v in r.items() if k != 'window_ms' and not k.startswith('daemons')) for r in rows)
        for label, member in groups:
            values = [sum(v for k, v in r.items() if member(k)) for r in rows]
            lines.append('| %s | %.3f | %.3f | %.0f %% |' % (label, statistics.median(values), statistics.mean(values),
                                                            100 * statistics.mean(values) / total))
    if result['chain']:
        lines += ['', "The median daemon's own chain (ms after the publish, median / mean):", '', '| | median | mean |',
                  '|---|---:|---:|']
        for k in result['chain'][0]:
            values = [c[k] for c in result['chain'] if k in c]
            lines.append('| %s | %.3f | %.3f |' % (k, statistics.median(values), statistics.mean(values)))
    lines += ['', "islandd's threads seen: " + ', '.join(result['islandd_threads'])]
    return '\n'.join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('trace', help="the perf.data push.py --trace wrote (its roles beside it, TRACE.roles.json)")
    p.add_argument('--json', help='also write the per-publish rows here')
    a = p.parse_args()
    result = analyse(a.trace)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(result, f, indent=1)
    print('%d publishes found' % result['publishes'], file=sys.stderr)
    print(markdown(result))


if __name__ == '__main__':
    main()
