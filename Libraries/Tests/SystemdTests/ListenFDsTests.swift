#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

@testable import Systemd

@Suite struct SocketActivationTests {
    @Test func notSocketActivatedGivesNothing() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try await probe("listened-sockets", in: directory)["sockets"] == "")
    }

    /// The manager's variables name the process they are for; the same ones naming another
    /// process give nothing, and taking them clears them either way, so that children do not
    /// take descriptors meant for their parent.
    @Test(arguments: [true, false])
    func socketsAreTakenOnlyWhenMeantForThisProcess(meantForThisProcess: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var environment = ["LISTEN_FDS": "1", "LISTEN_FDNAMES": "varlink"]
        if !meantForThisProcess { environment["LISTEN_PID"] = "1" }
        let seen = try await probe(
            "listened-sockets", environment: environment, ownPID: meantForThisProcess ? ["LISTEN_PID"] : [],
            options: ["--descriptor-3"], in: directory)
        #expect(seen["sockets"] == (meantForThisProcess ? "3:varlink" : ""))
        #expect(seen["environment-cleared"] == "true")
    }

    // Serving a real inherited socket is tested end to end, started the way systemd starts
    // services, in VarlinkCertificationTests' SocketActivationTests.

    @Test func onlyListeningUnixStreamSocketsQualify() throws {
        try withTemporaryDirectory { directory in
            let stream = try makeBoundUnixSocket(type: Int32(SOCK_STREAM.rawValue), path: "\(directory)/s")
            defer { close(stream) }
            #expect(!SocketActivation.isUnixStreamListener(stream), "bound but not listening")
            try #require(listen(stream, 1) == 0)
            #expect(SocketActivation.isUnixStreamListener(stream))

            let datagram = try makeBoundUnixSocket(type: Int32(SOCK_DGRAM.rawValue), path: "\(directory)/d")
            defer { close(datagram) }
            #expect(!SocketActivation.isUnixStreamListener(datagram))
            #expect(!SocketActivation.isUnixStreamListener(-1))
        }
    }
}
