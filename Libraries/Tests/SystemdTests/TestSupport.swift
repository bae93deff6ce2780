#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Parent of every suite that changes the process environment.
///
/// setenv(3) is not thread-safe and these variables are process-wide, so such suites must not
/// run alongside each other; `.serialized` applies to everything nested in here.
@Suite(.serialized)
struct ProcessEnvironmentTests {}

/// Sets (or, with `nil`, unsets) environment variables for the duration of `body`, then
/// restores what was there before.
func withEnvironment<Result>(
    _ values: [String: String?],
    _ body: () throws -> Result
) rethrows -> Result {
    let previous = values.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
    defer {
        for (name, value) in previous {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    for (name, value) in values {
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    return try body()
}

/// A fresh directory under the system temp directory, removed after `body`.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    // Short on purpose: the notify test binds a socket in here and sun_path holds 108 bytes.
    var template = Array("/tmp/sdtest.XXXXXX".utf8CString)
    let path = try #require(mkdtemp(&template).map { String(cString: $0) })
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Binds an `AF_UNIX` socket of `type` at `path`; the caller closes it.
func makeBoundUnixSocket(type: Int32, path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
    try #require(fd >= 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(path.utf8)
    try #require(pathBytes.count < MemoryLayout.size(ofValue: address.sun_path))
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: pathBytes)
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    if result != 0 { close(fd) }
    try #require(result == 0, "bind(\(path)) failed: errno \(errno)")
    return fd
}
