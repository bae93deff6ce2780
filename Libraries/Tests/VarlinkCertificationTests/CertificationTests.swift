import Foundation
import Testing

/// Our Varlink implementation against the reference one (the `varlink` Python package),
/// in both directions, and the reference tools against our server.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CertificationTests {
    @Test func referenceClientCertifiesOurServer() async throws {
        let dir = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/cert.sock"
        try await Harness.withBackground(Harness.product("varlink-certification"), ["--varlink=unix:\(socket)"], log: dir + "/server.log") { server in
            try await Harness.waitForSocket(socket)

            let result = try await Harness.run(
                "/usr/bin/env",
                [
                    "python3", try await Harness.pythonVarlinkTests() + "/test_certification.py",
                    "--client", "--varlink=unix:\(socket)",
                ])
            #expect(result.output.contains("Certification passed"), "\(result.output)\n\(result.error)\n\(server.output)")
            #expect(result.status == 0)
        }
    }

    @Test func ourClientPassesAgainstTheReferenceServer() async throws {
        let dir = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/ref.sock"
        try await Harness.withBackground(
            "/usr/bin/env",
            [
                "python3", try await Harness.pythonVarlinkTests() + "/test_certification.py",
                "--varlink=unix:\(socket)",
            ], log: dir + "/server.log"
        ) { server in
            try await Harness.waitForSocket(socket)

            let result = try await Harness.run(Harness.product("varlink-certification"), ["--client", "--varlink=unix:\(socket)"])
            #expect(result.output.contains("Certification passed"), "\(result.output)\n\(result.error)\n\(server.output)")
            #expect(result.output.contains("Test10: {\"string\":\"Reply number 10\"}"))
            #expect(result.status == 0)
        }
    }

    @Test func referenceCLIListsOurInterfaces() async throws {
        let dir = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/cert.sock"
        try await Harness.withBackground(Harness.product("varlink-certification"), ["--varlink=unix:\(socket)"], log: dir + "/server.log") { server in
            try await Harness.waitForSocket(socket)

            let info = try await Harness.run("/usr/bin/env", ["python3", "-m", "varlink.cli", "info", "unix:\(socket)"])
            for interface in ["org.varlink.service", "org.varlink.certification"] {
                #expect(info.output.contains(interface), "\(info.output)\n\(info.error)")
            }
            // The certification server declares no errors of its own for its connections.
            #expect(!info.output.contains("org.island"), "\(info.output)")
            // The CLI exits 0 even on errors, so the check is on what it printed.
            let help = try await Harness.run("/usr/bin/env", ["python3", "-m", "varlink.cli", "help", "unix:\(socket)/org.varlink.certification"])
            #expect(help.output.contains("method Test11(client_id: string, last_more_replies: []string) -> ()"), "\(help.output)\n\(help.error)")
            let call = try await Harness.run(
                "/usr/bin/env",
                [
                    "python3", "-m", "varlink.cli", "call",
                    "unix:\(socket)/org.varlink.certification.Test01", #"{"client_id":"nobody"}"#,
                ])
            #expect(call.error.contains("org.varlink.certification.ClientIdError"), "\(call.output)\n\(call.error)")
        }
    }

    @Test func everyProtocolFileParsesInTheReferenceScanner() async throws {
        let protocolDirectory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocol")
        let files = try FileManager.default.contentsOfDirectory(atPath: protocolDirectory.path).filter { $0.hasSuffix(".varlink") }
        #expect(!files.isEmpty)
        for file in files {
            let script = "import sys, varlink; i = varlink.Interface(open(sys.argv[1]).read()); print(i.name)"
            let result = try await Harness.run("/usr/bin/env", ["python3", "-c", script, protocolDirectory.appendingPathComponent(file).path])
            #expect(result.status == 0, "\(file): \(result.error)")
            #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) + ".varlink" == file)
        }
    }
}
