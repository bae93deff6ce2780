import Foundation
import Glibc
@testable import MQTT
import ProcessTesting
import Synchronization
import Testing

/// Sessions whose libmosquitto clients run in a link process, so that no packet a broker sends
/// is allocated in the daemon: the daemon's side bounds what it reads, and starts the process
/// again whenever it ends.
@Suite struct MQTTLinkProcessTests {
    /// What a link process's sessions and the process itself said.
    final class Journal: Sendable {
        private let state = Mutex<(messages: [MQTTMessage], events: [MQTTConnectionEvent], log: [String])>(([], [], []))
        var messages: [MQTTMessage] { state.withLock { $0.messages } }
        var events: [MQTTConnectionEvent] { state.withLock { $0.events } }
        var log: [String] { state.withLock { $0.log } }
        func record(_ message: MQTTMessage) { state.withLock { $0.messages.append(message) } }
        func record(_ event: MQTTConnectionEvent) { state.withLock { $0.events.append(event) } }
        func record(_ line: String) { state.withLock { $0.log.append(line) } }

        /// Waits for what is expected to come; the bound only keeps a broken link from hanging
        /// the test, and it looks once more after its deadline.
        func wait(_ what: String, within timeout: Duration = .seconds(30), until done: (Journal) -> Bool) async throws {
            let deadline = ContinuousClock.now + timeout
            while true {
                if done(self) { return }
                guard ContinuousClock.now < deadline else { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("\(what) never came: events \(events), log \(log)")
            throw CancellationError()
        }
    }

    static let configuration = MQTTConfiguration(
        broker: MQTTBrokerAddress(host: "127.0.0.1", port: 1, secure: false), clientID: "link-test",
        backoff: ReconnectBackoff(first: 0.05, maximum: 0.2))

    @Test func aFrameOverTheLimitEndsTheProcessBeforeItIsReadAndAnotherIsStarted() async throws {
        let journal = Journal()
        // A link process that announces a frame of 4 GiB, and then waits.
        let process = try MQTTLinkProcess(
            executable: "/bin/sh", arguments: ["-c", #"printf '\377\377\377\377' >&3; exec sleep 300"#],
            frameLimit: 1024, backoff: ReconnectBackoff(first: 0.05, maximum: 0.2), log: journal.record)
        let session = try process.session(Self.configuration, onMessage: journal.record, onConnection: journal.record)
        session.start()
        try await journal.wait("two processes ended over the limit") { journal in
            journal.log.count(where: { $0.contains("over the limit of 1024") }) >= 2
        }
        await session.shutdown(timeout: .seconds(10))
        #expect(journal.messages.isEmpty)
    }

    /// The link process reads what brokers send: it holds descriptors 3 and 4, given to it, and
    /// none other of this process's, not even one opened without close-on-exec as SwiftNIO
    /// opens a daemon's listening socket and its clients' connections.
    @Test func theProcessHoldsOnlyTheDescriptorsItIsGiven() async throws {
        let journal = Journal()
        let leaky = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(leaky >= 0)
        defer { close(leaky) }
        let report = "/tmp/island-link-descriptors-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(report) }
        // Written whole, then renamed, so the test never reads half of it.
        let script =
            "for fd in 3 4 \(leaky); do if [ -e /proc/$$/fd/$fd ]; then echo \"$fd open\"; else echo \"$fd closed\"; fi; done"
            + " > \(report).part && mv \(report).part \(report); exec cat <&3 >/dev/null"
        let process = try MQTTLinkProcess(
            executable: "/bin/sh", arguments: ["-c", script], frameLimit: 1024, backoff: ReconnectBackoff(first: 0.05, maximum: 0.2),
            log: journal.record)
        let session = try process.session(Self.configuration, onMessage: journal.record, onConnection: journal.record)
        session.start()
        try await journal.wait("the process's report") { _ in access(report, F_OK) == 0 }
        #expect(try String(contentsOfFile: report, encoding: .utf8) == "3 open\n4 open\n\(leaky) closed\n")
        await session.shutdown(timeout: .seconds(10))
    }

    /// `shutdown(timeout:)` is bounded: a process that neither reads nor exits (stuck, or taken
    /// over through a broker's packets) is ended by force once the timeout is over, and the
    /// caller (the daemon, stopping) does not wait for it.
    @Test func shutdownEndsAProcessThatDoesNotEndItself() async throws {
        let journal = Journal()
        // Holds its socket open, reads nothing, and would outlive any test.
        let process = try MQTTLinkProcess(
            executable: "/bin/sh", arguments: ["-c", "exec sleep 120"], frameLimit: 1024,
            backoff: ReconnectBackoff(first: 0.05, maximum: 0.2), log: journal.record)
        let session = try process.session(Self.configuration, onMessage: journal.record, onConnection: journal.record)
        session.start()
        try await journal.wait("the process") { _ in process.pid != 0 }
        let started = ContinuousClock.now
        await session.shutdown(timeout: .milliseconds(100))
        // A liveness bound, far above the timeout and the reaping grace, and half the sleep: without
        // the bound, `shutdown` returned when the process did.
        #expect(started.duration(to: .now) < .seconds(60))
        #expect(process.pid == 0, "the process was not reaped")
    }

    /// The grace a stuck process is given before it is killed is time, not a number of pauses:
    /// pauses that each last far longer than asked (a loaded machine) are not all taken.
    @Test func reapingGraceIsTimeNotACountOfPauses() async throws {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("120"), nil]
        defer { for argument in argv { free(argument) } }
        try #require(posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0)
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        // Each pause 200 ms where 10 were asked; the grace 1 s: the old count of 100 pauses
        // would have taken 20 s of them before the kill. Reaped on a thread of its own, as the
        // link process's supervisor reaps: the pauses and the wait block the thread they run on.
        let (ended, pauses) = await offThePool { [pid, socket = pair[0]] () -> (String, Int) in
            var pauses = 0
            let ended = MQTTLinkProcess.reap(pid, socket, grace: .seconds(1)) {
                pauses += 1
                usleep(200_000)
            }
            return (ended, pauses)
        }
        #expect(ended == "was killed by signal 9")
        #expect(pauses <= 6, "\(pauses) pauses for a grace of 1 s")
    }

    /// A link process that never reads its dones (broken, or taken over through a broker's
    /// packets) cannot make the daemon hold them without a bound: past `outboxLimit` waiting,
    /// they are dropped.
    @Test func donesAProcessDoesNotReadAreBounded() async throws {
        let journal = Journal()
        // A link process that reads its frames, and ends with them, but never its dones.
        let process = try MQTTLinkProcess(
            executable: "/bin/sh", arguments: ["-c", "exec cat <&3 >/dev/null"],
            frameLimit: 1024, backoff: ReconnectBackoff(first: 0.05, maximum: 0.2), log: journal.record)
        let session = try process.session(Self.configuration, onMessage: journal.record, onConnection: journal.record)
        session.start()
        try await journal.wait("the process") { _ in process.donesWaiting != nil }
        // Far more than the socket's buffer and the limit together.
        for _ in 0..<(MQTTLinkProcess.outboxLimit * 8) { session.messageDone() }
        let waiting = try #require(process.donesWaiting, "the process ended")
        #expect(waiting <= MQTTLinkProcess.outboxLimit)
        await session.shutdown(timeout: .seconds(10))
    }

    @Test(
        .enabled(
            if: MosquittoBroker.isAvailable && FileManager.default.isExecutableFile(atPath: islandd),
            "mosquitto or islandd is missing"))
    func aSessionGoesOnThroughANewProcessWhenItsProcessIsKilled() async throws {
        let broker = try await MosquittoBroker(users: ["alice": "alice-secret"], acl: "user alice\ntopic readwrite test/#")
        do {
            let journal = Journal()
            let process = try MQTTLinkProcess(
                executable: Self.islandd, arguments: ["--mqtt-link", String(Self.headroom)],
                frameLimit: MQTTLinkProcess.frameLimit(for: Self.configuration),
                backoff: ReconnectBackoff(first: 0.05, maximum: 0.2), log: journal.record)
            var configuration = Self.configuration
            configuration.broker = MQTTBrokerAddress(host: "127.0.0.1", port: broker.port, secure: false)
            (configuration.username, configuration.password) = ("alice", "alice-secret")
            let session = try process.session(configuration, onMessage: journal.record, onConnection: journal.record)
            try session.subscribe("test/a")
            session.start()
            func connections(_ journal: Journal) -> Int { journal.events.count(where: { if case .connected = $0 { true } else { false } }) }
            try await journal.wait("the connection") { connections($0) >= 1 }
            // Its own message comes back through the broker: subscribed, and publishing.
            try await journal.wait("its own message") { journal in
                if journal.messages.isEmpty { try? session.publish("test/a", payload: Array("one".utf8), qos: 1, retain: false) }
                return !journal.messages.isEmpty
            }
            let first = process.pid
            #expect(first > 0)
            kill(first, SIGKILL)
            try await journal.wait("a new process, connected") { connections($0) >= 2 && process.pid != 0 && process.pid != first }
            #expect(journal.events.contains { if case .disconnected(let reason, _) = $0 { reason.contains("signal 9") } else { false } })
            let before = journal.messages.count
            try await journal.wait("a message through the new process") { journal in
                if journal.messages.count == before { try? session.publish("test/a", payload: Array("two".utf8), qos: 1, retain: false) }
                return journal.messages.count > before
            }
            #expect(journal.messages.last?.topic == "test/a")
            await session.shutdown(timeout: .seconds(10))
            await broker.remove()
        } catch {
            await broker.remove()
            throw error
        }
    }

    static let islandd = productsDirectory.appendingPathComponent("islandd").path
    /// No data limit under a sanitizer (`scripts/sanitize.sh`), whose shadow memory none allows.
    static let headroom = (ProcessInfo.processInfo.environment["ISLAND_SANITIZER"] ?? "").isEmpty ? MQTTLinkChild.defaultHeadroom : 0
}
