#if canImport(Glibc)
import Glibc
#endif

/// Why `readSmallFile` failed, in the words the system uses.
package enum SmallFileError: Error, Equatable, CustomStringConvertible {
    /// `open` or `read` failed with this `errno`.
    case system(errno: Int32)
    /// The file holds more than `limit` bytes.
    case tooLarge(limit: Int)
    /// A FIFO, a device, a socket or a directory where a regular file was asked for.
    case notRegularFile
    /// Text was asked for (`readRegularText`), and the bytes are not UTF-8.
    case notUTF8

    package var description: String {
        switch self {
        case .system(let code): String(cString: strerror(code))
        case .tooLarge(let limit): "larger than \(limit) bytes"
        case .notRegularFile: "not a regular file"
        case .notUTF8: "not valid UTF-8"
        }
    }
}

/// Reads a file of at most `limit` bytes as a stream, so character devices and pipes work
/// too; a larger file is refused without being held in memory.
package func readSmallFile(_ path: String, limit: Int) throws(SmallFileError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { throw .system(errno: errno) }
    defer { close(fd) }
    return try readSmallFile(descriptor: fd, limit: limit)
}

/// Reads what is left of an open file, at most `limit` bytes; the caller closes `fd`.
package func readSmallFile(descriptor fd: Int32, limit: Int) throws(SmallFileError) -> [UInt8] {
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

/// Reads the regular file at `path`, at most `limit` bytes, from a folder other programs can
/// write: whatever is there — a FIFO, a device, a socket, a directory, an endless file, a
/// symbolic link to any of them — is refused without blocking and without being opened for
/// reading. Only a regular file is read, and of it no more than `limit` bytes.
///
/// The name is opened with `O_PATH` first, which neither waits for a FIFO's writer nor calls a
/// device's driver; only once `fstat` shows a regular file is that same file (not whatever the
/// name points to by then) opened for reading, through `/proc/self/fd`, non-blocking.
/// - Parameter followingLinks: whether symbolic links are followed to the file (a Flatpak's
///   exported desktop entries are links); false refuses a final link as not a regular file.
package func readRegularFile(_ path: String, limit: Int, followingLinks: Bool) throws(SmallFileError) -> [UInt8] {
    let located = open(path, openPathOnly | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
    guard located >= 0 else { throw .system(errno: errno) }
    defer { close(located) }
    var info = stat()
    guard fstat(located, &info) == 0 else { throw .system(errno: errno) }
    guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
    guard Int(info.st_size) <= limit else { throw .tooLarge(limit: limit) }
    let reading = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK
    var fd = open("/proc/self/fd/\(located)", reading)
    if fd < 0 && errno == ENOENT {
        // No /proc: the name again, and only if it still is the file just looked at.
        fd = open(path, reading | (followingLinks ? 0 : O_NOFOLLOW))
        var again = stat()
        if fd >= 0 && (fstat(fd, &again) != 0 || again.st_dev != info.st_dev || again.st_ino != info.st_ino) {
            close(fd)
            throw .notRegularFile
        }
    }
    guard fd >= 0 else { throw .system(errno: errno) }
    defer { close(fd) }
    // A file that grows while it is read (or reports no size: /proc's) still stops at `limit`.
    return try readSmallFile(descriptor: fd, limit: limit)
}

/// The text of the regular file at `path`, read as `readRegularFile` reads it: what a reader
/// of a configuration, a desktop entry or a password file wants, refused by name (`notUTF8`)
/// when it is not UTF-8.
package func readRegularText(_ path: String, limit: Int, followingLinks: Bool) throws(SmallFileError) -> String {
    let bytes = try readRegularFile(path, limit: limit, followingLinks: followingLinks)
    guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
    return text
}

/// `O_PATH`, which Glibc's module leaves out (it is a GNU extension): the same value on every
/// Linux architecture Swift builds for (`include/uapi/asm-generic/fcntl.h`).
let openPathOnly: Int32 = 0o10000000
