import OrderedCollections
public import IslandJSON

/// The app an activity is about (Spotify, Dolphin), as presenters show it inside the bridge's
/// card: the bridge's layouts draw `attributes.app.name` and `attributes.app.icon`.
///
/// Every source claims its app with a string any peer on the bus can send (an MPRIS
/// `DesktopEntry`, a notification's `desktop-entry` hint, a job's desktop entry). A claim is
/// only believed as far as it names an installed desktop entry: the name and icon then come
/// from that entry, never from the peer. Otherwise the peer's own label is shown as what it
/// is, a label, cut short, with a generic icon unless it sent a plain icon name. The card's
/// heading stays the bridge's own (the daemon's label of the producer), so no peer can make
/// the daemon vouch for it.
public struct SourceApp: Sendable, Hashable {
    public var name: String
    /// A freedesktop icon name (never a path: presenters look names up in the icon theme).
    public var icon: String
    /// The installed desktop entry's id, when the claim named one.
    public var desktopEntry: String?

    public init(name: String, icon: String, desktopEntry: String? = nil) {
        self.name = name
        self.icon = icon
        self.desktopEntry = desktopEntry
    }

    public static let maximumNameBytes = 64

    /// Resolves a claim: `entry` (a desktop entry id, with or without `.desktop`) is looked up
    /// with `lookup`; failing that, `label` and `iconName` as sent; failing those, `fallback`.
    public static func resolve(entry: String?, label: String?, iconName: String?, fallback: SourceApp,
                               lookup: (String) -> DesktopEntry?) -> SourceApp {
        if let id = entry.flatMap(DesktopEntry.validID), let installed = lookup(id) {
            return SourceApp(name: BoundedText.line(installed.name ?? label ?? id, maximumBytes: maximumNameBytes),
                             icon: installed.icon.flatMap(iconNameOrNil) ?? fallback.icon, desktopEntry: id)
        }
        let name = label.map { BoundedText.line($0, maximumBytes: maximumNameBytes) }.flatMap { $0.isEmpty ? nil : $0 }
        return SourceApp(name: name ?? fallback.name, icon: iconName.flatMap(iconNameOrNil) ?? fallback.icon)
    }

    /// `name` if it is an icon name presenters may look up: letters, digits, `-`, `_`, `.`,
    /// not starting with a dot, at most 64 bytes. Paths and URLs (`file:///…`) are not.
    public static func iconNameOrNil(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix("."),
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) })
        else { return nil }
        return name
    }

    /// `{"name": …, "icon": …, "desktopEntry": …}`.
    public var json: JSON {
        var object: JSONObject = ["name": .string(name), "icon": .string(icon)]
        if let desktopEntry { object["desktopEntry"] = .string(desktopEntry) }
        return .object(object)
    }
}

/// What the bridge reads of an installed desktop entry: its `Name=` and `Icon=`.
public struct DesktopEntry: Sendable, Hashable {
    public var name: String?
    public var icon: String?

    public init(name: String?, icon: String?) {
        self.name = name
        self.icon = icon
    }

    /// A desktop file id as a peer may claim it: letters, digits, `.`, `-`, `_` (no `/`, so
    /// never a path), at most 255 bytes; a trailing `.desktop` is dropped. Nil otherwise.
    public static func validID(_ claim: String) -> String? {
        let id = claim.hasSuffix(".desktop") ? String(claim.dropLast(".desktop".count)) : claim
        guard !id.isEmpty, id.utf8.count <= 255, !id.hasPrefix("."),
              id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) })
        else { return nil }
        return id
    }

    /// The `[Desktop Entry]` group of a desktop file: nil when it has none, or says
    /// `Hidden=true` (a deleted entry).
    public init?(contents: String) {
        var inEntry = false
        var found = false
        var values: [String: String] = [:]
        for rawLine in contents.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let line = rawLine.drop(while: \.isWhitespace)
            if line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inEntry = line.hasPrefix("[Desktop Entry]")
                found = found || inEntry
                continue
            }
            guard inEntry, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingSuffix(while: \.isWhitespace)
            guard key == "Name" || key == "Icon" || key == "Hidden", values[String(key)] == nil else { continue }
            values[String(key)] = String(line[line.index(after: equals)...].drop(while: \.isWhitespace).trimmingSuffix(while: \.isWhitespace))
        }
        guard found, values["Hidden"] != "true" else { return nil }
        name = values["Name"].map { BoundedText.line($0, maximumBytes: SourceApp.maximumNameBytes) }
        icon = values["Icon"]
    }
}

extension Substring {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var result = self
        while let last = result.last, predicate(last) { result.removeLast() }
        return result
    }
}
