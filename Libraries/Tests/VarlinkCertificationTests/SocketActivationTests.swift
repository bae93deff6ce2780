import Foundation
import ProcessTesting
import Testing

/// The certification server started the way systemd starts services: on a socket it
/// inherits, reporting readiness on a notify socket this test owns.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SocketActivationTests {
    @Test func servesAnInheritedSocketAndReportsReadiness() async throws {
        let dir = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/activated.sock"
        let notify = try NotifySocket(path: dir + "/notify")

        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        // The activator passes on only what -E names: the sanitizer options too, under
        // scripts/sanitize.sh, so the service's reports land where the script looks for them.
        let passed = ["NOTIFY_SOCKET"] + ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "SWIFT_BACKTRACE"].filter { environment[$0] != nil }
        try await Harness.withBackground(
            "/usr/bin/env",
            ["systemd-socket-activate", "-l", socket, "--fdname=varlink"] + passed.flatMap { ["-E", $0] } + [Harness.product("varlink-certification")],
            environment: environment, log: dir + "/activate.log"
        ) { activator in
            try await Harness.waitForSocket(socket)

            // The first connection starts the service, which must then answer on the inherited socket.
            let client = try await Harness.run(Harness.product("varlink-certification"), ["--client", "--varlink=unix:\(socket)"])
            #expect(client.output.contains("Certification passed"), "\(client.output)\n\(client.error)\n\(activator.output)")

            let messages = try await notify.receive(until: { $0.contains("READY=1") })
            #expect(messages.contains { $0.contains("READY=1") && $0.contains("STATUS=") }, "\(messages)")

            await activator.stop()
            let stopping = try await notify.receive(until: { $0.contains("STOPPING=1") })
            #expect(stopping.contains { $0.contains("STOPPING=1") }, "\(stopping)")
            #expect(activator.output.contains("Listening on the activated socket"), "\(activator.output)")
        }
    }
}

/// An AF_UNIX datagram socket standing in for systemd's notify socket.
final class NotifySocket: Sendable {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno)!) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Datagrams received until one satisfies `done`; throws if none arrives within 30 s (a
    /// bound for what is expected to come, which returns as soon as it does). Received on a
    /// thread of its own (`offThePool`): `recv` blocks it until a datagram comes.
    func receive(until done: @escaping @Sendable (String) -> Bool) async throws -> [String] {
        try await offThePool { try Self.receive(self.fd, until: done) }
    }

    private static func receive(_ fd: Int32, until done: (String) -> Bool) throws -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
            let message = String(decoding: buffer[..<n], as: UTF8.self)
            messages.append(message)
            if done(message) { return messages }
        }
    }
}
