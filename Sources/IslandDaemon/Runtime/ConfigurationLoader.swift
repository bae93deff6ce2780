import Foundation
import IslandCore
import Systemd

/// Reads the configuration files, in systemd's INI format: the main file, then the
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

    /// A file's text; `/dev/null` or a pipe serve as an empty or generated configuration.
    static func read(_ path: String) throws(ConfigurationFileError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try readSmallFile(path, limit: maximumFileSize)
        } catch {
            throw ConfigurationFileError(path: path, reason: error.description)
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
