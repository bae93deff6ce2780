import Foundation
import Glibc
import Synchronization
import Testing

/// A real mosquitto broker for one test, on loopback ports of its own, with everything a
/// production broker of Island's has: TLS (a CA, a server certificate for localhost and
/// 127.0.0.1, and client certificates, all made here with `openssl`), per-client passwords
/// (`mosquitto_passwd`), an `acl_file`, and persistence, so a restart keeps sessions and what
/// they queued. `stop()` and `start()` again model a broker that goes away and comes back.
package final class MosquittoBroker: Sendable {
    /// Whether mosquitto and its tools are installed; tests that need a broker are skipped
    /// otherwise (`scripts/install-deps.sh` installs them).
    package static let isAvailable: Bool = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto_passwd", "/usr/bin/openssl"]
        .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

    package let directory: String
    /// Plain MQTT, password authentication.
    package var port: Int { ports.withLock { $0.plain } }
    /// TLS, password authentication.
    package var tlsPort: Int { ports.withLock { $0.tls } }
    /// TLS with a client certificate, whose common name is the user name (no password).
    package var certificatePort: Int { ports.withLock { $0.certificate } }
    /// Picked before the first start, and again while that start finds one of them taken
    /// (`init`); a restart keeps them, as a broker that comes back does.
    private let ports: Mutex<Ports>
    package var caFile: String { directory + "/ca.crt" }
    package var log: String { directory + "/mosquitto.log" }
    /// The users' passwords, as `mosquitto_passwd` writes them.
    private var passwords: String { directory + "/passwd" }
    private let process = LockedProcess()

    /// - Parameters:
    ///   - users: user name → password.
    ///   - acl: the ACL file's text (mosquitto's `user`, `topic`, `pattern` lines).
    ///   - certificates: common names to make client certificates for (`certificate(for:)`).
    package init(users: [String: String], acl: String, certificates: [String] = []) async throws {
        directory = "/tmp/island-mqtt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        ports = Mutex(try Self.freePorts())
        try await makeCertificates(clients: certificates)
        try Data().write(to: URL(fileURLWithPath: passwords))
        for (user, password) in users.sorted(by: { $0.key < $1.key }) {
            try await Self.run("/usr/bin/mosquitto_passwd", ["-b", passwords, user, password])
        }
        try acl.write(toFile: directory + "/acl", atomically: true, encoding: .utf8)
        // A port picked free may be another process's by the time the broker binds it (the
        // other tests' and the end-to-end suite's listeners, which run beside these; seen twice
        // at a load of 10-16, 2026-12-07): mosquitto then says so and exits, and the first
        // start tries fresh ports, a few times.
        for attempt in 1...5 {
            try writeConfiguration()
            if try await launch() == .listening { return }
            guard attempt < 5 else { break }
            let fresh = try Self.freePorts()
            ports.withLock { $0 = fresh }
        }
        Issue.record("mosquitto found a port taken at each of 5 starts, on fresh ports each time")
        throw CancellationError()
    }

    /// The three listeners' ports.
    private struct Ports: Sendable {
        var plain: Int
        var tls: Int
        var certificate: Int
    }

    private static func freePorts() throws -> Ports {
        var picked: [Int] = []
        while picked.count < 3 {
            let candidate = try freePort()
            if !picked.contains(candidate) { picked.append(candidate) }
        }
        return Ports(plain: picked[0], tls: picked[1], certificate: picked[2])
    }

    /// mosquitto.conf, for the ports as they are now.
    private func writeConfiguration() throws {
        try """
        per_listener_settings true
        user \(Self.currentUserName)
        persistence true
        persistence_location \(directory)/data/
        log_dest file \(log)
        log_type error
        log_type warning
        log_type notice
        log_type information
        connection_messages true

        listener \(port) 127.0.0.1
        allow_anonymous false
        password_file \(passwords)
        acl_file \(directory)/acl

        listener \(tlsPort) 127.0.0.1
        allow_anonymous false
        password_file \(passwords)
        acl_file \(directory)/acl
        cafile \(caFile)
        certfile \(directory)/server.crt
        keyfile \(directory)/server.key

        listener \(certificatePort) 127.0.0.1
        allow_anonymous false
        acl_file \(directory)/acl
        cafile \(caFile)
        certfile \(directory)/server.crt
        keyfile \(directory)/server.key
        require_certificate true
        use_identity_as_username true

        """.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    /// The client certificate and key made for `name`.
    package func certificate(for name: String) -> (certificate: String, key: String) {
        (directory + "/client-\(name).crt", directory + "/client-\(name).key")
    }

    /// Starts the broker again, on the ports it had, and returns once it accepts connections.
    package func start() async throws {
        guard try await launch() == .listening else {
            Issue.record("a port of the broker's was taken while it was stopped: \(port), \(tlsPort), \(certificatePort)")
            throw CancellationError()
        }
    }

    private enum Launch: Equatable {
        case listening
        /// mosquitto could not bind one of its ports, and exited.
        case portTaken
    }

    /// Starts mosquitto with the configuration as written, and waits until it accepts
    /// connections on its three ports or says a port is taken.
    private func launch() async throws -> Launch {
        let logged = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
        let started = try await BackgroundProcess(
            "/usr/sbin/mosquitto", ["-c", directory + "/mosquitto.conf"], environment: nil,
            stdout: directory + "/stdout", stderr: directory + "/stderr")
        process.set(started)
        // Generous: the bound only keeps a broker that never listens from hanging the test.
        let deadline = ContinuousClock.now + .seconds(30)
        // Checked once more after the deadline: on a loaded machine this task may wake long
        // after it, while the broker went on starting.
        while true {
            if Self.accepts(port: port) && Self.accepts(port: tlsPort) && Self.accepts(port: certificatePort) { return .listening }
            if logSince(logged).contains("Address already in use") {
                await stop()
                return .portTaken
            }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        await stop()
        Issue.record("mosquitto did not listen within 30 s: \((try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "")")
        throw CancellationError()
    }

    /// What mosquitto logged after the log's first `offset` bytes.
    private func logSince(_ offset: Int) -> String {
        guard let data = FileManager.default.contents(atPath: log), data.count > offset else { return "" }
        return String(decoding: data.dropFirst(offset), as: UTF8.self)
    }

    /// Stops the broker with SIGTERM (it saves its sessions) and waits for its exit.
    package func stop() async {
        await process.take()?.stop()
    }

    /// Stops the broker and removes its directory.
    package func remove() async {
        await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Making it

    /// Started as root, mosquitto becomes the user this names: the test's own, so it can read
    /// the keys and write the persistence directory made here.
    private static var currentUserName: String {
        getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
    }

    private func makeCertificates(clients: [String]) async throws {
        let openssl = "/usr/bin/openssl"
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await Self.run(
            openssl,
            ["req", "-x509"] + key + [
                "-keyout", directory + "/ca.key", "-out", caFile,
                "-days", "2", "-subj", "/CN=Island test CA",
            ])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
        try await sign(name: "server", subject: "/CN=localhost", extensions: directory + "/server.ext")
        for client in clients {
            try await sign(name: "client-\(client)", subject: "/CN=\(client)", extensions: nil)
        }
    }

    private func sign(name: String, subject: String, extensions: String?) async throws {
        let openssl = "/usr/bin/openssl"
        let base = directory + "/" + name
        try await Self.run(
            openssl,
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", base + ".key", "-out", base + ".csr", "-subj", subject,
            ])
        try await Self.run(
            openssl,
            [
                "x509", "-req", "-in", base + ".csr", "-CA", caFile, "-CAkey", directory + "/ca.key",
                "-CAcreateserial", "-out", base + ".crt", "-days", "2",
            ]
                + (extensions.map { ["-extfile", $0] } ?? []))
    }

    private static func run(_ executable: String, _ arguments: [String]) async throws {
        let scratch = "/tmp/island-mqtt-run-\(UUID().uuidString.prefix(8))"
        defer {
            try? FileManager.default.removeItem(atPath: scratch + ".out")
            try? FileManager.default.removeItem(atPath: scratch + ".err")
        }
        let status = try await runToCompletion(executable, arguments, stdout: scratch + ".out", stderr: scratch + ".err", timeout: .seconds(30))
        guard status == 0 else {
            Issue.record("\(executable) \(arguments.joined(separator: " ")) failed: \((try? String(contentsOfFile: scratch + ".err", encoding: .utf8)) ?? "")")
            throw CancellationError()
        }
    }

    /// A loopback port nothing is bound to now, below the kernel's range of ephemeral ports:
    /// a port from that range (the kernel's own pick) may become the local end of any client's
    /// connection meanwhile — the other tests' and processes' — and the broker's bind then
    /// fails. The longer making the certificates takes (a loaded machine), the likelier that
    /// was. Another process could still take a port picked here before the broker binds it: the
    /// first start then picks fresh ports (`init`).
    private static func freePort() throws -> Int {
        let ephemeral =
            (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
        let range = 10_000..<max(ephemeral, 20_000)
        for _ in 0..<100 {
            let candidate = Int.random(in: range)
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(candidate).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            if bound { return candidate }
        }
        throw POSIXError(.EADDRNOTAVAIL)
    }

    private static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// The broker's current process, replaced by each start.
private final class LockedProcess: @unchecked Sendable {
    // @unchecked: `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: BackgroundProcess?

    func set(_ process: BackgroundProcess) {
        lock.withLock { current = process }
    }

    func take() -> BackgroundProcess? {
        lock.withLock {
            defer { current = nil }
            return current
        }
    }
}
