#if canImport(Glibc)
import Glibc
#endif

/// Why `readSmallFile` failed, in the words the system uses.
public enum SmallFileError: Error, Equatable, CustomStringConvertible {
    /// `open` or `read` failed with this `errno`.
    case system(errno: Int32)
    /// The file holds more than `limit` bytes.
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .system(let code): String(cString: strerror(code))
        case .tooLarge(let limit): "larger than \(limit) bytes"
        }
    }
}

/// Reads a file of at most `limit` bytes as a stream, so character devices and pipes work
/// too; a larger file is refused without being held in memory.
public func readSmallFile(_ path: String, limit: Int) throws(SmallFileError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { throw .system(errno: errno) }
    defer { close(fd) }
    return try readSmallFile(descriptor: fd, limit: limit)
}

/// Reads what is left of an open file, at most `limit` bytes; the caller closes `fd`.
public func readSmallFile(descriptor fd: Int32, limit: Int) throws(SmallFileError) -> [UInt8] {
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count == 0 { return contents }
        if count < 0 {
            if errno == EINTR { continue }
            throw .system(errno: errno)
        }
        contents.append(contentsOf: chunk[..<count])
        if contents.count > limit { throw .tooLarge(limit: limit) }
    }
}
