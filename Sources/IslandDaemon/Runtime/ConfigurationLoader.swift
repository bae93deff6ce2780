import Foundation
import IslandCore

/// Reads the configuration files of DESIGN.md's INI format: the main file, then the
/// `.conf` drop-ins of `<file>.d/` in file-name order. A missing main file is the same as an
/// empty one, so the daemon starts on its defaults with no configuration at all.
enum ConfigurationLoader {
    static func files(for mainFile: String) throws -> [(path: String, contents: String)] {
        var files: [(path: String, contents: String)] = []
        let fm = FileManager.default
        if fm.fileExists(atPath: mainFile) {
            files.append((mainFile, try String(contentsOfFile: mainFile, encoding: .utf8)))
        }
        let dropIns = mainFile + ".d"
        if let names = try? fm.contentsOfDirectory(atPath: dropIns) {
            for name in names.sorted() where name.hasSuffix(".conf") {
                let path = dropIns + "/" + name
                files.append((path, try String(contentsOfFile: path, encoding: .utf8)))
            }
        }
        return files
    }

    static func load(mainFile: String) throws -> IslandConfiguration {
        try IslandConfiguration.parse(files: files(for: mainFile))
    }
}
