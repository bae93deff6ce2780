import Foundation
import FreeDesktop
@testable import IslandBridge
import Testing

/// The bridge reads the desktop entries apps claim from the XDG data directories, which any
/// program of the user's can write: only a regular file of at most `DesktopFile.maximumBytes`
/// is read, a link to one followed (a Flatpak's exported entries are links), anything else
/// passed over for the next directory's, and never opened for reading.
@Suite struct InstalledDesktopEntriesTests {
    static let entry = "[Desktop Entry]\nType=Application\nName=Player\nExec=player\n"

    /// Runs `body` with two data directories, `home` (XDG_DATA_HOME, searched first) and `system`.
    static func withDataDirectories(_ body: (_ home: String, _ system: String, _ environment: [String: String]) throws -> Void) throws {
        var template = Array("/tmp/bridge-entries.XXXXXX".utf8CString)
        let root = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: root) }
        let home = root + "/home/applications", system = root + "/system/applications"
        for folder in [home, system] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try body(home, system, ["XDG_DATA_HOME": root + "/home", "XDG_DATA_DIRS": root + "/system", "HOME": root])
    }

    @Test func aRegularEntryIsRead() throws {
        try Self.withDataDirectories { home, _, environment in
            try Self.entry.write(toFile: home + "/org.example.Player.desktop", atomically: false, encoding: .utf8)
            var entries = InstalledDesktopEntries(environment: environment)
            #expect(entries.lookup("org.example.Player")?.name == "Player")
        }
    }

    @Test func aLinkToAnEntryIsFollowed() throws {
        try Self.withDataDirectories { home, system, environment in
            try Self.entry.write(toFile: system + "/exported", atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: home + "/org.example.Player.desktop", withDestinationPath: system + "/exported")
            var entries = InstalledDesktopEntries(environment: environment)
            #expect(entries.lookup("org.example.Player")?.name == "Player")
        }
    }

    /// A FIFO no one writes to, a link to an endless device, a file too large to be an entry:
    /// passed over (the lookup returns, with the next directory's entry), never read.
    @Test(arguments: ["fifo", "zero", "large"])
    func whatIsNoSmallRegularFileIsPassedOver(junk: String) throws {
        try Self.withDataDirectories { home, system, environment in
            let path = home + "/org.example.Player.desktop"
            switch junk {
            case "fifo": try #require(mkfifo(path, 0o600) == 0)
            case "zero": try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
            default:
                try #require(FileManager.default.createFile(atPath: path, contents: nil))
                try #require(truncate(path, off_t(2 << 30)) == 0)
            }
            try Self.entry.replacingOccurrences(of: "Name=Player", with: "Name=System player")
                .write(toFile: system + "/org.example.Player.desktop", atomically: false, encoding: .utf8)
            var entries = InstalledDesktopEntries(environment: environment)
            #expect(entries.lookup("org.example.Player")?.name == "System player")
        }
    }
}
