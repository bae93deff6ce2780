#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import Systemd

extension ProcessEnvironmentTests {
    @Suite struct NotifyTests {
        /// Runs `body` with NOTIFY_SOCKET pointing at a datagram socket of our own.
        static func withNotifySocket(_ body: (Int32) throws -> Void) throws {
            try withTemporaryDirectory { directory in
                let path = "\(directory)/notify"
                let fd = try makeBoundUnixSocket(type: Int32(SOCK_DGRAM.rawValue), path: path)
                defer { close(fd) }
                // A missing datagram must fail the test, not hang it (generous: delivery on
                // AF_UNIX is synchronous, so one that was sent is there at once).
                var timeout = timeval(tv_sec: 30, tv_usec: 0)
                try #require(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0)
                try withEnvironment(["NOTIFY_SOCKET": path]) { try body(fd) }
            }
        }

        static func receive(_ fd: Int32, flags: Int32 = 0) -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, flags)
            guard count >= 0 else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }

        @Test func lifecycleMessagesArriveExactly() throws {
            try Self.withNotifySocket { fd in
                #expect(ServiceNotifier.isSupervised)

                #expect(ServiceNotifier.ready(status: "serving\non /run/island.sock"))
                #expect(Self.receive(fd) == "READY=1\nSTATUS=serving on /run/island.sock")

                #expect(ServiceNotifier.ready())
                #expect(Self.receive(fd) == "READY=1")

                #expect(ServiceNotifier.status("42 peers\r\n"))
                #expect(Self.receive(fd) == "STATUS=42 peers  ")

                let before = ServiceNotifier.monotonicMicroseconds()
                #expect(ServiceNotifier.reloading())
                let after = ServiceNotifier.monotonicMicroseconds()
                let reload = try #require(Self.receive(fd)).split(separator: "\n")
                #expect(reload.count == 2)
                #expect(reload.first == "RELOADING=1")
                let stamp = try #require(reload.last?.split(separator: "=", maxSplits: 1))
                #expect(stamp.first == "MONOTONIC_USEC")
                let microseconds = try #require(stamp.last.flatMap { UInt64($0) })
                #expect((before...after).contains(microseconds))

                #expect(ServiceNotifier.stopping())
                #expect(Self.receive(fd) == "STOPPING=1")

                #expect(ServiceNotifier.watchdog())
                #expect(Self.receive(fd) == "WATCHDOG=1")

                #expect(ServiceNotifier.send(["STATUS": "custom", "ERRNO": "0"]))
                #expect(Self.receive(fd) == "STATUS=custom\nERRNO=0")
            }
        }

        @Test func invalidKeysAreNotSent() throws {
            try Self.withNotifySocket { fd in
                #expect(!ServiceNotifier.send(["READY=1\nSTATUS": "x"]))
                #expect(!ServiceNotifier.send([("lower", "x")]))
                #expect(!ServiceNotifier.send([]))
                // Delivery on AF_UNIX is synchronous, so an empty queue now means nothing was sent.
                #expect(Self.receive(fd, flags: Int32(MSG_DONTWAIT)) == nil)
            }
        }

        @Test func withoutNotifySocketNothingIsSent() {
            withEnvironment(["NOTIFY_SOCKET": nil]) {
                #expect(!ServiceNotifier.isSupervised)
                #expect(!ServiceNotifier.send(["READY": "1"]))
                #expect(!ServiceNotifier.ready(status: "x"))
                #expect(!ServiceNotifier.watchdog())
            }
        }

        @Test func watchdogIntervalFollowsTheEnvironment() {
            withEnvironment(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(getpid())"]) {
                #expect(ServiceNotifier.watchdogInterval == .seconds(2))
            }
            withEnvironment(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"]) {
                #expect(ServiceNotifier.watchdogInterval == nil)  // meant for another process
            }
            withEnvironment(["WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) {
                #expect(ServiceNotifier.watchdogInterval == nil)
            }
        }
    }
}
