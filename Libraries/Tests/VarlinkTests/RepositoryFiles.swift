import Foundation

/// Files of this repository that Varlink's tests take as real-world input: Island's interfaces
/// (Protocol/) and the fuzz corpus. Read from the checkout, so that Varlink's tests need none
/// of Island's modules.
enum RepositoryFiles {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The names of the files in Protocol/ that hold an interface.
    static let interfaceFiles: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Protocol").path)) ?? []
        return names.filter { $0.hasSuffix(".varlink") }.sorted()
    }()

    static func interface(_ file: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("Protocol").appendingPathComponent(file), encoding: .utf8)
    }
}
