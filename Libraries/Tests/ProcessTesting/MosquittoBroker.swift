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
    package var port: Int { ports.ports[0] }
    /// TLS, password authentication.
    package var tlsPort: Int { ports.ports[1] }
    /// TLS with a client certificate, whose common name is the user name (no password).
    package var certificatePort: Int { ports.ports[2] }
    /// Held from `init` until `remove()`; a restart keeps them, as a broker that comes back does.
    private let ports: HeldPorts
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
        ports = try HeldPorts(count: 3)
        try await makeCertificates(clients: certificates)
        try Data().write(to: URL(fileURLWithPath: passwords))
        for (user, password) in users.sorted(by: { $0.key < $1.key }) {
            try await Self.run("/usr/bin/mosquitto_passwd", ["-b", passwords, user, password])
        }
        try acl.write(toFile: directory + "/acl", atomically: true, encoding: .utf8)
        try writeConfiguration()
        try await start()
    }

    /// mosquitto.conf.
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

    /// Starts the broker (again, on the ports it had) and returns once it listens on all three.
    package func start() async throws {
        let logged = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
        let started = try await BackgroundProcess(
            "/usr/sbin/mosquitto", ["-c", directory + "/mosquitto.conf"], environment: nil,
            stdout: directory + "/stdout", stderr: directory + "/stderr")
        process.set(started)
        // mosquitto logs that it runs once every listener is open, and exits on a port it cannot
        // bind. A connection that succeeds is no proof: a port it failed to bind may be another
        // process's listener (a run of 2026-12-07 went on against a broker that had exited so).
        // Generous: the bound only keeps a broker that never runs from hanging the test; looked
        // at once more after it, as this task may wake long after it on a loaded machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let since = logSince(logged)
            if since.contains("Error:") { break }
            if since.contains(" running") { return }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        await stop()
        Issue.record(
            "mosquitto did not start on \(port), \(tlsPort), \(certificatePort): \(logSince(logged)) \((try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "")"
        )
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

    /// Stops the broker, lets its ports go and removes its directory.
    package func remove() async {
        await stop()
        ports.release()
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
}

/// Loopback ports for a server that binds them itself, held from the moment they are chosen
/// until `release`: each by a socket bound to it with SO_REUSEADDR that never listens. A port
/// found free and closed again could be taken by another test's server or an outgoing
/// connection before the broker binds it (or while it restarts); Linux hands a bind to port 0
/// and a connection's local port only ports no socket is bound to, yet lets a server that sets
/// SO_REUSEADDR on its listener, as mosquitto does, bind and listen beside a socket that does
/// not listen. The end-to-end suite holds its brokers' ports the same way (`harness/broker.py`).
private final class HeldPorts: Sendable {
    let ports: [Int]
    private let sockets: Mutex<[Int32]>

    init(count: Int) throws {
        var sockets: [Int32] = []
        var ports: [Int] = []
        for _ in 0..<count {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var yes: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
                }
            }
            guard bound else {
                close(socket)
                sockets.forEach { close($0) }
                throw POSIXError(.EADDRNOTAVAIL)
            }
            sockets.append(socket)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        self.ports = ports
        self.sockets = Mutex(sockets)
    }

    func release() {
        sockets.withLock { sockets in
            sockets.forEach { close($0) }
            sockets = []
        }
    }

    deinit { release() }
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
