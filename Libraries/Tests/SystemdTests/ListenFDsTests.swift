#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import Systemd

extension ProcessEnvironmentTests {
    @Suite struct SocketActivationTests {
        @Test func notSocketActivatedGivesNothing() {
            withEnvironment(["LISTEN_FDS": nil, "LISTEN_PID": nil, "LISTEN_FDNAMES": nil]) {
                #expect(SocketActivation.takeListenedSockets().isEmpty)
            }
        }

        @Test func socketsForAnotherProcessAreIgnored() {
            withEnvironment(["LISTEN_FDS": "1", "LISTEN_PID": "1", "LISTEN_FDNAMES": "varlink"]) {
                #expect(SocketActivation.takeListenedSockets(unsetEnvironment: false).isEmpty)
            }
        }

        /// SD_LISTEN_FDS_START; CSystemd is not visible to the tests.
        static let firstListenedFD: Int32 = 3

        static func isOpen(_ fd: Int32) -> Bool {
            fcntl(fd, F_GETFD) != -1
        }

        // Taking a real inherited socket is tested end to end, under systemd-socket-activate,
        // in IntegrationTests/SocketActivationTests: faking LISTEN_FDS here would have to
        // claim descriptors that other tests running in this process own.

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
}
