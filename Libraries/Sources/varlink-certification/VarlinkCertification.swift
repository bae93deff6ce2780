import ArgumentParser
import Foundation
import Logging
import Systemd
import UnixSignals
import VarlinkCore
import VarlinkNIO

@main
struct VarlinkCertification: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "varlink-certification",
        abstract: "Serve or exercise the org.varlink.certification interface.",
        discussion: """
            As a server (the default) it serves org.varlink.certification on --varlink, or on \
            the socket systemd passes it (socket activation), and reports READY=1 to systemd \
            once it listens. As a client (--client) it walks a server through Start, \
            Test01 … Test11 and End, checks every reply, and prints "Certification passed".
            Test peers: the reference Python implementation's varlink/tests/test_certification.py.
            """)

    @Flag(help: "Act as the client of a certification server.")
    var client = false

    @Option(name: .customLong("varlink"), help: ArgumentHelp("The address to serve or call.", valueName: "unix:PATH"))
    var address: String?

    mutating func run() async throws {
        JournalLogHandler.bootstrap()
        let path: String?
        if let address {
            guard address.hasPrefix("unix:"), address.count > 5 else {
                throw ValidationError("--varlink must be unix:PATH, got '\(address)'")
            }
            // The reference implementation appends ";mode=…" options; only the path matters here.
            path = String(address.dropFirst(5).split(separator: ";", maxSplits: 1)[0])
        } else {
            path = nil
        }
        if client {
            guard let path else { throw ValidationError("--client needs --varlink=unix:PATH") }
            try await runClient(path: path)
        } else {
            try await runServer(path: path)
        }
    }

    private func runClient(path: String) async throws {
        print("Connecting to unix:\(path)\n")
        let connection = try await VarlinkClient.connect(unixPath: path)
        do {
            try await CertificationClient(client: connection, log: { print($0) }).run()
        } catch {
            await connection.close()
            print("Certification failed: \(error)")
            throw ExitCode.failure
        }
        await connection.close()
        print("Certification passed")
    }

    private func runServer(path: String?) async throws {
        let logger = Logger(label: "varlink-certification")
        let service = VarlinkService(
            info: VarlinkServiceInfo(
                vendor: "Island", product: "varlink-certification", version: "1",
                url: "https://github.com/island-linux/island"),
            implementations: [CertificationService().implementation], connectionErrors: .silent, logger: logger)
        let server = VarlinkServer(service: service, logger: logger)

        let inherited = SocketActivation.takeListenedSockets()
        if !inherited.isEmpty {
            for socket in inherited { try await server.adopt(listeningSocket: socket.fd) }
        } else if let path {
            try await server.bind(unixPath: path)
        } else {
            throw ValidationError("give --varlink=unix:PATH, or start it socket-activated")
        }
        print("Listening on \(path.map { "unix:\($0)" } ?? "the activated socket")")
        ServiceNotifier.ready(status: "Serving org.varlink.certification")

        await Self.waitForTermination()
        ServiceNotifier.stopping()
        await server.shutdown()
    }

    /// Returns on SIGTERM or SIGINT.
    private static func waitForTermination() async {
        for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) { return }
    }
}
