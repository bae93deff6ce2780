#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProcessTesting
import Testing

/// Runs a case of `systemd-environment-probe` in a process of its own, whose environment is
/// `environment` and nothing else (see the probe for why: this process never changes its
/// own), and returns what it printed, by name. `ownPID` names variables the probe sets to its
/// own process id, `options` are the probe's others; `stderr` is where its standard error
/// goes (a file in `directory`, unless given).
func probe(
    _ scenario: String, environment: [String: String] = [:], ownPID: [String] = [], options: [String] = [],
    in directory: String, stderr: String? = nil
) async throws -> [String: String] {
    let output = "\(directory)/probe.out"
    let status = try await runToCompletion(
        productsDirectory.appendingPathComponent("systemd-environment-probe").path,
        [scenario] + ownPID.flatMap { ["--own-pid", $0] } + options, environment: environment,
        stdout: output, stderr: stderr ?? "\(directory)/probe.err", timeout: .seconds(60))
    try #require(status == 0, "the probe's case \(scenario) ended with \(status)")
    let text = try String(contentsOfFile: output, encoding: .utf8)
    try? FileManager.default.removeItem(atPath: output)
    return Dictionary(
        text.split(separator: "\n").map { line in
            let parts = line.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }, uniquingKeysWith: { _, last in last })
}

/// A fresh directory under the system temp directory; the caller removes it.
func makeTemporaryDirectory() throws -> String {
    // Short on purpose: the notify test binds a socket in here and sun_path holds 108 bytes.
    var template = Array("/tmp/sdtest.XXXXXX".utf8CString)
    return try #require(mkdtemp(&template).map { String(cString: $0) })
}

/// A fresh directory under the system temp directory, removed after `body`.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = try makeTemporaryDirectory()
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
