import Foundation
import IslandCore
import SmallFiles

/// Reads the configuration files, in systemd's INI format: the main file, then the
/// `.conf` drop-ins of `<file>.d/` in file-name order. A missing main file is the same as an
/// empty one, so the daemon starts on its defaults with no configuration at all.
enum ConfigurationLoader {
    static func files(for mainFile: String) throws -> [(path: String, contents: String)] {
        var files: [(path: String, contents: String)] = []
        var total = 0
        func add(_ path: String) throws(ConfigurationFileError) {
            let contents = try read(path)
            // Bounded together too: a flood of drop-ins (links to one large file) is not a
            // configuration to hold in memory either.
            total += contents.utf8.count
            guard total <= maximumTotalSize else {
                throw ConfigurationFileError(path: path, reason: "the configuration files together are larger than \(maximumTotalSize) bytes")
            }
            files.append((path, contents))
        }
        // Missing is no configuration; anything else there (a link loop, a FIFO, a folder) is
        // read, and refused with its reason.
        var info = stat()
        if stat(mainFile, &info) == 0 || errno != ENOENT {
            try add(mainFile)
        }
        let dropIns = mainFile + ".d"
        for name in try dropInNames(dropIns) {
            try add(dropIns + "/" + name)
        }
        return files
    }

    /// The `.conf` names in `folder`, sorted; none when there is no folder. Read as bytes: a name
    /// that is not UTF-8 came back from FileManager with U+FFFD in it, so the file was then
    /// "No such file or directory" and the daemon refused to start saying so.
    static func dropInNames(_ folder: String) throws(ConfigurationFileError) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            guard bytes.count > 5, bytes.suffix(5).elementsEqual(".conf".utf8) else { continue }
            guard let name = String(validating: bytes, as: UTF8.self) else {
                let shown = String(decoding: bytes, as: UTF8.self)
                throw ConfigurationFileError(path: folder + "/" + shown, reason: "the file name is not UTF-8; rename the file")
            }
            names.append(name)
        }
        return names.sorted()
    }

    /// Configuration is a few lines of INI; anything this large is a mistake, not a file to hold
    /// in memory.
    static let maximumFileSize = 1 << 20
    /// The main file and every drop-in together.
    static let maximumTotalSize = 4 << 20

    /// A file's text. Any program of the user's can write the user's configuration folder, as
    /// it can the data directories: only a regular file is read (`readRegularFile`), so a FIFO,
    /// a device, a socket or a folder there is refused by name and never opened for reading —
    /// a FIFO no one writes to once stalled the daemon's start, and a reload for good. The null
    /// device, whatever its name, is the empty configuration (`--config /dev/null`, or a
    /// drop-in linked to it).
    static func read(_ path: String) throws(ConfigurationFileError) -> String {
        do {
            return try readRegularText(path, limit: maximumFileSize, followingLinks: true)
        } catch SmallFileError.notRegularFile where isNullDevice(path) {
            return ""
        } catch {
            throw ConfigurationFileError(path: path, reason: error.description)
        }
    }

    /// Whether `path` is the character device `/dev/null` is, by its device number: reading
    /// it opens nothing that waits or never ends.
    private static func isNullDevice(_ path: String) -> Bool {
        var file = stat()
        var null = stat()
        guard stat(path, &file) == 0, stat("/dev/null", &null) == 0 else { return false }
        return file.st_mode & S_IFMT == S_IFCHR && null.st_mode & S_IFMT == S_IFCHR && file.st_rdev == null.st_rdev
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
