import Foundation
import Glibc
import IslandCore

/// Reads the configuration files of DESIGN.md's INI format: the main file, then the
/// `.conf` drop-ins of `<file>.d/` in file-name order. A missing main file is the same as an
/// empty one, so the daemon starts on its defaults with no configuration at all.
enum ConfigurationLoader {
    static func files(for mainFile: String) throws -> [(path: String, contents: String)] {
        var files: [(path: String, contents: String)] = []
        let fm = FileManager.default
        if fm.fileExists(atPath: mainFile) {
            files.append((mainFile, try read(mainFile)))
        }
        let dropIns = mainFile + ".d"
        if let names = try? fm.contentsOfDirectory(atPath: dropIns) {
            for name in names.sorted() where name.hasSuffix(".conf") {
                let path = dropIns + "/" + name
                files.append((path, try read(path)))
            }
        }
        return files
    }

    /// Configuration is a few lines of INI; anything this large is a mistake, not a file to hold
    /// in memory.
    static let maximumFileSize = 1 << 20

    /// A file's text. Read as a stream, so `/dev/null` or a pipe serve as an empty or generated
    /// configuration; failures are named the way the system names them (`strerror`).
    static func read(_ path: String) throws(ConfigurationFileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ConfigurationFileError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= maximumFileSize {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ConfigurationFileError(path: path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes += chunk[..<n]
        }
        guard bytes.count <= maximumFileSize else {
            throw ConfigurationFileError(path: path, reason: "larger than \(maximumFileSize) bytes")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationFileError(path: path, reason: "not valid UTF-8")
        }
        return text
    }

    static func load(mainFile: String) throws -> IslandConfiguration {
        try IslandConfiguration.parse(files: files(for: mainFile))
    }
}

/// A configuration file that could not be read, named.
struct ConfigurationFileError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "\(path): \(reason)" }
}
