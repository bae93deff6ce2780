import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Unix-socket client that speaks bytes, not Varlink, so tests can send what no
/// well-behaved client would. Reads poll without blocking and sleep between polls, so a
/// waiting test leaves the cooperative thread pool to the server's tasks, and every read
/// has a deadline, so a broken server fails the test instead of hanging it.
final class RawConnection {
    let fd: Int32
    private var pending: [UInt8] = []

    struct Timeout: Error {}

    let receiveTimeout: Duration

    /// Sanitized builds run several times slower (scripts/sanitize.sh sets ISLAND_SANITIZER):
    /// deadlines stretch with them, what is asserted does not.
    static let slowdown = ProcessInfo.processInfo.environment["ISLAND_SANITIZER"] == nil ? 1 : 5

    /// Every read waits for something that is expected to come: the deadline only keeps a
    /// broken server from hanging the test, and is generous so a loaded machine never meets it.
    init(path: String, receiveTimeout: Duration = .seconds(30 * RawConnection.slowdown)) throws {
        self.receiveTimeout = receiveTimeout
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // No close here on failure: deinit runs for a class whose init throws once every
        // property is set, and closing twice could close a descriptor someone else just got.
        guard result == 0 else { throw POSIXError(.init(rawValue: errno)!) }
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.init(rawValue: errno)!) }
            offset += n
        }
    }

    func send(_ text: String, terminated: Bool = true) throws {
        try send(Array(text.utf8) + (terminated ? [0] : []))
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// The next NUL-terminated message, or nil at end of stream.
    func readMessage() async throws -> String? {
        let deadline = ContinuousClock.now + receiveTimeout
        while true {
            if let nul = pending.firstIndex(of: 0) {
                let message = String(decoding: pending[..<nul], as: UTF8.self)
                pending.removeSubrange(...nul)
                return message
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n == 0 { return nil }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    guard ContinuousClock.now < deadline else { throw Timeout() }
                    try await Task.sleep(for: .milliseconds(2))
                    continue
                }
                if errno == ECONNRESET { return nil }
                throw POSIXError(.init(rawValue: errno)!)
            }
            pending.append(contentsOf: chunk[..<n])
        }
    }

    /// Whether the server has sent anything not read yet, without waiting: what a peer on the
    /// same machine wrote before now is in the socket already.
    func hasBytesWaiting() throws -> Bool {
        if !pending.isEmpty { return true }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        if n >= 0 { return n > 0 }
        if errno == EAGAIN || errno == EWOULDBLOCK { return false }
        throw POSIXError(.init(rawValue: errno)!)
    }

    /// The next message parsed as a JSON object.
    func readReply() async throws -> [String: Any]? {
        guard let text = try await readMessage() else { return nil }
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// True when the server has closed the connection (after any messages left unread).
    func isClosedByPeer() async throws -> Bool {
        while let _ = try await readMessage() {}
        return true
    }
}
