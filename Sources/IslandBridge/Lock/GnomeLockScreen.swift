/// GNOME's own lock-screen privacy as islandd is told it (Admin `SetDesktopLockScreen`): no app
/// on the lock screen, or some apps private or secret.
///
/// GNOME keeps it in `org.gnome.desktop.notifications` (`show-in-lock-screen`, for every app)
/// and, per app, in the relocatable `org.gnome.desktop.notifications.application` under
/// `/org/gnome/desktop/notifications/application/<child>/` (`show-in-lock-screen`,
/// `details-in-lock-screen`; `application-id` names the app's desktop file). Only what the user
/// set is honoured: GNOME Shell writes every app that ever notified there, and the schema's
/// default for `details-in-lock-screen` is false, so defaults would make every such app private.
/// `dconf dump` prints exactly the values set, so that is what is read.
package struct GnomeLockScreen: Sendable, Hashable {
    /// At most this many apps in each level, as islandd takes them.
    package static let maximumApps = 1024
    /// `dconf dump`'s output is read up to this many bytes; a longer one is not taken.
    package static let maximumDumpBytes = 1 << 20
    /// The dconf directory dumped, whose writes are followed.
    package static let directory = "/org/gnome/desktop/notifications/"

    package var everyAppSecret = false
    /// App ids (desktop entry ids without `.desktop`), sorted.
    package var privateApps: [String] = []
    package var secretApps: [String] = []

    package init(everyAppSecret: Bool = false, privateApps: [String] = [], secretApps: [String] = []) {
        self.everyAppSecret = everyAppSecret
        self.privateApps = privateApps
        self.secretApps = secretApps
    }

    /// The levels in `dump`, `dconf dump`'s keyfile of `directory`: `[/]` for the directory's
    /// own keys, `[application/<child>]` for each app's. A child without an `application-id`
    /// names no app and is passed over, as is one whose id islandd would refuse; a value that
    /// is no boolean counts as not set.
    package static func parse(dump: String) -> GnomeLockScreen {
        var section: String?
        var sections: [String: [String: String]] = [:]
        for rawLine in dump.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.trimmingSpaces
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
            } else if let section, let equals = line.firstIndex(of: "=") {
                sections[section, default: [:]][String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        var levels = GnomeLockScreen(everyAppSecret: sections["/"]?["show-in-lock-screen"] == "false")
        for (name, keys) in sections where name.hasPrefix("application/") {
            guard let id = keys["application-id"].flatMap(appID(fromVariant:)) else { continue }
            if keys["show-in-lock-screen"] == "false" {
                levels.secretApps.append(id)
            } else if keys["details-in-lock-screen"] == "false" {
                levels.privateApps.append(id)
            }
        }
        levels.privateApps = Array(Set(levels.privateApps).subtracting(levels.secretApps).sorted().prefix(maximumApps))
        levels.secretApps = Array(Set(levels.secretApps).sorted().prefix(maximumApps))
        return levels
    }

    /// The app id in a GVariant string such as `'org.gnome.Nautilus.desktop'`: the desktop
    /// entry id without `.desktop`, as islandd names apps; nil unless it is one islandd takes
    /// (ASCII letters, digits, `.`, `_`, `-`; 1 to 255 bytes). Quotes inside are none of those,
    /// so a quoted string with any escape in it is refused whole.
    static func appID(fromVariant variant: String) -> String? {
        guard variant.count >= 2, let quote = variant.first, quote == "'" || quote == "\"", variant.last == quote else { return nil }
        var id = Substring(variant.dropFirst().dropLast())
        if id.hasSuffix(".desktop") { id = id.dropLast(".desktop".count) }
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= 255, bytes.allSatisfy(isAppIDByte) else { return nil }
        return String(id)
    }

    private static func isAppIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Whether a dconf write of `changes` under `prefix` may have changed a key of `directory`:
    /// one inside it, or a directory above it (a reset or a load of a whole tree).
    package static func touchesDirectory(prefix: String, changes: [String]) -> Bool {
        changes.contains { change in
            let path = prefix + change
            return path.hasPrefix(directory) || (path.hasSuffix("/") && directory.hasPrefix(path))
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var line = self
        while line.first == " " || line.first == "\t" || line.first == "\r" { line = line.dropFirst() }
        while line.last == " " || line.last == "\t" || line.last == "\r" { line = line.dropLast() }
        return line
    }
}
