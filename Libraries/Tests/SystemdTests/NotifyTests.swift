#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

@testable import Systemd

/// `sd_notify(3)` as a supervised service does it: each case runs in the probe, whose
/// NOTIFY_SOCKET names a datagram socket of the test's own.
@Suite struct NotifyTests {
    /// Runs the probe's `scenario` with NOTIFY_SOCKET naming a datagram socket bound here; returns
    /// what the probe printed and every datagram the socket got, in order.
    static func notifications(
        _ scenario: String, environment: [String: String] = [:]
    ) async throws -> (printed: [String: String], received: [String]) {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/notify"
        let fd = try makeBoundUnixSocket(type: Int32(SOCK_DGRAM.rawValue), path: path)
        defer { close(fd) }
        let printed = try await probe(scenario, environment: environment.merging(["NOTIFY_SOCKET": path]) { $1 }, in: directory)
        // Delivery on AF_UNIX is synchronous: every datagram the probe sent is queued by the
        // time it has exited.
        var received: [String] = []
        while let datagram = receive(fd) { received.append(datagram) }
        return (printed, received)
    }

    /// What the probe's `notify` case sends, in order, each printed with whether it was sent.
    static let lifecycleCalls = ["ready-with-status", "ready", "status", "reloading", "stopping", "watchdog", "custom"]

    static func receive(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    @Test func lifecycleMessagesArriveExactly() async throws {
        let (printed, received) = try await Self.notifications("notify")
        #expect(printed["supervised"] == "true")
        for call in Self.lifecycleCalls {
            #expect(printed[call] == "true", "\(call) reported that it was not sent")
        }
        try #require(received.count == Self.lifecycleCalls.count, "\(received)")
        #expect(received[0] == "READY=1\nSTATUS=serving on /run/island.sock")
        #expect(received[1] == "READY=1")
        #expect(received[2] == "STATUS=42 peers  ")
        let reload = received[3].split(separator: "\n")
        #expect(reload.count == 2)
        #expect(reload.first == "RELOADING=1")
        let stamp = try #require(reload.last?.split(separator: "=", maxSplits: 1))
        #expect(stamp.first == "MONOTONIC_USEC")
        let microseconds = try #require(stamp.last.flatMap { UInt64($0) })
        let before = try #require(printed["before-reloading"].flatMap { UInt64($0) })
        let after = try #require(printed["after-reloading"].flatMap { UInt64($0) })
        #expect((before...after).contains(microseconds))
        #expect(received[4] == "STOPPING=1")
        #expect(received[5] == "WATCHDOG=1")
        #expect(received[6] == "STATUS=custom\nERRNO=0")
    }

    @Test func invalidKeysAreNotSent() async throws {
        let (printed, received) = try await Self.notifications("notify-invalid-keys")
        #expect(printed == ["newline-in-key": "false", "lower-case-key": "false", "nothing": "false"])
        #expect(received.isEmpty)
    }

    @Test func withoutNotifySocketNothingIsSent() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let printed = try await probe("notify", in: directory)
        #expect(printed["supervised"] == "false")
        for call in Self.lifecycleCalls {
            #expect(printed[call] == "false", "\(call) reported a message sent with no socket to send it to")
        }
    }

    @Test func watchdogIntervalFollowsTheEnvironment() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let forThisProcess = try await probe(
            "watchdog-interval", environment: ["WATCHDOG_USEC": "2000000"], ownPID: ["WATCHDOG_PID"], in: directory)
        #expect(forThisProcess["interval"] == "\(Duration.seconds(2))")
        let forAnother = try await probe(
            "watchdog-interval", environment: ["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"], in: directory)
        #expect(forAnother["interval"] == "none")
        #expect(try await probe("watchdog-interval", in: directory)["interval"] == "none")
    }
}
