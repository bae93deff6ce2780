#if canImport(Glibc)
import Glibc
#endif
import Systemd

// What the environment tests (SystemdTests: socket activation, notifications, the journal)
// start: systemd speaks to a service through its environment — libsystemd reads LISTEN_*,
// NOTIFY_SOCKET and WATCHDOG_* itself — and a test process cannot change its own environment
// safely: setenv(3) may move `environ` and free the old array while another test's thread is
// copying it to start a child. So each case runs in a process of its own, started with the
// variables it names, and prints what the library did, one `name=value` line each.
//
//     systemd-environment-probe CASE [--own-pid NAME]... [--descriptor-3]
//
// `--own-pid NAME` sets NAME to this process's id, as a service manager does for the process
// it starts (LISTEN_PID, WATCHDOG_PID): a test cannot know the id before the start. It is
// set here, while this process has one thread. `--descriptor-3` opens /dev/null as
// descriptor 3, where a manager's first passed socket would be (the test's spawn passes
// none but the standard three).

func say(_ name: String, _ value: some CustomStringConvertible) {
    print("\(name)=\(value)")
}

func refuse(_ message: String) -> Never {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(2)
}

func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
}

var arguments = CommandLine.arguments.dropFirst()
guard let scenario = arguments.popFirst() else {
    refuse("usage: systemd-environment-probe CASE [--own-pid NAME]... [--descriptor-3]")
}
while let option = arguments.popFirst() {
    if option == "--descriptor-3" {
        let null = open("/dev/null", O_RDONLY)
        guard null >= 0, null == 3 || dup2(null, 3) == 3 else { refuse("systemd-environment-probe: no descriptor 3") }
        continue
    }
    guard option == "--own-pid", let name = arguments.popFirst() else {
        refuse("systemd-environment-probe: unknown option \(option)")
    }
    setenv(name, "\(getpid())", 1)
}

switch scenario {
case "notify":
    say("supervised", ServiceNotifier.isSupervised)
    say("ready-with-status", ServiceNotifier.ready(status: "serving\non /run/island.sock"))
    say("ready", ServiceNotifier.ready())
    say("status", ServiceNotifier.status("42 peers\r\n"))
    say("before-reloading", monotonicMicroseconds())
    say("reloading", ServiceNotifier.reloading())
    say("after-reloading", monotonicMicroseconds())
    say("stopping", ServiceNotifier.stopping())
    say("watchdog", ServiceNotifier.watchdog())
    say("custom", ServiceNotifier.send(["STATUS": "custom", "ERRNO": "0"]))
case "notify-invalid-keys":
    say("newline-in-key", ServiceNotifier.send(["READY=1\nSTATUS": "x"]))
    say("lower-case-key", ServiceNotifier.send([("lower", "x")]))
    say("nothing", ServiceNotifier.send([]))
case "watchdog-interval":
    say("interval", ServiceNotifier.watchdogInterval.map { "\($0)" } ?? "none")
case "listened-sockets":
    let sockets = SocketActivation.takeListenedSockets()
    say("sockets", sockets.map { "\($0.fd):\($0.name)" }.joined(separator: ","))
    let listenVariables: [String] = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]
    say("environment-cleared", listenVariables.allSatisfy { getenv($0) == nil })
case "journal":
    say("stderr-is-the-journal", JournalLogHandler.isStderrTheJournal)
    say("destination", "\(JournalLogHandler.Destination.current)")
default:
    refuse("systemd-environment-probe: unknown case \(scenario)")
}
